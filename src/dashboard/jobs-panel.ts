// A queue's jobs by state: tabs for waiting/delayed/active/completed/failed (the WAI-ARIA tabs
// pattern: arrow keys move between tabs), a table of one page of jobs (id, group, attempts,
// data, error, the instant that matters for the state) with the actions each state allows, and
// "Load more" following the API's cursor. A refresh re-reads as many jobs as are shown.
import type { Job, JobPage, JobState, QueueCounts } from '../client';
import { type QueueContext, act } from './actions';
import { dataTable, h, render } from './dom';
import { formatCount, formatWhen, previewJson } from './format';

const STATES: { state: JobState; label: string; when: string }[] = [
  { state: 'waiting', label: 'Waiting', when: 'Runs at' },
  { state: 'delayed', label: 'Delayed', when: 'Runs at' },
  { state: 'active', label: 'Active', when: 'Started' },
  { state: 'completed', label: 'Completed', when: 'Finished' },
  { state: 'failed', label: 'Failed', when: 'Finished' },
];

const PAGE = 25;
/** The API's largest page: a refresh re-reads at most this many jobs. */
const MAX_PAGE = 1000;
const CONFIRM_MS = 5000;

export class JobsPanel {
  readonly element: HTMLElement;
  private readonly tabs = h('div', { role: 'tablist', 'aria-label': 'Jobs by state', class: 'tabs' });
  private readonly body = h('div', { role: 'tabpanel', id: 'jobs-panel', tabindex: '-1', class: 'tab-panel' });
  private state: JobState = 'waiting';
  private jobs: Job[] = [];
  private cursor: string | null = null;
  private counts: QueueCounts | null = null;
  /** The job whose Remove was pressed once; a second press within CONFIRM_MS removes it. */
  private confirming: string | null = null;
  private confirmTimer: number | undefined;

  constructor(private readonly ctx: QueueContext) {
    this.element = h('section', { class: 'card', 'aria-labelledby': 'jobs-heading' }, h('h2', { id: 'jobs-heading' }, 'Jobs'), this.tabs, this.body);
  }

  /** The first page of the current tab, as long as what is shown now. */
  request(): PromiseLike<JobPage<unknown>> {
    const limit = Math.min(MAX_PAGE, Math.max(PAGE, this.jobs.length));
    return this.ctx.queue.listJobs({ state: this.state, limit });
  }

  show(page: JobPage<unknown>, counts: QueueCounts): void {
    this.jobs = page.jobs;
    this.cursor = page.cursor;
    this.counts = counts;
    this.draw();
  }

  private async select(state: JobState, focus: boolean): Promise<void> {
    if (state === this.state) return;
    this.state = state;
    this.jobs = [];
    this.cursor = null;
    this.draw();
    if (focus) this.tabs.querySelector<HTMLElement>(`[data-state="${state}"]`)?.focus();
    await this.ctx.refresh();
  }

  private async loadMore(button: HTMLButtonElement): Promise<void> {
    if (this.cursor === null) return;
    button.setAttribute('aria-disabled', 'true');
    try {
      const state = this.state;
      const page = await this.ctx.queue.listJobs({ state, limit: PAGE, cursor: this.cursor });
      if (state !== this.state) return;
      this.jobs = [...this.jobs, ...page.jobs];
      this.cursor = page.cursor;
      this.draw();
    } catch (error) {
      this.ctx.fail(error);
    } finally {
      button.removeAttribute('aria-disabled');
    }
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
          this.counts ? h('span', { class: 'tab-count' }, formatCount(this.counts[state])) : null,
        );
      }),
    );
    this.body.setAttribute('aria-labelledby', `tab-${this.state}`);
    const stateInfo = STATES.find((s) => s.state === this.state)!;
    if (this.jobs.length === 0) {
      render(this.body, h('p', { class: 'muted empty-row' }, `No ${stateInfo.label.toLowerCase()} jobs.`));
      return;
    }
    render(
      this.body,
      dataTable(
        'stack jobs-table',
        `${stateInfo.label} jobs`,
        ['Job', 'Group', 'Attempts', 'Data', 'Error', stateInfo.when, 'Actions'],
        this.jobs.map((job) => this.row(job, stateInfo.when)),
      ),
      this.cursor === null
        ? null
        : h('button', { type: 'button', class: 'load-more', 'data-focus-key': 'jobs:more', onclick: (e: Event) => void this.loadMore(e.currentTarget as HTMLButtonElement) }, 'Load more jobs'),
    );
  }

  private row(job: Job, whenLabel: string): HTMLTableRowElement {
    const when = job.state === 'completed' || job.state === 'failed' ? job.finishedAt : job.state === 'active' ? job.startedAt : job.runAt;
    return h(
      'tr',
      { 'data-job': job.id },
      h('td', { 'data-label': 'Job' }, h('code', { class: 'id' }, job.id)),
      h('td', { 'data-label': 'Group' }, h('span', { class: 'group-name' }, job.group)),
      h('td', { 'data-label': 'Attempts' }, `${job.attempts} / ${job.maxAttempts}`),
      h('td', { 'data-label': 'Data' }, jsonCell(job.data, `data:${job.id}`)),
      h('td', { 'data-label': 'Error', class: job.error ? 'error-text' : 'muted' }, job.error ?? '—'),
      h('td', { 'data-label': whenLabel }, when === undefined ? h('span', { class: 'muted' }, job.state === 'waiting' ? 'when its turn comes' : '—') : formatWhen(when)),
      h('td', { 'data-label': 'Actions', class: 'actions' }, ...this.actions(job)),
    );
  }

  private actions(job: Job): HTMLButtonElement[] {
    const { queue } = this.ctx;
    const buttons: HTMLButtonElement[] = [];
    const button = (kind: string, label: string, work: () => Promise<string>, extra = '') =>
      h('button', {
        type: 'button',
        class: `small ${extra}`,
        'data-action': kind,
        'data-focus-key': `${kind}:${job.id}`,
        'aria-label': `${label} job ${job.id}`,
        onclick: (e: Event) => void act(this.ctx, e.currentTarget as HTMLButtonElement, work),
      }, label);
    if (job.state === 'failed') buttons.push(button('retry', 'Retry', async () => (await queue.retryJob(job.id), `Job ${job.id} queued to run again.`)));
    if (job.state === 'delayed') buttons.push(button('promote', 'Promote', async () => (await queue.promoteJob(job.id), `Job ${job.id} promoted: it waits in its group now.`)));
    if (job.state !== 'active') {
      const confirming = this.confirming === job.id;
      buttons.push(
        button('remove', confirming ? 'Confirm remove' : 'Remove', async () => {
          if (!confirming) {
            this.askConfirm(job.id);
            return `Press "Confirm remove" to remove job ${job.id}; it cannot be undone.`;
          }
          this.confirming = null;
          await queue.removeJob(job.id);
          return `Job ${job.id} removed.`;
        }, confirming ? 'danger' : ''),
      );
    }
    return buttons;
  }

  private askConfirm(id: string): void {
    this.confirming = id;
    window.clearTimeout(this.confirmTimer);
    this.confirmTimer = window.setTimeout(() => {
      this.confirming = null;
      this.draw();
    }, CONFIRM_MS);
  }
}

/** Short JSON inline; long JSON as a disclosure that opens to the whole value. */
export function jsonCell(value: unknown, key: string): HTMLElement {
  const { preview, full } = previewJson(value);
  if (full === null) return h('code', { class: 'json' }, preview);
  return h(
    'details',
    { class: 'json', 'data-open-key': key },
    h('summary', { 'data-focus-key': key }, h('code', {}, preview)),
    h('pre', {}, h('code', {}, full)),
  );
}
