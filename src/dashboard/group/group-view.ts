// One group's own view (#/queue/<name>/group/<group>): its state with pause/resume, its active
// jobs out of its concurrency, its limits and where they come from (its own, or the queue's
// groupConcurrency and groupRateLimit), the form that sets and clears them, and its jobs in the
// order they start. A group without jobs is `idle` while it has limits, and unknown to the API
// (404) without them: the view says so and keeps refreshing, and limits can still be set. A
// deleted queue stops the refreshes.
import type { GroupDetail, GroupqClient, QueueInfo } from '../../client';
import { GroupqError } from '../../client';
import { pauseGroupButton } from '../actions';
import { stateBadge } from '../badges';
import { type Child, dataTable, fieldList, h, render } from '../dom';
import { formatRate } from '../flow-format';
import { GROUP_JOB_COLUMNS } from '../job-columns';
import { queueEventsPath } from '../live/event-stream';
import { View } from '../view';
import { GroupLimitsForm } from './group-limits-form';

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

/** The group (null: the API does not know it) and its queue, whose defaults it may use. */
type Answer = [GroupDetail | null, QueueInfo];

export class GroupView extends View<Answer> {
  override readonly element: HTMLElement;
  private readonly summary = h('section', { class: 'card', 'aria-label': 'Group' });
  private readonly jobs = h('section', { class: 'card', 'aria-labelledby': 'group-jobs-heading' });
  private readonly parts: HTMLElement;
  private readonly limits: GroupLimitsForm;

  constructor(client: GroupqClient, queueName: string, readonly group: string, fail: (error: unknown) => void) {
    super(client, queueName, fail);
    this.limits = new GroupLimitsForm(this.ctx, group);
    this.parts = h('div', { class: 'job-parts' }, this.summary, this.limits.element, this.jobs);
    this.parts.hidden = true;
    this.element = h('div', { class: 'group-view' }, this.head, this.parts);
    this.drawHead(null);
  }

  /** The queue's stream narrowed to this group: its jobs' changes are the group's. */
  protected override liveStreams(): { paths: string[] } {
    return { paths: [queueEventsPath(this.queueName, this.group)] };
  }

  protected override read(): Promise<Answer> {
    const { queue } = this.ctx;
    return Promise.all([
      queue.group(this.group).catch((error: unknown) => {
        if (error instanceof GroupqError && error.code === 'GROUP_NOT_FOUND') return null;
        throw error;
      }),
      queue.get(),
    ]);
  }

  /** Only a deleted queue stops the refreshes: a group unknown to the API is drawn (`show`). */
  protected override showGone(code: string): boolean {
    if (code !== 'QUEUE_NOT_FOUND') return false;
    this.parts.hidden = true;
    this.drawHead(null, h('p', { class: 'notice', 'data-gone': 'queue' }, `Queue ${this.queueName} no longer exists: it was deleted. This page stopped refreshing.`));
    return true;
  }

  protected override show([group, info]: Answer): void {
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

  private drawHead(group: GroupDetail | null, ...extra: Child[]): void {
    const actions = group && [pauseGroupButton(this.ctx, this.group, group.state === 'paused', { focusKey: 'group:pause' })];
    this.drawHeadOf({ title: ['Group ', h('span', { class: 'group-name' }, this.group)], actions }, ...extra);
  }
}
