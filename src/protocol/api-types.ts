// The shapes the HTTP API answers with, in one module without runtime code, so the engine,
// the routes and the client (`groupq/client`) share them without pulling in Redis.
import type { QueueConfig } from './config';
import type { GroupState, JobState } from './job-input';

/** States a job does not leave by itself: a wait for the job ends there (server and client). */
export const FINISHED_STATES: ReadonlySet<string> = new Set<JobState>(['completed', 'failed', 'cancelled']);

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

/** How a job's outcome callback is going (GET of one job only). */
export interface OutcomeStatus {
  state: 'pending' | 'delivered' | 'abandoned';
  /** Attempts made, the one under way included. */
  attempts: number;
  /** When the next attempt is due (or the one under way gives up): pending only. */
  nextAttemptAt?: number;
  lastError?: string;
  deliveredAt?: number;
}

/** How one attempt ended; `expired`: its lease ran out without an answer. */
export type AttemptOutcome = 'completed' | 'failed' | 'expired' | 'cancelled';

export interface Attempt {
  /** 1-based, counted as `attempts` is (a retry by hand starts again at 1). */
  attempt: number;
  startedAt: number;
  finishedAt: number;
  outcome: AttemptOutcome;
  /** The endpoint's HTTP status, when it answered the delivery (not a 202). */
  status?: number;
  error?: string;
}

export interface JobDebounce {
  key: string;
  deadline?: number;
}

export interface Job<T = unknown> {
  id: string;
  queue: string;
  group: string;
  data: T;
  state: JobState;
  orderMs: number;
  attempts: number;
  maxAttempts: number;
  createdAt: number;
  /** Across groups, a higher priority starts first (README, Flow control). */
  priority: number;
  /** A debounced job: its key, and the latest it starts (first enqueue + maxDelayMs), if capped. */
  debounce?: JobDebounce;
  runAt?: number;
  startedAt?: number;
  finishedAt?: number;
  leaseExpiresAt?: number;
  result?: unknown;
  resultTruncated?: boolean;
  error?: string;
  progress?: unknown;
  /** The last 10 attempts, oldest first: in GET of one job only, never in listings. */
  history?: Attempt[];
  /** GET of one job: where its outcome is POSTed (its own URL or its queue's). */
  callbackUrl?: string;
  /** GET of one job: its outcome callback, while groupq keeps a trace of it. */
  outcome?: OutcomeStatus;
}
