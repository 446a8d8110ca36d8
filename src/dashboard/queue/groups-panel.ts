// A queue's groups: each with its state (ready, active, held = waiting for a backoff or the
// ordering window, paused), its waiting jobs, its active ones out of its concurrency ("2/3"),
// and pause/resume for that group alone (stop a poison group without stopping the queue). A
// group's name opens its own view (its limits). Paged with the API's cursor.
import type { GroupPage, GroupState, GroupSummary } from '../../client';
import { type QueueContext, pauseGroupButton } from '../actions';
import { stateBadge } from '../badges';
import { dataTable, h, render } from '../dom';
import { formatCount } from '../format';
import { groupLink } from '../links';
import { PAGE, Pager } from './pager';

const STATE_HINTS: Record<GroupState, string> = {
  ready: 'ready',
  active: 'active',
  held: 'held (waiting for a time)',
  paused: 'paused',
  idle: 'idle (no job; its limits are kept)',
};

/** "2/3": active jobs out of the group's concurrency. */
function activeOf({ active, concurrency }: Pick<GroupSummary, 'active' | 'concurrency'>): string {
  return `${formatCount(active)}/${formatCount(concurrency)}`;
}

/** A page of groups as the pager holds it. */
const itemsOf = ({ groups, cursor }: GroupPage) => ({ items: groups, cursor });

export class GroupsPanel {
  readonly element: HTMLElement;
  private readonly body = h('div', { class: 'panel-body', tabindex: '-1' });
  private readonly pager: Pager<GroupSummary>;

  constructor(private readonly ctx: QueueContext) {
    this.pager = new Pager(ctx, (cursor) => ctx.queue.groups({ limit: PAGE, cursor }).then(itemsOf), () => this.draw());
    this.element = h(
      'section',
      { class: 'card', 'aria-labelledby': 'groups-heading' },
      h('h2', { id: 'groups-heading' }, 'Groups'),
      h('p', { class: 'muted hint' }, 'Groups holding a waiting or active job. Each starts its jobs in order, up to its concurrency at a time (Active).'),
      this.body,
    );
  }

  request(): PromiseLike<GroupPage> {
    return this.ctx.queue.groups({ limit: this.pager.refreshLimit });
  }

  show(page: GroupPage): void {
    this.pager.show(itemsOf(page));
    this.draw();
  }

  private draw(): void {
    if (this.pager.empty) {
      render(this.body, h('p', { class: 'muted empty-row' }, 'No group has a waiting or active job.'));
      return;
    }
    render(
      this.body,
      dataTable('stack groups-table', 'Groups', ['Group', 'State', 'Waiting', 'Active', 'Actions'], this.pager.items.map((group) => this.row(group))),
      this.pager.moreButton('Load more groups', 'groups:more'),
    );
  }

  private row(group: GroupSummary): HTMLTableRowElement {
    return h(
      'tr',
      { 'data-group': group.group },
      h('td', { 'data-label': 'Group' }, groupLink(this.ctx.queue.name, group.group, `open:${group.group}`)),
      h('td', { 'data-label': 'State', title: STATE_HINTS[group.state] }, stateBadge(group.state)),
      h('td', { 'data-label': 'Waiting' }, formatCount(group.waiting)),
      h('td', { 'data-label': 'Active' }, activeOf(group)),
      h('td', { 'data-label': 'Actions', class: 'actions' }, pauseGroupButton(this.ctx, group.group, group.state === 'paused', { small: true, focusKey: `group:${group.group}` })),
    );
  }
}
