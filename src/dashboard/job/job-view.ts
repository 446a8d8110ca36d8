// One job's own view (#/queue/<name>/job/<id>): its state (a failed one: after all its attempts,
// or not retried), group (a link to the group's view), priority and debounce key when it has
// them, its times, progress and lease expiry while active, its full data, result and error, its
// attempt history and outcome callback when the API has them (job-records.ts), and the actions
// its state allows. While the job runs, its event stream makes the view read it again at each
// change. A job or queue that no longer exists is said so once, and the view stops refreshing.
import type { GroupqClient } from '../../client';
import { isFinished } from '../../protocol/constants';
import { CANCELLABLE, act, cancelJobControl } from '../actions';
import { Confirmer } from '../confirm';
import { type Child, fieldList, h, jsonText, render } from '../dom';
import { flowFields } from '../flow-format';
import { formatWhen } from '../format';
import { failedHow } from '../job-columns';
import { groupLink, queueHref } from '../links';
import { jobEventsPath } from '../live/event-stream';
import { announceAndGo } from '../status';
import { View } from '../view';
import { type JobDetail, callbackPart, detailPart, historyPart } from './job-records';

/** A value as indented JSON, wrapping between its parts (jsonText). */
const pretty = (value: unknown) => h('pre', { class: 'json' }, h('code', {}, ...jsonText(JSON.stringify(value, null, 2) ?? 'null')));

function fields(job: JobDetail): HTMLElement {
  const rows: [string, ...Child[]][] = [
    ['State', h('span', { class: `badge badge-${job.state}`, 'data-job-state': job.state }, job.state), ...(job.state === 'failed' ? [' ', failedHow(job)] : [])],
    ['Group', groupLink(job.queue, job.group, 'group')],
    ['Attempts', `${job.attempts} / ${job.maxAttempts}`],
    ...flowFields(job),
    ['Created', formatWhen(job.createdAt)],
  ];
  if (job.orderMs !== job.createdAt) rows.push(['Order', formatWhen(job.orderMs)]);
  if (job.runAt !== undefined) rows.push(['Runs at', formatWhen(job.runAt)]);
  if (job.expiresAt !== undefined) rows.push([job.state === 'expired' ? 'Deadline to start' : 'Expires unless started', formatWhen(job.expiresAt)]);
  if (job.startedAt !== undefined) rows.push(['Started', formatWhen(job.startedAt)]);
  if (job.leaseExpiresAt !== undefined) rows.push(['Lease expires', formatWhen(job.leaseExpiresAt)]);
  if (job.finishedAt !== undefined) rows.push(['Finished', formatWhen(job.finishedAt)]);
  return fieldList(rows);
}

export class JobView extends View<JobDetail> {
  override readonly element: HTMLElement;
  private readonly body = h('div', { class: 'job-parts' });
  private readonly confirmer = new Confirmer(() => this.draw());
  private job: JobDetail | null = null;
  /** One GET per re-read, and a job's progress is worth seeing soon. */
  override readonly liveGapMs = 250;

  constructor(client: GroupqClient, queueName: string, readonly id: string, fail: (error: unknown) => void) {
    super(client, queueName, fail);
    this.element = h('div', { class: 'job-view' }, this.head, this.body);
    this.drawHead(null);
  }

  protected override async read(): Promise<JobDetail> {
    return (await this.ctx.queue.getJob(this.id)) as JobDetail;
  }

  /**
   * The job's stream while it can still change by itself; a finished job's stream would only
   * repeat its end, so the view polls it (a retry by hand starts the stream again).
   */
  protected override liveStreams(): { paths: string[]; job: boolean } {
    const running = this.job !== null && !isFinished(this.job.state);
    return { paths: running ? [jobEventsPath(this.queueName, this.id)] : [], job: true };
  }

  protected override show(job: JobDetail): void {
    this.job = job;
    this.draw();
  }

  /** The job or its queue no longer exists. */
  protected override showGone(code: string): boolean {
    if (code !== 'JOB_NOT_FOUND' && code !== 'QUEUE_NOT_FOUND') return false;
    this.job = null;
    this.drawHead(null);
    const what = code === 'JOB_NOT_FOUND' ? `No job with this id in ${this.queueName} (it may have been removed).` : `Queue ${this.queueName} no longer exists: it was deleted.`;
    render(this.body, h('p', { class: 'notice', 'data-gone': code }, what, ' This page stopped refreshing.'));
    return true;
  }

  private drawHead(job: JobDetail | null): void {
    this.drawHeadOf({ title: ['Job ', h('code', { class: 'id' }, this.id)], actions: job && this.actions(job) });
  }

  private draw(): void {
    const job = this.job;
    if (!job) return;
    this.drawHead(job);
    render(
      this.body,
      h('section', { class: 'card', 'aria-label': 'Job' }, fields(job)),
      job.progress === undefined ? null : detailPart('job-progress', 'Progress', pretty(job.progress)),
      detailPart('job-data', 'Data', pretty(job.data)),
      job.result === undefined && !job.resultTruncated
        ? null
        : detailPart('job-result', 'Result', job.result === undefined ? h('p', { class: 'muted' }, 'Too large to keep.') : pretty(job.result)),
      job.error === undefined ? null : detailPart('job-error', job.state === 'failed' ? 'Error' : 'Last error', h('pre', { class: 'error-text' }, job.error)),
      historyPart(job),
      callbackPart(job),
    );
  }

  private actions(job: JobDetail): HTMLElement[] {
    const { queue } = this.ctx;
    const buttons: HTMLElement[] = [];
    const button = (kind: string, label: string, work: () => Promise<string>) =>
      h('button', { type: 'button', 'data-action': kind, 'data-focus-key': kind, onclick: (e: Event) => void act(this.ctx, e.currentTarget as HTMLButtonElement, work) }, label);
    if (job.state === 'failed') buttons.push(button('retry', 'Retry', async () => (await queue.retryJob(job.id), `Job ${job.id} queued to run again.`)));
    if (job.state === 'delayed') buttons.push(button('promote', 'Promote', async () => (await queue.promoteJob(job.id), `Job ${job.id} promoted.`)));
    if (CANCELLABLE.has(job.state)) buttons.push(cancelJobControl(this.ctx, this.confirmer, job, { key: 'cancel', label: 'Cancel job' }));
    if (job.state !== 'active') {
      buttons.push(
        this.confirmer.control({
          key: 'remove',
          action: 'remove',
          label: 'Remove',
          question: `Remove job ${job.id}? It cannot be undone.`,
          confirmLabel: 'Confirm remove',
          run: async () => {
            try {
              await queue.removeJob(job.id);
            } catch (error) {
              this.ctx.fail(error);
              return this.draw();
            }
            this.gone = true;
            announceAndGo(`Job ${job.id} removed.`, queueHref(this.queueName));
          },
        }),
      );
    }
    return buttons;
  }
}
