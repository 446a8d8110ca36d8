// Turns the tuples scripts return into the job objects the API shows.
import type { JobState } from './job-input';
import type { JobView } from './replies';

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
}

/** The state fields of a raw job record, `<state JSON>\n<data JSON>` (src/lua/includes/job.lua). */
export function recordOf(raw: string): JobRecord {
  return JSON.parse(raw.slice(0, raw.indexOf('\n'))) as JobRecord;
}

/** {id, state JSON, data, state, startedAt, expiresAt, maxAttempts} from view.lua. */
export function toJob(queue: string, [id, stateJson, data, state, startedAt, expiresAt, maxAttempts]: JobView): Job {
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
