// What createHandler and createBatchHandler share once a request is in: the answers to a refused
// one (401, 409, 413), the lease of a verified one, and running the function in time. The run is
// answered synchronously when it ends before the dispatcher stops waiting; with `async: true`,
// or when it is about to outlive that wait, the answer is 202 and the run ends in the
// background, its lease kept by heartbeats. A function still running after `maxDurationMs` is
// given up: its run ends with a MaxDurationError and its signal aborts. A request comes as a
// Web Request, answered with a Response, or as `{ headers, body }` (RawMessage), answered with
// `{ status, headers, body }`: the same run either way.
import { type Delivery, LEASE_GRACE_MS } from '../protocol/delivery-body';
import type { FetchLike, LeaseCalls } from './callbacks';
import { DeliveryVerificationError, MaxDurationError } from './errors';
import { Lease } from './lease';
import { type RawMessage, headerOf, isRequest } from './message';
import { type Captured, capture, refusalStatus, textResponse } from './run-end';
import { traceContextOf } from './trace';
import type { DeliveryVerifyOptions } from './verify';

/**
 * The answer to a RawMessage, for a framework to send as it is: the status, the headers (names in
 * lower case) and the body as text ('' when there is none, as for a 202).
 */
export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * What createHandler, createBatchHandler and createOutcomeHandler build: given a Web `Request` (a Worker, Deno, Bun,
 * a Next.js route handler) it answers a `Response`; given `{ headers, body }` with the raw body
 * (Express, Fastify, Lambda) it answers `{ status, headers, body }`.
 */
export interface Endpoint {
  (request: Request): Promise<Response>;
  (message: RawMessage): Promise<RawResponse>;
}

/** A Response as a RawResponse. Every answer of the kit is small text or JSON, so reading it whole costs nothing. */
async function rawOf(response: Response): Promise<RawResponse> {
  const headers: Record<string, string> = {};
  response.headers.forEach((value, name) => {
    headers[name] = value;
  });
  return { status: response.status, headers, body: await response.text() };
}

/** The Endpoint over `handle`: a RawMessage gets its Response as a RawResponse. */
export function endpointOf(handle: (message: Request | RawMessage) => Promise<Response>): Endpoint {
  return (async (message: Request | RawMessage) => {
    const response = await handle(message);
    return isRequest(message) ? response : rawOf(response);
  }) as Endpoint;
}

/** The options of both handlers, besides what the function gets. */
export interface RunOptions extends DeliveryVerifyOptions {
  /** Answer 202 at once and finish through the callbacks. @default false (auto: see docs/receiver.md#long-jobs-202-and-callbacks) */
  async?: boolean;
  /** Keeps background work alive after the response (a Worker's `ctx.waitUntil`). */
  waitUntil?: (promise: Promise<unknown>) => void;
  /** The fetch used for the lease callbacks. @default globalThis.fetch */
  fetch?: FetchLike;
  /**
   * Gives up on a function that has not ended after this long: the attempt fails (retried
   * like any failure) and ctx.signal aborts with a MaxDurationError. @default no limit
   */
  maxDurationMs?: number;
}

/** The options checked (a RangeError at once for a bad maxDurationMs), with the clock and fetch to use. */
export function runSetup(options: RunOptions): { now: () => number; fetch: FetchLike } {
  const { maxDurationMs } = options;
  if (maxDurationMs !== undefined && !(Number.isFinite(maxDurationMs) && maxDurationMs > 0)) {
    throw new RangeError(`maxDurationMs must be a finite number > 0, got ${maxDurationMs}`);
  }
  return { now: options.now ?? Date.now, fetch: options.fetch ?? ((input, init) => globalThis.fetch(input, init)) };
}

/**
 * The verified body, or the answer to a request refused. 401 is an ordinary failed attempt: one
 * signed with a secret not yet configured here goes through once the secret is. A replay is no
 * attempt of groupq's (each attempt is signed anew, under the same webhook-id): 409 tells it
 * apart in logs. 413 a body past maxBodyBytes. `statusOf` may say otherwise for some reasons.
 * Anything else thrown is no refusal: it goes on.
 */
export async function verifiedOrRefused<B>(
  verify: (message: Request | RawMessage) => Promise<B>,
  message: Request | RawMessage,
  statusOf: (error: DeliveryVerificationError) => number = refusalStatus,
): Promise<B | Response> {
  try {
    return await verify(message);
  } catch (error) {
    if (error instanceof DeliveryVerificationError) return textResponse(statusOf(error), error.message);
    throw error;
  }
}

/**
 * A delivery's groupq-request-id: a UUID, `cron-<uuid>` or a cf-ray. The header is not signed,
 * so only what fits those shapes is taken; anything else is undefined.
 */
function requestIdOf(message: Request | RawMessage): string | undefined {
  const id = headerOf(message, 'groupq-request-id');
  return id !== null && /^[A-Za-z0-9-]{1,64}$/.test(id) ? id : undefined;
}

/** The lease a message delivered (a batch's first job stands for all: they share one deadline), held through `calls`. */
export function leaseOf(
  delivery: Delivery<unknown>,
  calls: LeaseCalls,
  message: Request | RawMessage,
  now: () => number,
  onError: (error: unknown) => void,
): Lease {
  const sentAtSec = Number(headerOf(message, 'webhook-timestamp'));
  return new Lease(delivery, calls, { now, onError, sentAtSec, trace: traceContextOf(message), requestId: requestIdOf(message) });
}

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

/** How a run is answered: at once from its end, or after a 202 through the callbacks. */
export interface Answers {
  /** The synchronous answer to a run that ended in time. */
  respond(run: Captured): Response;
  /** Ends the run through the lease's callbacks, after a 202. */
  finish(run: Captured): Promise<void>;
  onError: (error: unknown) => void;
}

/**
 * Runs `start` with its signal (the lease's, and maxDurationMs's) and answers: 202 at once with
 * `async`; else the run's own answer when it ends within the dispatcher's wait, or 202 shortly
 * before that wait ends. After a 202 the lease is heartbeated until `finish` has reported the end.
 */
export async function answerRun(lease: Lease, start: (signal: AbortSignal) => unknown, options: RunOptions, answers: Answers): Promise<Response> {
  const { maxDurationMs } = options;
  const limit = new AbortController();
  const signal = maxDurationMs === undefined ? lease.signal : AbortSignal.any([lease.signal, limit.signal]);
  const run = limitDuration(capture(() => start(signal)), maxDurationMs, limit);

  /** 202 now; the run ends in the background, kept alive by heartbeats, reported by callback. */
  const continueAsync = (): Response => {
    lease.keepAlive();
    const background = run.then(answers.finish).catch(answers.onError);
    options.waitUntil?.(background);
    return new Response(null, { status: 202 });
  };

  if (options.async) return continueAsync();
  // The dispatcher waits timeoutMs for an answer, and the lease is that plus the grace.
  const budgetMs = lease.remainingMs() - LEASE_GRACE_MS;
  const first = await raceTimer(run, budgetMs - safetyMarginMs(budgetMs));
  return first === TIMED_OUT ? continueAsync() : answers.respond(first);
}
