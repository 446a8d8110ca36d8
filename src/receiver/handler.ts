// createHandler: a whole endpoint from one job function. It verifies the delivery (401 if not
// genuine, 409 if a replayed copy, 413 past maxBodyBytes), parses the job's data (400, no
// retries, if it does not fit), runs the function, and answers with its result (200) or error
// (500). A job that runs asynchronously (`async: true`, or one about to outlive the
// dispatcher's wait) gets 202 instead and finishes in the background: heartbeats keep its
// lease, then the complete or fail callback reports how it ended. A function that has not
// ended after `maxDurationMs` is given up: the attempt fails and ctx.signal aborts.
import { type Delivery, LEASE_GRACE_MS } from '../protocol/delivery-body';
import { type FetchLike, leaseCalls } from './callbacks';
import { DeliveryVerificationError, MaxDurationError } from './errors';
import { type JobContext, Lease } from './lease';
import { type Captured, capture, endOf, parseErrorText, refusalStatus, responseOf, textResponse } from './run-end';
import { traceContextOf } from './trace';
import { type DeliveryVerifyOptions, createVerifier } from './verify';

/**
 * A delivery's groupq-request-id: a UUID, `cron-<uuid>` or a cf-ray. The header is not signed,
 * so only what fits those shapes is taken; anything else is undefined.
 */
function requestIdOf(headers: Headers): string | undefined {
  const id = headers.get('groupq-request-id');
  return id !== null && /^[A-Za-z0-9-]{1,64}$/.test(id) ? id : undefined;
}

export interface HandlerOptions<T> extends DeliveryVerifyOptions {
  /** Answer 202 at once and finish through the callbacks. @default false (auto: see docs/receiver.md#long-jobs-202-and-callbacks) */
  async?: boolean;
  /** Keeps background work alive after the response (a Worker's `ctx.waitUntil`). */
  waitUntil?: (promise: Promise<unknown>) => void;
  /** Parses the job's data, e.g. a zod schema; a throw answers 400 and fails the job without retries. */
  data?: { parse(value: unknown): T };
  /** The fetch used for the lease callbacks. @default globalThis.fetch */
  fetch?: FetchLike;
  /** Where trouble in the background goes (a callback that could not be sent). @default console.error */
  onError?: (error: unknown, job: Delivery<T>) => void;
  /**
   * Gives up on a function that has not ended after this long: the attempt fails (retried
   * like any failure) and ctx.signal aborts with a MaxDurationError. @default no limit
   */
  maxDurationMs?: number;
}

/** The job function: gets the job and its context, returns the result (any JSON value). */
export type JobFunction<T, R = unknown> = (job: Delivery<T>, ctx: JobContext) => R | Promise<R>;

/** The dispatcher stops waiting at timeoutMs; answer 202 this long before, so it arrives in time. */
function safetyMarginMs(budgetMs: number): number {
  return Math.min(1_000, Math.max(200, budgetMs / 5));
}

const TIMED_OUT = Symbol('timed out');

/**
 * Resolves `run`, or TIMED_OUT after `ms`, whichever comes first; the timer never outlives the
 * race (a pending timer would keep a Node process or a Worker invocation busy).
 */
async function raceTimer(run: Promise<Captured>, ms: number): Promise<Captured | typeof TIMED_OUT> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<typeof TIMED_OUT>((resolve) => {
    timer = setTimeout(() => resolve(TIMED_OUT), Math.max(0, ms));
  });
  try {
    return await Promise.race([run, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * `run`, or a failure with MaxDurationError once `ms` have passed, which also aborts `limit`
 * (the function's signal) so that a function that listens can stop its work.
 */
async function limitDuration(run: Promise<Captured>, ms: number | undefined, limit: AbortController): Promise<Captured> {
  if (ms === undefined) return run;
  const first = await raceTimer(run, ms);
  if (first !== TIMED_OUT) return first;
  const error = new MaxDurationError(`the job ran longer than maxDurationMs (${ms} ms) and was given up`);
  limit.abort(error);
  return { ok: false, error };
}

/**
 * Builds an endpoint: `(request) => Promise<Response>`, for any Fetch-API host (a Worker's fetch,
 * Deno.serve, Bun.serve, or Node through a small adapter; see examples/).
 */
export function createHandler<T = unknown, R = unknown>(
  fn: JobFunction<T, R>,
  options: HandlerOptions<T>,
): (request: Request) => Promise<Response> {
  const { maxDurationMs } = options;
  if (maxDurationMs !== undefined && !(Number.isFinite(maxDurationMs) && maxDurationMs > 0)) {
    throw new RangeError(`maxDurationMs must be a finite number > 0, got ${maxDurationMs}`);
  }
  const verify = createVerifier(options);
  const now = options.now ?? Date.now;
  const fetch: FetchLike = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
  const report = (job: Delivery<T>) => (error: unknown) =>
    options.onError ? options.onError(error, job) : console.error(`groupq: job ${job.id} (${job.queue}):`, error);

  return async function handleDelivery(request: Request): Promise<Response> {
    let delivery: Delivery<unknown>;
    try {
      delivery = await verify(request);
    } catch (error) {
      // 401 is an ordinary failed attempt: a delivery signed with a secret not yet configured here
      // goes through once the secret is. A replay is no attempt of groupq's (each attempt is
      // signed anew, under the job's one webhook-id): 409 tells it apart in logs.
      if (error instanceof DeliveryVerificationError) return textResponse(refusalStatus(error), error.message);
      throw error;
    }
    let job: Delivery<T>;
    try {
      job = { ...delivery, data: options.data ? options.data.parse(delivery.data) : (delivery.data as T) };
    } catch (error) {
      return textResponse(400, `the job's data is not valid: ${parseErrorText(error)}`, { 'groupq-retry': 'false' });
    }

    const onError = report(job);
    const sentAtSec = Number(request.headers.get('webhook-timestamp'));
    const lease = new Lease(job, leaseCalls(job, fetch), {
      now, onError, sentAtSec, trace: traceContextOf(request), requestId: requestIdOf(request.headers),
    });
    const limit = new AbortController();
    const signal = maxDurationMs === undefined ? lease.signal : AbortSignal.any([lease.signal, limit.signal]);
    const run = limitDuration(capture(() => fn(job, lease.context(signal))), maxDurationMs, limit);

    /** 202 now; the run ends in the background, kept alive by heartbeats, reported by callback. */
    const continueAsync = (): Response => {
      lease.keepAlive();
      const background = run.then((captured) => lease.finish(endOf(captured))).catch(onError);
      options.waitUntil?.(background);
      return new Response(null, { status: 202 });
    };

    if (options.async) return continueAsync();
    // The dispatcher waits timeoutMs for an answer, and the lease is that plus the grace.
    const budgetMs = lease.remainingMs() - LEASE_GRACE_MS;
    const first = await raceTimer(run, budgetMs - safetyMarginMs(budgetMs));
    return first === TIMED_OUT ? continueAsync() : responseOf(first);
  };
}
