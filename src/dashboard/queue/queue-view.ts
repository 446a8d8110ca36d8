// One queue: its name, paused state, pause/resume and delete, its config in one line, counts (and
// its partitions' when it has several), the chart of its last hour, finding jobs by id or group,
// enqueueing a test job, then its jobs by state, groups and repeatable jobs, and its flow control
// to edit. A refresh reads everything in parallel and draws once all answered, so the parts never disagree; the queue's event stream
// makes it read again as jobs change. A queue that no longer exists is said so once, and the view
// stops refreshing (no request after that).
import type { GroupPage, GroupqClient, JobPage, MinuteMetrics, QueueInfo, Repeat } from '../../client';
import { act } from '../actions';
import { pausedBadge } from '../badges';
import { chartUnavailable, throughputChart } from '../chart';
import { Confirmer } from '../confirm';
import { countsList } from '../counts';
import { type Child, h, render } from '../dom';
import { BACKPRESSURE_LABELS, formatBatch, formatRate } from '../flow-format';
import { formatDuration } from '../format';
import { queueEventsPath } from '../live/event-stream';
import { describeError } from '../session';
import { announceAndGo } from '../status';
import { View } from '../view';
import { enqueueForm } from './enqueue-form';
import { FlowSettings } from './flow-settings';
import { GroupsPanel } from './groups-panel';
import { JobsPanel } from './jobs-panel';
import { type PartitionsAnswer, PartitionsPart } from './partitions-part';
import { RepeatsPanel } from './repeats-panel';
import { searchForm } from './search-form';

/** "1 s each time", or "1 s, doubling up to 1 h", and whether it is jittered. */
function formatBackoff({ type, delayMs, maxDelayMs, jitter }: QueueInfo['config']['backoff']): string {
  const delays = type === 'fixed' ? `${formatDuration(delayMs)} each time` : `${formatDuration(delayMs)}, doubling up to ${formatDuration(maxDelayMs)}`;
  return jitter ? `${delays}, jittered` : delays;
}

function configLine({ config }: QueueInfo): HTMLElement {
  const parts: [string, string][] = [
    ['Endpoint', config.endpoint],
    ['Concurrency', String(config.concurrency)],
    ['Timeout', formatDuration(config.timeoutMs)],
    ['Attempts', String(config.maxAttempts)],
    ['Backoff', formatBackoff(config.backoff)],
    ...(config.callbackUrl === undefined ? [] : [['Outcomes to', config.callbackUrl] as [string, string]]),
    ['Group concurrency', String(config.groupConcurrency)],
    ['Rate limit', formatRate(config.rateLimit)],
    ['Group rate limit', formatRate(config.groupRateLimit)],
    ['Dedup window', formatDuration(config.dedupWindowMs)],
    ['A 429', BACKPRESSURE_LABELS[config.backpressure]],
    ['Batches', formatBatch(config.batch)],
  ];
  return h('dl', { class: 'config' }, ...parts.map(([name, value]) => h('div', { 'data-config': name }, h('dt', {}, name), h('dd', {}, value))));
}

const ALL_QUEUES = { href: '#/', text: '← All queues' };

/**
 * What one refresh reads, all at once: the queue, its metrics (or why not), jobs, groups, repeats
 * and, while their list is open, its partitions.
 */
type Answer = [QueueInfo, { ok: true; minutes: MinuteMetrics[] } | { ok: false; reason: string }, JobPage<unknown>, GroupPage, Repeat[], PartitionsAnswer];

export class QueueView extends View<Answer> {
  override readonly element: HTMLElement;
  private readonly overview = h('div', { class: 'overview' });
  private readonly parts: HTMLElement;
  private readonly jobs: JobsPanel;
  private readonly groups: GroupsPanel;
  private readonly repeats: RepeatsPanel;
  private readonly flow: FlowSettings;
  private readonly partitions = new PartitionsPart(() => void this.ctx.refresh());
  private readonly confirmer = new Confirmer(() => this.info && this.drawHead(this.info));
  private info: QueueInfo | null = null;

  constructor(client: GroupqClient, name: string, fail: (error: unknown) => void) {
    super(client, name, fail);
    this.jobs = new JobsPanel(this.ctx);
    this.groups = new GroupsPanel(this.ctx);
    this.repeats = new RepeatsPanel(this.ctx);
    this.flow = new FlowSettings(this.ctx);
    this.parts = h(
      'div',
      { class: 'queue-parts' },
      h('section', { class: 'card', 'aria-labelledby': 'overview-heading' }, h('h2', { id: 'overview-heading' }, 'Overview'), this.overview),
      h('div', { class: 'side-by-side' }, searchForm(name, (group) => void this.jobs.showGroup(group)), enqueueForm(this.ctx)),
      this.jobs.element,
      h('div', { class: 'side-by-side' }, this.groups.element, this.repeats.element),
      this.flow.element,
    );
    this.element = h('div', { class: 'queue-view' }, this.head, this.parts);
    this.drawTitle();
  }

  protected override read(): Promise<Answer> {
    const { queue } = this.ctx;
    const info = queue.get();
    // The first read picks the tab from the counts (a queue whose only jobs failed opens on
    // them): its jobs are read once the counts are in, rather than twice.
    const jobs = this.info === null ? info.then((first) => (this.jobs.openOn(first.counts), this.jobs.request())) : this.jobs.request();
    return Promise.all([
      info,
      queue.metrics().then(
        (minutes): { ok: true; minutes: MinuteMetrics[] } => ({ ok: true, minutes }),
        (error: unknown) => ({ ok: false as const, reason: describeError(error) }),
      ),
      jobs,
      this.groups.request(),
      queue.repeats.list(),
      this.partitions.open
        ? queue.partitions().then(
            (partitions): PartitionsAnswer => ({ ok: true, partitions }),
            (error: unknown): PartitionsAnswer => ({ ok: false, reason: describeError(error) }),
          )
        : null,
    ]);
  }

  /** Every job event of the queue changes a count, a list, a group or the chart: all re-read. */
  protected override liveStreams(): { paths: string[] } {
    return { paths: [queueEventsPath(this.queueName)] };
  }

  protected override show([info, metrics, jobs, groups, repeats, partitions]: Answer): void {
    this.info = info;
    this.drawHead(info);
    render(
      this.overview,
      configLine(info),
      countsList(info.counts),
      this.partitions.element(info.config.partitions, partitions),
      metrics.ok ? throughputChart(metrics.minutes, 'queue', this.queueName) : chartUnavailable(metrics.reason),
    );
    this.jobs.show(jobs, info.counts);
    this.groups.show(groups);
    this.flow.show(info.config);
    this.repeats.show(repeats);
    this.parts.hidden = false;
  }

  protected override showGone(code: string): boolean {
    if (code !== 'QUEUE_NOT_FOUND') return false;
    this.sayGone(`Queue ${this.queueName} does not exist: it was deleted, or never created. This page stopped refreshing it.`);
    return true;
  }

  private sayGone(notice: string): void {
    this.gone = true;
    this.parts.hidden = true;
    this.drawTitle(h('p', { class: 'notice', 'data-gone': 'queue' }, notice));
  }

  /** The head before the queue was read, and once it is gone. */
  private drawTitle(...extra: Child[]): void {
    this.drawHeadOf({ back: ALL_QUEUES, title: [this.queueName] }, ...extra);
  }

  private drawHead(info: QueueInfo): void {
    const { queue } = this.ctx;
    const label = info.paused ? 'Resume queue' : 'Pause queue';
    this.drawHeadOf({
      back: ALL_QUEUES,
      title: [info.name],
      badge: pausedBadge(info.paused),
      actions: [
        h(
          'button',
          {
            type: 'button',
            class: info.paused ? 'primary' : '',
            'data-action': info.paused ? 'resume-queue' : 'pause-queue',
            'data-focus-key': 'queue:pause',
            onclick: (e: Event) =>
              void act(this.ctx, e.currentTarget as HTMLButtonElement, async () => {
                if (info.paused) await queue.resume();
                else await queue.pause();
                return `Queue ${info.name} ${info.paused ? 'resumed' : 'paused'}.`;
              }),
          },
          label,
        ),
        this.confirmer.control({
          key: 'queue:delete',
          action: 'delete-queue',
          label: 'Delete queue',
          question: `Delete queue ${info.name} with all its jobs, groups and repeatable jobs? It cannot be undone.`,
          confirmLabel: 'Delete queue',
          run: (button) => this.deleteQueue(button),
        }),
      ],
    });
  }

  private async deleteQueue(button: HTMLButtonElement): Promise<void> {
    button.setAttribute('aria-disabled', 'true');
    try {
      await this.ctx.queue.delete();
    } catch (error) {
      button.removeAttribute('aria-disabled');
      this.ctx.fail(error);
      return;
    }
    this.sayGone(`Queue ${this.queueName} was deleted.`);
    announceAndGo(`Queue ${this.queueName} deleted.`, '#/');
  }
}
