// One queue: its name, paused state, pause/resume and delete, its config in one line, counts and
// the chart of its last hour, finding jobs by id or group, enqueueing a test job, then its jobs
// by state, groups and repeatable jobs, and its flow control to edit. A refresh reads everything
// in parallel and draws once all answered, so the parts never disagree. A queue that no longer
// exists is said so once, and the view stops refreshing (no request after that).
import type { GroupqClient, MinuteMetrics, QueueInfo } from '../client';
import { GroupqError } from '../client';
import { type QueueContext, act } from './actions';
import { chartUnavailable, throughputChart } from './chart';
import { Confirmer } from './confirm';
import { h, render } from './dom';
import { enqueueForm } from './enqueue-form';
import { BACKPRESSURE_LABELS, formatRate } from './flow-format';
import { FlowSettings } from './flow-settings';
import { formatDuration } from './format';
import { GroupsPanel } from './groups-panel';
import { JobsPanel } from './jobs-panel';
import { countsList, pausedBadge } from './queues-view';
import { RepeatsPanel } from './repeats-panel';
import { searchForm } from './search-form';
import { describeError } from './session';
import { announceAndGo } from './status';

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
  ];
  return h('dl', { class: 'config' }, ...parts.map(([name, value]) => h('div', { 'data-config': name }, h('dt', {}, name), h('dd', {}, value))));
}

export class QueueView {
  readonly element: HTMLElement;
  /** The queue no longer exists: nothing left to refresh. */
  gone = false;
  private readonly head = h('div', { class: 'view-head' });
  private readonly overview = h('div', { class: 'overview' });
  private readonly parts: HTMLElement;
  private readonly jobs: JobsPanel;
  private readonly groups: GroupsPanel;
  private readonly repeats: RepeatsPanel;
  private readonly flow: FlowSettings;
  private readonly ctx: QueueContext;
  private readonly confirmer = new Confirmer(() => this.info && this.drawHead(this.info));
  private info: QueueInfo | null = null;
  /** Answers of an older refresh that arrive after a newer one started are dropped. */
  private generation = 0;

  constructor(
    client: GroupqClient,
    readonly name: string,
    fail: (error: unknown) => void,
  ) {
    this.ctx = { client, queue: client.queue(name), refresh: () => this.refresh().then(() => undefined), fail };
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

  /** Re-reads the queue; false when that failed (the error went to `fail`). */
  async refresh(): Promise<boolean> {
    if (this.gone) return true;
    const generation = ++this.generation;
    const { queue } = this.ctx;
    try {
      const [info, metrics, jobs, groups, repeats] = await Promise.all([
        queue.get(),
        queue.metrics().then(
          (minutes): { ok: true; minutes: MinuteMetrics[] } => ({ ok: true, minutes }),
          (error: unknown) => ({ ok: false as const, reason: describeError(error) }),
        ),
        this.jobs.request(),
        this.groups.request(),
        queue.repeats.list(),
      ]);
      if (generation !== this.generation || this.gone) return true;
      this.info = info;
      this.drawHead(info);
      render(this.overview, configLine(info), countsList(info.counts), metrics.ok ? throughputChart(metrics.minutes, 'queue', this.name) : chartUnavailable(metrics.reason));
      this.jobs.show(jobs, info.counts);
      this.groups.show(groups);
      this.flow.show(info.config);
      this.repeats.show(repeats);
      this.parts.hidden = false;
      return true;
    } catch (error) {
      if (generation !== this.generation) return true;
      if (error instanceof GroupqError && error.code === 'QUEUE_NOT_FOUND') {
        this.showGone(`Queue ${this.name} does not exist: it was deleted, or never created. This page stopped refreshing it.`);
        return true;
      }
      this.ctx.fail(error);
      return false;
    }
  }

  private showGone(notice: string): void {
    this.gone = true;
    this.parts.hidden = true;
    this.drawTitle(h('p', { class: 'notice', 'data-gone': 'queue' }, notice));
  }

  private drawTitle(...extra: (Node | null)[]): void {
    render(this.head, h('a', { class: 'back', href: '#/', 'data-focus-key': 'back' }, '← All queues'), h('h1', { tabindex: '-1', 'data-focus-key': 'title' }, this.name), ...extra);
  }

  private drawHead(info: QueueInfo): void {
    const { queue } = this.ctx;
    const label = info.paused ? 'Resume queue' : 'Pause queue';
    render(
      this.head,
      h('a', { class: 'back', href: '#/', 'data-focus-key': 'back' }, '← All queues'),
      h('div', { class: 'title-row' }, h('h1', { tabindex: '-1', 'data-focus-key': 'title' }, info.name), pausedBadge(info.paused)),
      h(
        'div',
        { class: 'head-actions' },
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
      ),
    );
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
    this.showGone(`Queue ${this.name} was deleted.`);
    announceAndGo(`Queue ${this.name} deleted.`, '#/');
  }
}
