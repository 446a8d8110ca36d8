// A queue's groups: each with its state (ready, active, held = waiting for a backoff or the
// ordering window, paused), its waiting jobs, its active ones out of its concurrency ("2/3"),
// and pause/resume for that group alone (stop a poison group without stopping the queue). A
// group's name opens its own view (its limits). Paged with the API's cursor.
import type { GroupPage, GroupState, GroupSummary } from '../client';
import { type QueueContext, act } from './actions';
import { dataTable, h, render } from './dom';
import { formatCount } from './format';
import { groupLink } from './job-columns';

const PAGE = 25;
const MAX_PAGE = 1000;

const STATE_HINTS: Record<GroupState, string> = {
  ready: 'ready',
  active: 'active',
  held: 'held (waiting for a time)',
  paused: 'paused',
  idle: 'idle (no job; its limits are kept)',
};

export function stateBadge(state: string): HTMLElement {
  return h('span', { class: `badge badge-${state}` }, state);
}

/** "2/3": active jobs out of the group's concurrency. */
function activeOf({ active, concurrency }: Pick<GroupSummary, 'active' | 'concurrency'>): string {
  return `${formatCount(active)}/${formatCount(concurrency)}`;
}

/** Pause or Resume for one group, in the groups list (`small`) and in the group's own view. */
export function pauseGroupButton(ctx: QueueContext, group: string, paused: boolean, { small = false, focusKey }: { small?: boolean; focusKey: string }): HTMLButtonElement {
  const label = paused ? 'Resume' : 'Pause';
  return h(
    'button',
    {
      type: 'button',
      class: small ? 'small' : '',
      'data-action': paused ? 'resume-group' : 'pause-group',
      'data-focus-key': focusKey,
      'aria-label': `${label} group ${group}`,
      onclick: (e: Event) =>
        void act(ctx, e.currentTarget as HTMLButtonElement, async () => {
          if (paused) await ctx.queue.resumeGroup(group);
          else await ctx.queue.pauseGroup(group);
          return `Group ${group} ${paused ? 'resumed' : 'paused'}.`;
        }),
    },
    label,
  );
}

export class GroupsPanel {
  readonly element: HTMLElement;
  private readonly body = h('div', { class: 'panel-body', tabindex: '-1' });
  private groups: GroupSummary[] = [];
  private cursor: string | null = null;

  constructor(private readonly ctx: QueueContext) {
    this.element = h(
      'section',
      { class: 'card', 'aria-labelledby': 'groups-heading' },
      h('h2', { id: 'groups-heading' }, 'Groups'),
      h('p', { class: 'muted hint' }, 'Groups holding a waiting or active job. Each starts its jobs in order, up to its concurrency at a time (Active).'),
      this.body,
    );
  }

  request(): PromiseLike<GroupPage> {
    return this.ctx.queue.groups({ limit: Math.min(MAX_PAGE, Math.max(PAGE, this.groups.length)) });
  }

  show(page: GroupPage): void {
    this.groups = page.groups;
    this.cursor = page.cursor;
    this.draw();
  }

  private async loadMore(button: HTMLButtonElement): Promise<void> {
    if (this.cursor === null) return;
    button.setAttribute('aria-disabled', 'true');
    try {
      const page = await this.ctx.queue.groups({ limit: PAGE, cursor: this.cursor });
      this.groups = [...this.groups, ...page.groups];
      this.cursor = page.cursor;
      this.draw();
    } catch (error) {
      this.ctx.fail(error);
    } finally {
      button.removeAttribute('aria-disabled');
    }
  }

  private draw(): void {
    // A page of the hash walk may hold none and still have more after it (docs/http-api.md#paging).
    if (this.groups.length === 0 && this.cursor === null) {
      render(this.body, h('p', { class: 'muted empty-row' }, 'No group has a waiting or active job.'));
      return;
    }
    render(
      this.body,
      dataTable('stack groups-table', 'Groups', ['Group', 'State', 'Waiting', 'Active', 'Actions'], this.groups.map((group) => this.row(group))),
      this.cursor === null
        ? null
        : h('button', { type: 'button', class: 'load-more', 'data-focus-key': 'groups:more', onclick: (e: Event) => void this.loadMore(e.currentTarget as HTMLButtonElement) }, 'Load more groups'),
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
