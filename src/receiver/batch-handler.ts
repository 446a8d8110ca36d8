// createBatchHandler: a whole endpoint for a queue with `batch` set (docs/receiver.md#batches),
// from one function over a batch's jobs. It verifies the batch as createHandler verifies a
// delivery (401, 409 a replayed copy, 413 past maxBodyBytes, 400 a signed body that is no
// batch), parses each job's data in order, runs the function over the jobs before the first
// that does not parse, and answers with every result, or with a partial answer when the function
// throws BatchError(k) partway: jobs before k complete, job k fails, the rest come again later.
// Asynchronously (`async: true`, or about to outlive the dispatcher's wait) it answers 202, keeps
// the batch's one lease by heartbeats, then ends the jobs one by one through their callbacks.
// Like createHandler's, it takes a Web Request or `{ headers, body }` (examples/frameworks/).
import type { Batch } from '../protocol/batch-body';
import type { Delivery } from '../protocol/delivery-body';
import { batchEndOf, batchResponseOf, finishBatch } from './batch-end';
import { type FailBody, batchCalls } from './callbacks';
import { type Endpoint, type RunOptions, answerRun, endpointOf, leaseOf, runSetup, verifiedOrRefused } from './endpoint';
import type { Lease } from './lease';
import type { DeliveryVerificationError } from './errors';
import { type Captured, parseErrorText, refusalStatus } from './run-end';
import { type RawMessage, createBatchVerifier } from './verify';

/** What a batch function gets besides the jobs (each job carries its own attempt and maxAttempts). */
export interface BatchContext {
  /** The batch's webhook-id (`bat_` and 32 hex digits): the same when the same jobs come again. */
  batchId: string;
  queue: string;
  group: string;
  /**
   * Aborts when the batch's lease is lost (reason: LeaseLostError), when the job heartbeats go
   * through (the first not yet ended) was cancelled (JobCancelledError, learned at the next
   * heartbeat), or at the handler's maxDurationMs (MaxDurationError).
   */
  signal: AbortSignal;
  /** When the batch's lease ends unless heartbeated (epoch ms); heartbeats move it. */
  readonly leaseExpiresAt: number;
  /**
   * Extends the lease of every job of the batch to now + `extendMs` (default: the queue's
   * timeoutMs). Batches answered with 202 are heartbeated automatically.
   */
  heartbeat(extendMs?: number): Promise<{ expiresAt: number }>;
  /** The id of the groupq request or cron run that pushed this batch (groupq-request-id); undefined when absent. */
  requestId: string | undefined;
}

export interface BatchHandlerOptions<T> extends RunOptions {
  /**
   * Parses each job's data, e.g. a zod schema. A throw at job k runs the function over jobs
   * 0..k-1 only, then fails job k without retries; the jobs after it come again in a later batch.
   */
  data?: { parse(value: unknown): T };
  /** Where trouble in the background goes (a callback that could not be sent). @default console.error */
  onError?: (error: unknown, batch: Batch) => void;
}

/**
 * The batch function: gets the jobs in group order and the batch's context; returns their results
 * (results[i] is job i's, any JSON value; none: null each), or throws BatchError(k, error,
 * results) to complete jobs 0..k-1 and fail job k. Any other throw fails the first job.
 */
export type BatchFunction<T, R = unknown> = (jobs: Delivery<T>[], ctx: BatchContext) => readonly R[] | void | Promise<readonly R[] | void>;

/** The jobs whose data parses, from the first up to one that does not, and that one's failure (its data would fail every attempt). */
function parseJobs<T>(jobs: Delivery<unknown>[], data: { parse(value: unknown): T } | undefined): { parsed: Delivery<T>[]; refused?: FailBody } {
  if (!data) return { parsed: jobs as Delivery<T>[] };
  const parsed: Delivery<T>[] = [];
  for (const job of jobs) {
    try {
      parsed.push({ ...job, data: data.parse(job.data) });
    } catch (error) {
      return { parsed, refused: { error: `the job's data is not valid: ${parseErrorText(error)}`, retry: false } };
    }
  }
  return { parsed };
}

/**
 * A genuine request whose body is no batch (not JSON, or not the shape) is answered 400: groupq
 * and this kit disagree on the batch body, which no secret fixes. The rest as createHandler.
 */
function batchRefusalStatus(error: DeliveryVerificationError): number {
  return error.reason === 'bad_body' ? 400 : refusalStatus(error);
}

/** The batch function's context, on the batch's lease. */
function contextOf(batch: Batch, lease: Lease, signal: AbortSignal): BatchContext {
  const job = lease.context(signal);
  return {
    batchId: batch.id,
    queue: batch.queue,
    group: batch.group,
    signal,
    requestId: job.requestId,
    get leaseExpiresAt() {
      return job.leaseExpiresAt;
    },
    heartbeat: job.heartbeat,
  };
}

/**
 * Builds an endpoint for batches, taking a Web Request or `{ headers, body }` like createHandler's
 * (and answering the same way). Its queue must have `batch` set: a single job's delivery (`msg_`) is refused
 * with 401 (`wrong_kind`), as createHandler refuses a batch.
 */
export function createBatchHandler<T = unknown, R = unknown>(
  fn: BatchFunction<T, R>,
  options: BatchHandlerOptions<T>,
): Endpoint {
  const { now, fetch } = runSetup(options);
  const verify = createBatchVerifier(options);

  return endpointOf(async function handleBatch(message: Request | RawMessage): Promise<Response> {
    const batch = await verifiedOrRefused(verify, message, batchRefusalStatus);
    if (batch instanceof Response) return batch;
    const { parsed, refused } = parseJobs(batch.jobs, options.data);
    // The first job's data does not parse: nothing runs, and the answer needs no lease.
    if (parsed.length === 0) return batchResponseOf({ completed: 0, results: [], fail: refused });

    const onError = (error: unknown) =>
      options.onError ? options.onError(error, batch) : console.error(`groupq: batch ${batch.id} (${batch.queue}):`, error);
    const lease = leaseOf(batch.jobs[0]!, batchCalls(batch.jobs, fetch), message, now, onError);
    const endOf = (run: Captured) => batchEndOf(run, parsed.length, refused);
    return answerRun(lease, (signal) => fn(parsed, contextOf(batch, lease, signal)), options, {
      respond: (run) => batchResponseOf(endOf(run)),
      finish: (run) => finishBatch(lease, endOf(run)),
      onError,
    });
  });
}
