// The first view: the overview of every queue (overview.ts: backlog, rate, failures, oldest
// waiting job, worst first), then every queue as a card with its counts, a paused badge and the
// chart of its last hour. One GET /v1/queues, then each queue's metrics in parallel (a failed
// metrics read costs that queue its chart and rate, not the page).
import type { GroupqClient, MinuteMetrics, QueueCounts, QueueSummary } from '../client';
import { chartUnavailable, throughputChart } from './chart';
import { h, render } from './dom';
import { formatCount } from './format';
import { Overview } from './overview';
import { figuresOf } from './overview-figures';
import { pausedBadge, queueHref } from './queue-links';
import { describeError } from './session';

export { pausedBadge, queueHref } from './queue-links';

const COUNT_LABELS: [keyof QueueCounts, string][] = [
  ['waiting', 'Waiting'],
  ['delayed', 'Delayed'],
  ['active', 'Active'],
  ['completed', 'Completed'],
  ['failed', 'Failed'],
  ['cancelled', 'Cancelled'],
  ['expired', 'Expired'],
  ['groups', 'Groups'],
];

/**
 * What a finished state's count is: the jobs the queue keeps in it, not how many ended (the chart
 * counts those). A queue that keeps no completed jobs (keepCompleted 0, the default) shows 0.
 */
const KEPT: Partial<Record<keyof QueueCounts, string>> = {
  completed: 'Completed jobs the queue keeps (keepCompleted); the chart counts every job that completed',
  failed: 'Failed jobs the queue keeps (keepFailed); the chart counts every job that failed',
  cancelled: 'Cancelled jobs the queue keeps; the chart does not count cancels',
  expired: 'Jobs that did not start by their deadline (ttlMs), kept like failed ones; the chart does not count them',
};

/** The counts (COUNT_LABELS) as a description list (label, number), shared with the queue's own view. */
export function countsList(counts: QueueCounts): HTMLElement {
  return h(
    'dl',
    { class: 'counts' },
    ...COUNT_LABELS.map(([key, label]) =>
      h(
        'div',
        { class: `count count-${key}${counts[key] > 0 ? ' nonzero' : ''}`, 'data-count': key },
        h('dt', KEPT[key] ? { title: KEPT[key] } : {}, KEPT[key] ? `${label} (kept)` : label),
        h('dd', {}, formatCount(counts[key])),
      ),
    ),
  );
}

interface Loaded {
  queue: QueueSummary;
  metrics: { ok: true; minutes: MinuteMetrics[] } | { ok: false; reason: string };
}

async function load(client: GroupqClient): Promise<Loaded[]> {
  const queues = await client.queues();
  queues.sort((a, b) => a.name.localeCompare(b.name));
  const metrics = await Promise.allSettled(queues.map((q) => client.queue(q.name).metrics()));
  return queues.map((queue, i) => {
    const result = metrics[i]!;
    return {
      queue,
      metrics: result.status === 'fulfilled' ? { ok: true, minutes: result.value } : { ok: false, reason: describeError(result.reason) },
    };
  });
}

function card({ queue, metrics }: Loaded, index: number): HTMLElement {
  const headingId = `queue-${index}-name`;
  return h(
    'article',
    { class: 'card queue-card', 'aria-labelledby': headingId, 'data-queue': queue.name },
    h(
      'div',
      { class: 'card-head' },
      h('h2', { id: headingId }, h('a', { href: queueHref(queue.name), 'data-focus-key': `open:${queue.name}` }, queue.name)),
      pausedBadge(queue.paused),
    ),
    countsList(queue.counts),
    metrics.ok ? throughputChart(metrics.minutes, `queue-${index}`, queue.name) : chartUnavailable(metrics.reason),
  );
}

function empty(): HTMLElement {
  return h(
    'div',
    { class: 'card empty' },
    h('h2', {}, 'No queues yet'),
    h('p', {}, 'Create one with the API, for example:'),
    h('pre', {}, h('code', {}, `curl -X PUT ${window.location.origin}/v1/queues/emails \\\n  -H "authorization: Bearer $GROUPQ_TOKEN" \\\n  -H "content-type: application/json" \\\n  -d '{"endpoint":"https://example.com/jobs"}'`)),
  );
}

// Built once: the overview keeps its order and the cards their open tables across refreshes.
const overview = new Overview();
const cards = h('div', { class: 'queue-grid' });

/** Loads every queue and renders the overview and the cards into `container`. Throws what the API threw. */
export async function refreshQueues(client: GroupqClient, container: HTMLElement): Promise<void> {
  const loaded = await load(client);
  if (loaded.length === 0) {
    render(container, empty());
    return;
  }
  // Put back only when gone (the first load, or back from another view): re-adding them would
  // close the order's open list under the user's pointer.
  if (overview.element.parentElement !== container) render(container, overview.element, cards);
  const now = Date.now();
  overview.show(loaded.map(({ queue, metrics }) => (metrics.ok ? figuresOf(queue, metrics.minutes, null, now) : figuresOf(queue, null, metrics.reason, now))));
  render(cards, ...loaded.map(card));
}
