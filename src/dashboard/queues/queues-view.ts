// The first view: the overview of every queue (overview.ts: backlog, rate, failures, oldest
// waiting job, worst first), then every queue as a card with its counts, a paused badge and the
// chart of its last hour. One GET /v1/queues, then each queue's metrics in parallel (a failed
// metrics read costs that queue its chart and rate, not the page). Reads may overlap (the timer,
// a queue's event, Refresh): only the newest one draws.
import type { GroupqClient, MinuteMetrics, QueueSummary } from '../../client';
import { pausedBadge } from '../badges';
import { chartUnavailable, throughputChart } from '../chart';
import { countsList } from '../counts';
import { h, render } from '../dom';
import { queueHref } from '../links';
import { describeError } from '../session';
import { Overview } from './overview';
import { figuresOf } from './overview-figures';

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
/** Reads started: an older read that answers after a newer one started does not draw. */
let reads = 0;

/**
 * Loads every queue and renders the overview and the cards into `container`; answers the queues'
 * names in the cards' order (app.ts follows their streams), or null when a newer read superseded
 * this one. Throws what the API threw.
 */
export async function refreshQueues(client: GroupqClient, container: HTMLElement): Promise<string[] | null> {
  const read = ++reads;
  const loaded = await load(client);
  if (read !== reads) return null;
  if (loaded.length === 0) {
    render(container, empty());
    return [];
  }
  // Put back only when gone (the first load, or back from another view): re-adding them would
  // close the order's open list under the user's pointer.
  if (overview.element.parentElement !== container) render(container, overview.element, cards);
  const now = Date.now();
  overview.show(loaded.map(({ queue, metrics }) => (metrics.ok ? figuresOf(queue, metrics.minutes, null, now) : figuresOf(queue, null, metrics.reason, now))));
  render(cards, ...loaded.map(card));
  return loaded.map(({ queue }) => queue.name);
}
