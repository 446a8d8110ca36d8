// One job's own view (#/queue/<name>/job/<id>): its state, group (a link to the group's view),
// priority and debounce key when it has them, its times, progress and lease expiry while active,
// its full data, result and error, its attempt history and outcome callback when the API has them
// (job-records.ts), and the actions its state allows. A job or queue that no longer exists is
// said so once, and the view stops refreshing.
import type { GroupqClient } from '../client';
import { GroupqError } from '../client';
import { type QueueContext, CANCELLABLE, act, cancelJobControl } from './actions';
import { Confirmer } from './confirm';
import { fieldList, h, render } from './dom';
import { flowFields } from './flow-format';
import { formatWhen } from './format';
import { groupLink } from './job-columns';
import { type JobDetail, callbackPart, historyPart } from './job-records';
import { queueHref } from './queues-view';
import { announceAndGo } from './status';

const pretty = (value: unknown) => JSON.stringify(value, null, 2) ?? 'null';

function part(id: string, title: string, content: Node): HTMLElement {
  return h('section', { class: 'detail-part', 'aria-labelledby': id, 'data-part': id }, h('h2', { id }, title), content);
}

function fields(job: JobDetail): HTMLElement {
  const rows: [string, string | Node][] = [
    ['State', h('span', { class: `badge badge-${job.state}`, 'data-job-state': job.state }, job.state)],
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

export class JobView {
  readonly element: HTMLElement;
  /** The job or its queue no longer exists: nothing left to refresh. */
  gone = false;
  private readonly head = h('div', { class: 'view-head' });
  private readonly body = h('div', { class: 'job-parts' });
  private readonly ctx: QueueContext;
  private readonly confirmer = new Confirmer(() => this.draw());
  private job: JobDetail | null = null;
  private generation = 0;

  constructor(
    client: GroupqClient,
    readonly queueName: string,
    readonly id: string,
    fail: (error: unknown) => void,
  ) {
    this.ctx = { client, queue: client.queue(queueName), refresh: () => this.refresh().then(() => undefined), fail };
    this.element = h('div', { class: 'job-view' }, this.head, this.body);
    this.drawHead(null);
  }

  async refresh(): Promise<boolean> {
    if (this.gone) return true;
    const generation = ++this.generation;
    try {
      const job = (await this.ctx.queue.getJob(this.id)) as JobDetail;
      if (generation !== this.generation || this.gone) return true;
      this.job = job;
      this.draw();
      return true;
    } catch (error) {
      if (generation !== this.generation) return true;
      const code = error instanceof GroupqError ? error.code : '';
      if (code === 'JOB_NOT_FOUND' || code === 'QUEUE_NOT_FOUND') {
        this.gone = true;
        this.job = null;
        this.drawHead(null);
        const what = code === 'JOB_NOT_FOUND' ? `No job with this id in ${this.queueName} (it may have been removed).` : `Queue ${this.queueName} no longer exists: it was deleted.`;
        render(this.body, h('p', { class: 'notice', 'data-gone': code }, what, ' This page stopped refreshing.'));
        return true;
      }
      this.ctx.fail(error);
      return false;
    }
  }

  private drawHead(job: JobDetail | null): void {
    render(
      this.head,
      h('a', { class: 'back', href: queueHref(this.queueName), 'data-focus-key': 'back' }, `← Queue ${this.queueName}`),
      h('div', { class: 'title-row' }, h('h1', { tabindex: '-1', 'data-focus-key': 'title' }, 'Job ', h('code', { class: 'id' }, this.id))),
      job ? h('div', { class: 'head-actions' }, ...this.actions(job)) : null,
    );
  }

  private draw(): void {
    const job = this.job;
    if (!job) return;
    this.drawHead(job);
    render(
      this.body,
      h('section', { class: 'card', 'aria-label': 'Job' }, fields(job)),
      job.progress === undefined ? null : part('job-progress', 'Progress', h('pre', {}, h('code', {}, pretty(job.progress)))),
      part('job-data', 'Data', h('pre', {}, h('code', {}, pretty(job.data)))),
      job.result === undefined && !job.resultTruncated
        ? null
        : part('job-result', 'Result', job.result === undefined ? h('p', { class: 'muted' }, 'Too large to keep.') : h('pre', {}, h('code', {}, pretty(job.result)))),
      job.error === undefined ? null : part('job-error', job.state === 'failed' ? 'Error' : 'Last error', h('pre', { class: 'error-text' }, job.error)),
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
