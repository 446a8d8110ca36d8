// A queue's jobs by state: tabs for waiting/delayed/active/completed/failed/cancelled/expired (the WAI-ARIA tabs
// pattern: arrow keys move between tabs), a table of one page of jobs with the columns that
// matter for the state (../job-columns.ts) and the actions each state allows, bulk actions on the
// finished states, and "Load more" following the API's cursor. The queue opens on the first tab
// with jobs. A group filter (the search form) narrows every tab to one group. A refresh re-reads
// as many jobs as are shown.
import type { Job, JobPage, JobState, QueueCounts } from '../../client';
import { type QueueContext, CANCELLABLE, act, cancelJobControl } from '../actions';
import { Confirmer } from '../confirm';
import { dataTable, h, render } from '../dom';
import { formatCount } from '../format';
import { columnsOf } from '../job-columns';
import { BulkActions } from './bulk-actions';
import { MAX_PAGE, PAGE, Pager } from './pager';

const STATES: { state: JobState; label: string }[] = [
  { state: 'waiting', label: 'Waiting' },
  { state: 'delayed', label: 'Delayed' },
  { state: 'active', label: 'Active' },
  { state: 'completed', label: 'Completed' },
  { state: 'failed', label: 'Failed' },
  { state: 'cancelled', label: 'Cancelled' },
  { state: 'expired', label: 'Expired' },
];

/**
 * Which tab a queue opens on: the first of these holding jobs (waiting when none does), so that a
 * queue whose only jobs failed opens on them. Jobs still to run first, then failures.
 */
const OPEN_ORDER: JobState[] = ['waiting', 'active', 'delayed', 'failed', 'completed', 'cancelled', 'expired'];

/** A page of jobs as the pager holds it. */
const itemsOf = ({ jobs, cursor }: JobPage<unknown>) => ({ items: jobs, cursor });

export class JobsPanel {
  readonly element: HTMLElement;
  private readonly filter = h('div', { class: 'filter-row' });
  private readonly tabs = h('div', { role: 'tablist', 'aria-label': 'Jobs by state', class: 'tabs' });
  private readonly body = h('div', { role: 'tabpanel', id: 'jobs-panel', tabindex: '-1', class: 'tab-panel' });
  private state: JobState = 'waiting';
  private group: string | null = null;
  private readonly pager: Pager<Job>;
  private counts: QueueCounts | null = null;
  private readonly confirmer = new Confirmer(() => this.draw());
  private readonly bulk: BulkActions;

  constructor(private readonly ctx: QueueContext) {
    this.bulk = new BulkActions(ctx, this.confirmer);
    this.pager = new Pager(ctx, (cursor) => ctx.queue.listJobs({ ...this.shown(), limit: PAGE, cursor }).then(itemsOf), () => this.draw());
    this.element = h('section', { class: 'card', 'aria-labelledby': 'jobs-heading' }, h('h2', { id: 'jobs-heading' }, 'Jobs'), this.filter, this.tabs, this.body);
  }

  /**
   * The first page of the current tab, as long as what is shown now. With a group filter, the
   * API filters each page it reads (except waiting jobs, read from the group itself): read the
   * largest page, so that a group's jobs are not spread over many short pages.
   */
  request(): PromiseLike<JobPage<unknown>> {
    const limit = this.group === null ? this.pager.refreshLimit : MAX_PAGE;
    return this.ctx.queue.listJobs({ ...this.shown(), limit });
  }

  /** Before the first read of jobs: opens on the first tab of OPEN_ORDER with jobs in `counts`. */
  openOn(counts: QueueCounts): void {
    this.state = OPEN_ORDER.find((state) => counts[state] > 0) ?? 'waiting';
  }

  /** The tab's state and the group filter, as a listing takes them. */
  private shown(): { state: JobState; group?: string } {
    return { state: this.state, ...(this.group === null ? {} : { group: this.group }) };
  }

  show(page: JobPage<unknown>, counts: QueueCounts): void {
    this.pager.show(itemsOf(page));
    this.counts = counts;
    this.draw();
  }

  /** Shows one group's jobs in every tab (null: every group's). */
  async showGroup(group: string | null): Promise<void> {
    this.group = group;
    this.pager.clear();
    this.draw();
    await this.ctx.refresh();
  }

  private async select(state: JobState, focus: boolean): Promise<void> {
    if (state === this.state) return;
    this.state = state;
    this.pager.clear();
    this.draw();
    if (focus) this.tabs.querySelector<HTMLElement>(`[data-state="${state}"]`)?.focus();
    await this.ctx.refresh();
  }

  private onTabKey(event: KeyboardEvent): void {
    const index = STATES.findIndex((s) => s.state === this.state);
    const moves: Record<string, number> = { ArrowRight: index + 1, ArrowLeft: index - 1, Home: 0, End: STATES.length - 1 };
    const target = moves[event.key];
    if (target === undefined) return;
    event.preventDefault();
    const next = STATES[(target + STATES.length) % STATES.length]!;
    void this.select(next.state, true);
  }

  private draw(): void {
    render(
      this.filter,
      this.group === null
        ? null
        : h(
            'p',
            { class: 'filter', 'data-filter-group': this.group },
            'Jobs of group ',
            h('strong', { class: 'group-name' }, this.group),
            h('button', { type: 'button', class: 'small', 'data-action': 'clear-group', 'data-focus-key': 'clear-group', onclick: () => void this.showGroup(null) }, 'Show every group'),
          ),
    );
    // Counts are the whole queue's: with a group filter they would not match the lists.
    const counts = this.group === null ? this.counts : null;
    render(
      this.tabs,
      ...STATES.map(({ state, label }) => {
        const selected = state === this.state;
        return h(
          'button',
          {
            type: 'button',
            role: 'tab',
            id: `tab-${state}`,
            'data-state': state,
            'data-focus-key': `tab:${state}`,
            'aria-selected': String(selected),
            'aria-controls': 'jobs-panel',
            tabindex: selected ? '0' : '-1',
            onclick: () => void this.select(state, false),
            onkeydown: (event: Event) => this.onTabKey(event as KeyboardEvent),
          },
          label,
          counts ? h('span', { class: 'tab-count' }, formatCount(counts[state])) : null,
        );
      }),
    );
    this.body.setAttribute('aria-labelledby', `tab-${this.state}`);
    const { label } = STATES.find((s) => s.state === this.state)!;
    // Bulk actions act on the whole queue: not offered on one group's list.
    const bulk = this.group === null && this.counts ? this.bulk.bar(this.state, this.counts[this.state]) : null;
    if (this.pager.empty) {
      render(this.body, bulk, h('p', { class: 'muted empty-row' }, `No ${label.toLowerCase()} jobs${this.group === null ? '' : ' in this group'}.`));
      return;
    }
    const columns = columnsOf(this.state);
    render(
      this.body,
      bulk,
      dataTable(
        'stack jobs-table',
        `${label} jobs`,
        [...columns.map((c) => c.label), 'Actions'],
        this.pager.items.map((job) =>
          h(
            'tr',
            { 'data-job': job.id },
            ...columns.map((c) => h('td', { 'data-label': c.label }, c.cell(job))),
            h('td', { 'data-label': 'Actions', class: 'actions' }, ...this.actions(job)),
          ),
        ),
      ),
      this.pager.moreButton('Load more jobs', 'jobs:more'),
    );
  }

  private actions(job: Job): HTMLElement[] {
    const { queue } = this.ctx;
    const buttons: HTMLElement[] = [];
    const button = (kind: string, label: string, work: () => Promise<string>) =>
      h('button', {
        type: 'button',
        class: 'small',
        'data-action': kind,
        'data-focus-key': `${kind}:${job.id}`,
        'aria-label': `${label} job ${job.id}`,
        onclick: (e: Event) => void act(this.ctx, e.currentTarget as HTMLButtonElement, work),
      }, label);
    if (job.state === 'failed') buttons.push(button('retry', 'Retry', async () => (await queue.retryJob(job.id), `Job ${job.id} queued to run again.`)));
    if (job.state === 'delayed') buttons.push(button('promote', 'Promote', async () => (await queue.promoteJob(job.id), `Job ${job.id} promoted: it waits in its group now.`)));
    if (CANCELLABLE.has(job.state)) buttons.push(cancelJobControl(this.ctx, this.confirmer, job, { key: `cancel:${job.id}`, label: 'Cancel', small: true }));
    if (job.state === 'active') return buttons; // an active job is cancelled, not removed
    buttons.push(
      this.confirmer.control({
        key: `remove:${job.id}`,
        action: 'remove',
        label: 'Remove',
        ariaLabel: `Remove job ${job.id}`,
        question: `Remove job ${job.id}? It cannot be undone.`,
        confirmLabel: 'Confirm remove',
        small: true,
        run: (b) => act(this.ctx, b, async () => (await queue.removeJob(job.id), `Job ${job.id} removed.`)),
      }),
    );
    return buttons;
  }
}
