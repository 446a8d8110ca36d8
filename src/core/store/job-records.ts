// Turns the tuples scripts return into the job objects the API shows.
import type { Attempt, Job, OutcomeStatus } from '../../protocol/api/types';
import { queueOfTag } from './partitions';
import type { JobTuple } from './replies';

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
  st?: 'delayed' | 'completed' | 'failed' | 'cancelled' | 'expired';
  ra?: number;
  sa?: number;
  f?: number;
  r?: string;
  rt?: boolean;
  e?: string;
  p?: string;
  /** The record holds an attempt history (history.lua); GET of the job shows it. */
  h?: number;
  /** The job's own callback URL. */
  cb?: string;
  /** 1: its producer named its id (the dedup window remembers it when it ends). */
  i?: 1;
  /** 1: a waiter asked for its end: kept 5 minutes after it completes on a queue that keeps none (finish.lua keepResult). */
  w?: 1;
  /** How its outcome callback ended, once it did (settle-outcomes.lua). */
  oc?: { st: 'delivered' | 'abandoned'; n: number; d?: number; le?: string };
  /** Priority (absent: 0). */
  pr?: number;
  /** Debounce key, and the debounce deadline (first enqueue + maxDelayMs; absent: none). */
  db?: string;
  dx?: number;
  /** The W3C traceparent and tracestate its producer enqueued it with (docs/tracing.md). */
  tp?: string;
  ts?: string;
  /** Its deadline to start (enqueue + ttlMs; expiry.lua): dropped once an attempt ended. */
  x?: number;
}

/**
 * history.lua's entries: [attempt, startedAt, finishedAt, how it ended (a letter), status (0:
 * none), error (null: none), [batch id, index, size] of the batch it was part of?].
 */
type StoredAttempt = [number, number, number, 'c' | 'f' | 'e' | 'x', number, (string | null)?, [string, number, number]?];

/** How an attempt ended, by its stored letter (shown in the API's `history[].outcome`). */
const ATTEMPT_ENDS = { c: 'completed', f: 'failed', e: 'expired', x: 'cancelled' } as const;

function toAttempt([attempt, startedAt, finishedAt, ended, status, error, batch]: StoredAttempt): Attempt {
  const entry: Attempt = { attempt, startedAt, finishedAt, outcome: ATTEMPT_ENDS[ended] };
  if (status > 0) entry.status = status;
  if (error != null) entry.error = error;
  if (batch) entry.batch = { id: batch[0], index: batch[1], size: batch[2] };
  return entry;
}

/** The state fields of a raw job record, `<state JSON>\n<data JSON>` (src/lua/includes/job.lua). */
export function recordOf(raw: string): JobRecord {
  return JSON.parse(raw.slice(0, raw.indexOf('\n'))) as JobRecord;
}

/** {id, state JSON, data, state, startedAt, lease deadline, maxAttempts, history JSON?} from view.lua. */
export function toJob(tag: string, [id, stateJson, data, state, startedAt, leaseExpiresAt, maxAttempts, history]: JobTuple): Job {
  const record = JSON.parse(stateJson) as JobRecord;
  const made = record.a ?? 0;
  const job: Job = {
    id,
    queue: queueOfTag(tag),
    group: record.g,
    data: JSON.parse(data),
    state,
    orderMs: record.o,
    // An active job's current attempt counts; a record stores the attempts that ended.
    attempts: state === 'active' ? made + 1 : made,
    maxAttempts,
    createdAt: record.c ?? record.o,
    priority: record.pr ?? 0,
  };
  if (record.db !== undefined) job.debounce = record.dx === undefined ? { key: record.db } : { key: record.db, deadline: record.dx };
  // runAt matters while a job waits for it (delayed, or a retry's backoff).
  if (record.ra !== undefined && (state === 'delayed' || state === 'waiting')) job.runAt = record.ra;
  // The deadline matters while the job has not started, and tells when an expired one did.
  if (record.x !== undefined && (state === 'delayed' || state === 'waiting' || state === 'expired')) job.expiresAt = record.x;
  if (startedAt >= 0) job.startedAt = startedAt;
  if (record.f !== undefined) job.finishedAt = record.f;
  if (leaseExpiresAt >= 0) job.leaseExpiresAt = leaseExpiresAt;
  if (record.r !== undefined) job.result = JSON.parse(record.r);
  if (record.rt) job.resultTruncated = true;
  if (record.e !== undefined) job.error = record.e;
  if (record.p !== undefined) job.progress = JSON.parse(record.p);
  if (record.tp !== undefined) job.traceparent = record.tp;
  if (record.ts !== undefined) job.tracestate = record.ts;
  if (history !== undefined) job.history = (JSON.parse(history) as StoredAttempt[]).map(toAttempt);
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
