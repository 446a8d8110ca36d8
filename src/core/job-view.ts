// Turns the tuples scripts return into the job objects the API shows.
import type { JobState } from './job-input';

/** The state fields of a job record, as job.lua writes them. */
export interface JobRecord {
  g: string;
  s: number;
  o: number;
  c?: number;
  /** A retried-by-hand job's nonce (lease tokens derive from it). */
  n?: string;
  a?: number;
  ma?: number;
  bo?: unknown;
  to?: number;
  st?: 'delayed' | 'completed' | 'failed';
  ra?: number;
  sa?: number;
  f?: number;
  r?: string;
  rt?: boolean;
  e?: string;
  p?: string;
  /** The job's own callback URL. */
  cb?: string;
  /** How its outcome callback ended, once it did (settle-outcomes.lua). */
  oc?: { st: 'delivered' | 'abandoned'; n: number; d?: number; le?: string };
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
  runAt?: number;
  startedAt?: number;
  finishedAt?: number;
  leaseExpiresAt?: number;
  result?: unknown;
  resultTruncated?: boolean;
  error?: string;
  progress?: unknown;
  /** GET of one job: where its outcome is POSTed (its own URL or its queue's). */
  callbackUrl?: string;
  /** GET of one job: its outcome callback, while groupq keeps a trace of it. */
  outcome?: OutcomeStatus;
}

/** {id, state JSON, data, state, startedAt, expiresAt, maxAttempts} from view.lua. */
export function toJob(queue: string, tuple: readonly unknown[]): Job {
  const [id, stateJson, data, state, startedAt, expiresAt, maxAttempts] = tuple as [
    string, string, string, JobState, number, number, number,
  ];
  const record = JSON.parse(stateJson) as JobRecord;
  const made = record.a ?? 0;
  const job: Job = {
    id,
    queue,
    group: record.g,
    data: JSON.parse(data),
    state,
    orderMs: record.o,
    // An active job's current attempt counts; a record stores the attempts that ended.
    attempts: state === 'active' ? made + 1 : made,
    maxAttempts,
    createdAt: record.c ?? record.o,
  };
  // runAt matters while a job waits for it (delayed, or a retry's backoff).
  if (record.ra !== undefined && (state === 'delayed' || state === 'waiting')) job.runAt = record.ra;
  if (startedAt >= 0) job.startedAt = startedAt;
  if (record.f !== undefined) job.finishedAt = record.f;
  if (expiresAt >= 0) job.leaseExpiresAt = expiresAt;
  if (record.r !== undefined) job.result = JSON.parse(record.r);
  if (record.rt) job.resultTruncated = true;
  if (record.e !== undefined) job.error = record.e;
  if (record.p !== undefined) job.progress = JSON.parse(record.p);
  return job;
}

/**
 * The outcome get-job.lua found: a pending record (outcome.lua: n attempts, t next attempt,
 * le last error) or the summary a job's record keeps once the outcome was delivered or abandoned.
 */
export function toOutcomeStatus(json: string): OutcomeStatus {
  const found = JSON.parse(json) as { st?: 'delivered' | 'abandoned'; n: number; t?: number; d?: number; le?: string };
  const status: OutcomeStatus = { state: found.st ?? 'pending', attempts: found.n };
  if (found.st === undefined) status.nextAttemptAt = found.t;
  if (found.le !== undefined) status.lastError = found.le;
  if (found.d !== undefined) status.deliveredAt = found.d;
  return status;
}
