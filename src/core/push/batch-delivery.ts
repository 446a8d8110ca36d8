// One push of a batch (docs/batches.md): the consecutive jobs of one group that a reservation
// leased together, in one signed POST, and what the answer means for each. No job completes
// unless the answer says so, and a job the endpoint did not get to goes back to its group
// untouched (`release`): a partial answer completes jobs 0..k-1, fails job k's attempt and
// releases the rest; a failure of the whole POST is job 0's failure, the rest released; 202
// leaves every lease to the endpoint's callbacks.
import { BATCH_ID_PREFIX, batchAnswerSchema } from '../../protocol/batch-body';
import { MAX_RESULT_BYTES } from '../../protocol/constants';
import { textHead } from '../../protocol/encoding';
import { traceHeaders } from '../../protocol/trace-context';
import type { LeasedJob, PushTarget, Settlement } from '../store/leased';
import { type DeliveryOptions, deliveryBody, failureOf, post } from './delivery';

/** The most an answer to a batch may hold: every job's result at its own limit, at most 4 MiB. */
const MAX_ANSWER_BYTES = 4 * 1_048_576;

/**
 * A batch's webhook-id: `bat_` and 32 hex digits of a SHA-256 over its jobs' own ids (each the
 * same on every attempt of its job), so the same jobs sent again have the same id and no other
 * batch has it.
 */
export async function batchId(jobs: readonly Pick<LeasedJob, 'webhookId'>[]): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(jobs.map((job) => job.webhookId).join('\n')));
  const hex = [...new Uint8Array(digest)].map((byte) => byte.toString(16).padStart(2, '0')).join('');
  return BATCH_ID_PREFIX + hex.slice(0, 32);
}

/** The batch body: its id, queue and group, and each job's delivery body as a single push sends it. */
export function batchBody(id: string, jobs: readonly LeasedJob[], publicUrl: string): string {
  const head = JSON.stringify({ id, queue: jobs[0]!.queue, group: jobs[0]!.group });
  return `${head.slice(0, -1)},"jobs":[${jobs.map((job) => deliveryBody(job, publicUrl)).join(',')}]}`;
}

/** A result as settle stores it: a JSON value, or its text cut to MAX_RESULT_BYTES. */
function resultOf(value: unknown): { result: unknown; resultTruncated?: true } {
  if (value === undefined) return { result: null };
  const json = JSON.stringify(value);
  if (new TextEncoder().encode(json).byteLength <= MAX_RESULT_BYTES) return { result: value };
  return { result: textHead(json, MAX_RESULT_BYTES), resultTruncated: true };
}

type Failure = { error: string; retry?: boolean; retryAfterMs?: number; status?: number };

/** Job `k` failed as `failure` says; the jobs before it completed with `results`, those after it are released. */
function settlementsOf(
  batch: string,
  jobs: readonly LeasedJob[],
  status: number | undefined,
  k: number,
  results: readonly unknown[],
  failure?: Failure,
): Settlement[] {
  return jobs.map((job, i): Settlement => {
    const lease = { id: job.id, lease: job.lease.token, batch: { id: batch, index: i, size: jobs.length }, ...(status !== undefined && { status }) };
    if (i < k || !failure) return { kind: 'complete', ...lease, ...resultOf(results[i]) };
    if (i === k) return { kind: 'fail', ...lease, ...failure };
    return { kind: 'release', id: job.id, lease: job.lease.token };
  });
}

/**
 * How a 2xx answer's body settles the batch: empty or `{"results": [...]}` completes every job,
 * `{"completed": k, ...}` completes the first k. A body cut at MAX_ANSWER_BYTES, or one that
 * names `completed` wrongly, cannot say which jobs are done: job 0's attempt fails.
 */
function answered(id: string, jobs: readonly LeasedJob[], status: number, text: string, truncated: boolean): Settlement[] {
  const settle = (k: number, results: readonly unknown[], failure?: Failure) => settlementsOf(id, jobs, status, k, results, failure);
  const wrong = (why: string) => settle(0, [], { error: `batch answer: ${why}`, status });
  if (truncated) return wrong(`larger than ${MAX_ANSWER_BYTES} bytes`);
  let body: unknown;
  try {
    body = text.trim() === '' ? undefined : JSON.parse(text);
  } catch {
    body = undefined; // not JSON: it said 2xx and nothing about any one job
  }
  const names = typeof body === 'object' && body !== null && 'completed' in body;
  const parsed = batchAnswerSchema.safeParse(body);
  if (!parsed.success) return names ? wrong('completed must be a whole number >= 0') : settle(jobs.length, []);
  const answer = parsed.data;
  if (!('completed' in answer) || answer.completed >= jobs.length) return settle(jobs.length, answer.results);
  return settle(answer.completed, answer.results, { error: answer.error, retry: answer.retry, status });
}

/**
 * Pushes a batch (the jobs one reservation leased for one delivery, in group order) and turns
 * the answer into one settlement per job, in order; null when the endpoint took it
 * asynchronously (202).
 */
export async function deliverBatch(jobs: readonly LeasedJob[], target: PushTarget, options: DeliveryOptions): Promise<Settlement[] | null> {
  const first = jobs[0]!;
  const id = await batchId(jobs);
  const headers = {
    // Unsigned hints, as for a single job (delivery.ts); the trace context is the first job's.
    'groupq-queue': first.queue,
    'groupq-group': encodeURIComponent(first.group),
    'groupq-batch-size': String(jobs.length),
    'groupq-lease-expires-at': String(first.lease.expiresAt),
    ...traceHeaders(first),
  };
  const body = batchBody(id, jobs, options.publicUrl);
  const limit = Math.min(MAX_ANSWER_BYTES, MAX_RESULT_BYTES * jobs.length + 1024);
  const answer = await post(target, { webhookId: id, body, headers, timeoutMs: first.timeoutMs, limit }, options);
  if (answer.status === 202) return null;
  if ('text' in answer && answer.status >= 200 && answer.status < 300) return answered(id, jobs, answer.status, answer.text, answer.truncated);
  // No answer, or another status (429 included: job 0 is held as a single job would be).
  const failure = failureOf(answer, options.now());
  return settlementsOf(id, jobs, failure.status, 0, [], failure);
}
