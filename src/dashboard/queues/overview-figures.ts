// The overview's figures of one queue, from what the list view already reads (GET /v1/queues
// and each queue's per-minute metrics): its backlog, its completion rate and trend, its failures
// and how long its oldest ready job has waited; and the orders the overview can list queues in.
import type { MinuteMetrics, OldestReady, QueueSummary } from '../../client';

/** Minutes the rate averages over, and that its trend compares with the ones before. */
export const RATE_MINUTES = 5;
/** A rate this much above or below the one before is a trend; closer, it is steady. */
const TREND_MARGIN = 0.1;

export type Trend = 'rising' | 'falling' | 'steady';

export interface QueueFigures {
  name: string;
  paused: boolean;
  /** Jobs not finished: waiting, delayed and active. */
  backlog: number;
  waiting: number;
  delayed: number;
  active: number;
  /** The job that could start now and has waited longest, and for how long (ms); null: none. */
  oldest: (OldestReady & { waitedMs: number }) | null;
  /** null: the metrics could not be read (`metricsError` says why). */
  rate: {
    /** Completed per minute over the last RATE_MINUTES whole minutes. */
    perMinute: number;
    /** The same over the RATE_MINUTES whole minutes before them. */
    before: number;
    trend: Trend | null;
    /** Completed in the minute under way. */
    thisMinute: number;
  } | null;
  failures: {
    /** Failed for good in the last hour, and in the last RATE_MINUTES minutes (this one included). */
    hour: number;
    recent: number;
    /** Attempts that failed and will be retried, in the last hour. */
    retried: number;
  } | null;
  metricsError: string | null;
}

const sum = (minutes: MinuteMetrics[], key: 'completed' | 'failed' | 'retried') => minutes.reduce((total, m) => total + m[key], 0);

function trendOf(now: number, before: number): Trend | null {
  if (now === 0 && before === 0) return null;
  if (now > before * (1 + TREND_MARGIN)) return 'rising';
  if (now < before * (1 - TREND_MARGIN)) return 'falling';
  return 'steady';
}

/**
 * One queue's figures; `minutes` are its last 60, oldest first, the last one under way (the
 * metrics route). `now` ages the oldest ready job (the browser's clock: the page shows ages as
 * it shows every other "3 min ago").
 */
export function figuresOf(queue: QueueSummary, minutes: MinuteMetrics[] | null, metricsError: string | null, now: number): QueueFigures {
  const { waiting, delayed, active } = queue.counts;
  const oldest = queue.oldestReady ? { ...queue.oldestReady, waitedMs: Math.max(0, now - queue.oldestReady.orderMs) } : null;
  let rate: QueueFigures['rate'] = null;
  let failures: QueueFigures['failures'] = null;
  if (minutes && minutes.length > 0) {
    // Whole minutes only: the one under way would make every rate look like it is falling.
    const whole = minutes.slice(0, -1);
    const last = whole.slice(-RATE_MINUTES);
    const previous = whole.slice(-2 * RATE_MINUTES, -RATE_MINUTES);
    const perMinute = sum(last, 'completed') / RATE_MINUTES;
    const before = sum(previous, 'completed') / RATE_MINUTES;
    rate = { perMinute, before, trend: trendOf(perMinute, before), thisMinute: minutes.at(-1)!.completed };
    failures = { hour: sum(minutes, 'failed'), recent: sum(minutes.slice(-RATE_MINUTES), 'failed'), retried: sum(minutes, 'retried') };
  }
  return { name: queue.name, paused: queue.paused, backlog: waiting + delayed + active, waiting, delayed, active, oldest, rate, failures, metricsError };
}

/** The orders the overview lists queues in; the first is the default (worst first). */
export const ORDERS = {
  waited: 'Longest wait first',
  backlog: 'Largest backlog first',
  failures: 'Most failures first',
  rate: 'Busiest first',
  name: 'By name',
} as const;

export type Order = keyof typeof ORDERS;

const byName = (a: QueueFigures, b: QueueFigures) => a.name.localeCompare(b.name);
const waited = (f: QueueFigures) => f.oldest?.waitedMs ?? -1;
const failed = (f: QueueFigures) => f.failures?.hour ?? -1;
const rateOf = (f: QueueFigures) => f.rate?.perMinute ?? -1;

/** Descending by the order's figure; ties by backlog (then failures), then by name. */
const COMPARE: Record<Order, (a: QueueFigures, b: QueueFigures) => number> = {
  waited: (a, b) => waited(b) - waited(a) || b.backlog - a.backlog || failed(b) - failed(a) || byName(a, b),
  backlog: (a, b) => b.backlog - a.backlog || waited(b) - waited(a) || byName(a, b),
  failures: (a, b) => failed(b) - failed(a) || (b.failures?.recent ?? -1) - (a.failures?.recent ?? -1) || b.backlog - a.backlog || byName(a, b),
  rate: (a, b) => rateOf(b) - rateOf(a) || b.backlog - a.backlog || byName(a, b),
  name: byName,
};

export function sortFigures(all: QueueFigures[], order: Order): QueueFigures[] {
  return [...all].sort(COMPARE[order]);
}
