// One group's own view (#/queue/<name>/group/<group>): its state with pause/resume, its active
// jobs out of its concurrency, its limits and where they come from (its own, or the queue's
// groupConcurrency and groupRateLimit), the form that sets and clears them, and its jobs in the
// order they start. A group without jobs is `idle` while it has limits, and unknown to the API
// (404) without them: the view says so and keeps refreshing, and limits can still be set. A
// deleted queue stops the refreshes.
import type { GroupDetail, GroupqClient, QueueInfo } from '../client';
import { GroupqError } from '../client';
import type { QueueContext } from './actions';
import { dataTable, fieldList, h, render } from './dom';
import { formatRate } from './flow-format';
import { GroupLimitsForm } from './group-limits-form';
import { pauseGroupButton, stateBadge } from './groups-panel';
import { GROUP_JOB_COLUMNS } from './job-columns';
import { queueHref } from './queues-view';

/** GET /v1/queues/{queue}/groups/{group}. */

function fields(group: GroupDetail, { config }: QueueInfo): HTMLElement {
  const own = group.limits ?? {};
  const from = (mine: boolean, queueField: string) => h('span', { class: 'muted' }, mine ? ' (this group\'s limit)' : ` (the queue's ${queueField})`);
  const rateLimit = own.rateLimit === undefined ? config.groupRateLimit : own.rateLimit;
  return fieldList([
    ['State', stateBadge(group.state)],
    ['Active', `${group.active} / ${group.concurrency}`],
    ['Concurrency', String(group.concurrency), from(own.concurrency !== undefined, 'groupConcurrency')],
    ['Rate limit', formatRate(rateLimit), from(own.rateLimit !== undefined, 'groupRateLimit')],
  ]);
}

export class GroupView {
  readonly element: HTMLElement;
  /** The queue no longer exists: nothing left to refresh. */
  gone = false;
  private readonly head = h('div', { class: 'view-head' });
  private readonly summary = h('section', { class: 'card', 'aria-label': 'Group' });
  private readonly jobs = h('section', { class: 'card', 'aria-labelledby': 'group-jobs-heading' });
  private readonly parts: HTMLElement;
  private readonly limits: GroupLimitsForm;
  private readonly ctx: QueueContext;
  private generation = 0;

  constructor(
    client: GroupqClient,
    readonly queueName: string,
    readonly group: string,
    fail: (error: unknown) => void,
  ) {
    this.ctx = { client, queue: client.queue(queueName), refresh: () => this.refresh().then(() => undefined), fail };
    this.limits = new GroupLimitsForm(this.ctx, group);
    this.parts = h('div', { class: 'job-parts' }, this.summary, this.limits.element, this.jobs);
    this.parts.hidden = true;
    this.element = h('div', { class: 'group-view' }, this.head, this.parts);
    this.drawHead(null);
  }

  async refresh(): Promise<boolean> {
    if (this.gone) return true;
    const generation = ++this.generation;
    const { queue } = this.ctx;
    try {
      const [group, info] = await Promise.all([
        queue.group(this.group).catch((error: unknown) => {
          if (error instanceof GroupqError && error.code === 'GROUP_NOT_FOUND') return null;
          throw error;
        }),
        queue.get(),
      ]);
      if (generation !== this.generation || this.gone) return true;
      this.draw(group, info);
      return true;
    } catch (error) {
      if (generation !== this.generation) return true;
      if (error instanceof GroupqError && error.code === 'QUEUE_NOT_FOUND') {
        this.gone = true;
        this.parts.hidden = true;
        this.drawHead(null, h('p', { class: 'notice', 'data-gone': 'queue' }, `Queue ${this.queueName} no longer exists: it was deleted. This page stopped refreshing.`));
        return true;
      }
      this.ctx.fail(error);
      return false;
    }
  }

  private draw(group: GroupDetail | null, info: QueueInfo): void {
    this.drawHead(group);
    const queueDefault = { concurrency: info.config.groupConcurrency, rateLimit: info.config.groupRateLimit };
    this.limits.show(group?.limits ?? null, queueDefault);
    this.parts.hidden = false;
    if (group === null) {
      render(
        this.summary,
        h('p', { class: 'notice', 'data-notice': 'no-group' }, `Group ${this.group} has no waiting or active job and no limits of its own. Limits set here are kept while it has no jobs.`),
      );
      render(this.jobs);
      this.jobs.hidden = true;
      return;
    }
    render(this.summary, fields(group, info));
    this.jobs.hidden = false;
    render(
      this.jobs,
      h('h2', { id: 'group-jobs-heading' }, 'Jobs, in the order they start'),
      group.jobs.length === 0
        ? h('p', { class: 'muted empty-row' }, 'No waiting or active job.')
        : dataTable(
            'stack jobs-table',
            `Jobs of group ${group.group}`,
            GROUP_JOB_COLUMNS.map((c) => c.label),
            group.jobs.map((job) => h('tr', { 'data-job': job.id }, ...GROUP_JOB_COLUMNS.map((c) => h('td', { 'data-label': c.label }, c.cell(job))))),
          ),
    );
  }

  private drawHead(group: GroupDetail | null, ...extra: (Node | null)[]): void {
    render(
      this.head,
      h('a', { class: 'back', href: queueHref(this.queueName), 'data-focus-key': 'back' }, `← Queue ${this.queueName}`),
      h('div', { class: 'title-row' }, h('h1', { tabindex: '-1', 'data-focus-key': 'title' }, 'Group ', h('span', { class: 'group-name' }, this.group))),
      group ? h('div', { class: 'head-actions' }, pauseGroupButton(this.ctx, this.group, group.state === 'paused', { focusKey: 'group:pause' })) : null,
      ...extra,
    );
  }
}
