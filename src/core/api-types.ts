// The shapes the HTTP API answers with, in one module without runtime code, so the engine,
// the routes and the client (`groupq/client`) share them without pulling in Redis.
import type { QueueConfig } from './config';
import type { JobState } from './job-input';

/** States a job does not leave by itself: a wait for the job ends there (server and client). */
export const FINISHED_STATES: ReadonlySet<string> = new Set<JobState>(['completed', 'failed', 'cancelled']);

export type { Job } from './job-view';
export type { JobState } from './job-input';
export type { QueueConfig } from './config';

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
  /** The job's id; for a debounced enqueue, the job it collapsed into. */
  id: string;
  /**
   * The state the job entered; the same call may already have leased it. A known id answers
   * its job's state, or the state it ended in (`removed` too) while the dedup window remembers it.
   */
  state: JobState | 'removed';
  duplicate?: true;
  debounced?: true;
}

/** What a bulk action did: `done` false when jobs of that state remain (its budget ran out: call again). */
export interface BulkResult {
  count: number;
  done: boolean;
}

/** `held`: waiting for a time (a retry's backoff or the ordering window). */
export type GroupState = 'ready' | 'active' | 'held' | 'paused' | 'idle';

export interface GroupSummary {
  group: string;
  waiting: number;
  /** Jobs of the group in flight, up to `concurrency`. */
  active: number;
  state: GroupState;
  /** The group's effective concurrency: its own limits, else the queue's groupConcurrency. */
  concurrency: number;
}

/** A group's own limits (PUT /groups/{g}/limits): over the queue's groupConcurrency and groupRateLimit. */
export interface GroupLimits {
  concurrency?: number;
  /** null: no rate limit for this group, whatever the queue's groupRateLimit. */
  rateLimit?: { max: number; periodMs: number } | null;
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
