// The shapes the HTTP API answers with, in one module without runtime code, so the engine,
// the routes and the client (`groupq/client`) share them without pulling in Redis.
import type { QueueConfig } from './config';
import type { GroupState, JobState } from './job-input';

/** States a job does not leave by itself: a wait for the job ends there (server and client). */
export const FINISHED_STATES: ReadonlySet<string> = new Set<JobState>(['completed', 'failed', 'cancelled']);

export type { Job, JobDebounce } from './job-view';
export type { JobState } from './job-input';
export type { GroupLimits, QueueConfig } from './config';

export interface QueueCounts {
  waiting: number;
  delayed: number;
  active: number;
  completed: number;
  failed: number;
  cancelled: number;
  /** Groups holding a waiting or active job. */
  groups: number;
}

export interface QueueInfo {
  name: string;
  config: QueueConfig;
  paused: boolean;
  counts: QueueCounts;
}

export type QueueSummary = Omit<QueueInfo, 'config'>;

export interface EnqueueResult {
  id: string;
  /** The state the job entered; the same call may already have leased it. */
  state: JobState | 'removed';
  /** The id was known: a kept job (its state now), or one that ended inside dedupWindowMs (how it ended, `removed` included). */
  duplicate?: true;
  /** A waiting job with the same debounce key took this enqueue's data: `id` is that job. */
  debounced?: true;
}

/** What a bulk action did: `done` false when jobs of that state remain (its budget ran out: call again). */
export interface BulkResult {
  count: number;
  done: boolean;
}

export type { GroupState };

export interface GroupSummary {
  group: string;
  waiting: number;
  /** Jobs of the group in flight now, up to `concurrency`. */
  active: number;
  state: GroupState;
  /** How many of its jobs may be in flight at once: its own limit, or the queue's groupConcurrency. */
  concurrency: number;
}

export interface Repeat {
  key: string;
  group: string;
  data: unknown;
  every?: number;
  pattern?: string;
  tz: string;
  startAt?: number;
  endAt?: number;
  limit?: number;
  /** Runs created so far. */
  count: number;
  /** null once `limit` or `endAt` ended the series. */
  nextRunAt: number | null;
}

/** One minute of a queue's activity (GET /v1/queues/{queue}/metrics). */
export interface MinuteMetrics {
  /** Epoch ms of the minute's start. */
  at: number;
  /** Jobs that finished completed. */
  completed: number;
  /** Jobs that moved to failed (attempts exhausted, or not retryable). */
  failed: number;
  /** Failed attempts that will be retried, expired leases included. */
  retried: number;
}
