// The errors a receiver uses: the two a job function throws to steer groupq's retries, the one a
// batch function throws to end its batch partway, the one verifyDelivery throws for a delivery it
// refuses, and the ones ctx.signal aborts with (the lease is gone, the job was cancelled, the
// function ran past maxDurationMs).

/** Thrown by a job function: fail the job now, without further attempts. */
export class NonRetryableError extends Error {
  override name = 'NonRetryableError';
}

/** Thrown by a job function: this attempt failed, try again after `retryAfterMs` (not the backoff). */
export class RetryAfterError extends Error {
  override name = 'RetryAfterError';
  readonly retryAfterMs: number;

  constructor(retryAfterMs: number, message = `retry after ${retryAfterMs} ms`) {
    super(message);
    if (!Number.isFinite(retryAfterMs) || retryAfterMs < 0) {
      throw new RangeError(`retryAfterMs must be a finite number >= 0, got ${retryAfterMs}`);
    }
    this.retryAfterMs = Math.ceil(retryAfterMs);
  }
}

/**
 * Thrown by a batch function (createBatchHandler) at job `completed` of its batch: jobs before it
 * complete with `results` (results[i] is job i's), job `completed` fails its attempt with `error`
 * (a NonRetryableError: for good; a RetryAfterError: see docs/receiver.md#batches), and the jobs
 * after it go back to the head of their group untouched, to come again in a later batch.
 */
export class BatchError extends Error {
  override name = 'BatchError';
  /** How many jobs, from the first, ended well: the index of the one that failed. */
  readonly completed: number;
  /** Why job `completed` failed: an Error, or any value thrown. */
  readonly error: unknown;
  /** The results of jobs 0..completed-1 (missing ones: null). */
  readonly results: readonly unknown[];

  constructor(completed: number, error: unknown, results: readonly unknown[] = []) {
    super(error instanceof Error ? error.message || error.name : String(error), { cause: error });
    if (!(Number.isSafeInteger(completed) && completed >= 0)) {
      throw new RangeError(`completed must be a whole number >= 0 (the index of the job that failed), got ${completed}`);
    }
    if (!Array.isArray(results)) throw new TypeError('results must be an array (the results of the jobs before the one that failed)');
    this.completed = completed;
    this.error = error;
    this.results = results;
  }
}

/**
 * Why a delivery was refused: `wrong_kind` is a genuine message of another kind (an outcome
 * callback or a batch sent to a delivery endpoint, or the reverse), `replayed` a copy of a delivery
 * accepted before (same webhook-id, timestamp and signature), `body_too_large` a body past
 * `maxBodyBytes`. The handlers answer 409 for `replayed`, 413 for `body_too_large`, 401 for the
 * others.
 */
export type VerificationFailure =
  | 'missing_headers'
  | 'bad_timestamp'
  | 'timestamp_out_of_tolerance'
  | 'body_too_large'
  | 'bad_signature'
  | 'wrong_kind'
  | 'bad_body'
  | 'replayed';

/** A request that is not a genuine, fresh groupq delivery. The message says why. */
export class DeliveryVerificationError extends Error {
  override name = 'DeliveryVerificationError';
  readonly reason: VerificationFailure;

  constructor(reason: VerificationFailure, message: string) {
    super(message);
    this.reason = reason;
  }
}

/**
 * The lease of the job being run is no longer this receiver's (it lapsed and the job went back
 * to the queue, the job was completed elsewhere, or its queue was deleted): the work's result
 * will not be recorded. It is the reason of `ctx.signal` when that aborts.
 */
export class LeaseLostError extends Error {
  override name = 'LeaseLostError';
}

/**
 * The lease is gone because the job was cancelled (groupq answered JOB_CANCELLED): stop the
 * work, nothing of it will be recorded. A LeaseLostError, so code that handles that handles this.
 */
export class JobCancelledError extends LeaseLostError {
  override name = 'JobCancelledError';
}

/**
 * The job function did not end within the handler's `maxDurationMs`: the attempt fails with
 * this error (retried like any other), and it is the reason of `ctx.signal` when that aborts.
 */
export class MaxDurationError extends Error {
  override name = 'MaxDurationError';
}
