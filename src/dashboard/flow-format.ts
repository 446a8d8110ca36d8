// Text and badges for flow control (docs/flow-control.md): rate limits ("10 per 1 s"), batches,
// what a 429 holds, and a job's priority and debounce, shown in the jobs tables and in a job's view.
import type { Job, QueueConfig } from '../client';
import { h } from './dom';
import { countOf, formatDuration, formatWhen } from './format';

export type RateLimit = NonNullable<QueueConfig['rateLimit']>;
export type Backpressure = QueueConfig['backpressure'];
export type Batch = NonNullable<QueueConfig['batch']>;

export const BACKPRESSURE_LABELS: Record<Backpressure, string> = {
  job: 'holds the job',
  group: 'holds its group',
  queue: 'holds the whole queue',
};

/** "10 per 1 s", or "none". */
export function formatRate(limit: RateLimit | null): string {
  return limit === null ? 'none' : `${limit.max} per ${formatDuration(limit.periodMs)}`;
}

/** "up to 10 jobs", "up to 10 jobs, waiting 0.5 s", or "none" (one job per delivery). */
export function formatBatch(batch: Batch | null): string {
  if (batch === null) return 'none';
  const jobs = `up to ${countOf(batch.maxSize, 'job')}`;
  return batch.maxWaitMs === 0 ? jobs : `${jobs}, waiting ${formatDuration(batch.maxWaitMs)}`;
}

/** The priority (when not 0) and the debounce key, as badges next to a job's id. */
export function flowBadges(job: Job): HTMLElement[] {
  const badges: HTMLElement[] = [];
  if (job.priority !== 0) {
    badges.push(h('span', { class: 'badge badge-flow', 'data-priority': job.priority }, `priority ${job.priority}`));
  }
  if (job.debounce) badges.push(h('span', { class: 'badge badge-flow', 'data-debounce': job.debounce.key }, `debounce ${job.debounce.key}`));
  return badges;
}

/** The rows of a job's fields for its priority and debounce. */
export function flowFields(job: Job): [string, string | Node][] {
  const rows: [string, string | Node][] = [];
  if (job.priority !== 0) rows.push(['Priority', String(job.priority)]);
  if (job.debounce) {
    rows.push(['Debounce key', h('code', {}, job.debounce.key)]);
    if (job.debounce.deadline !== undefined) rows.push(['Debounce deadline', formatWhen(job.debounce.deadline)]);
  }
  return rows;
}
