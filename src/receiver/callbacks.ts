// The lease callbacks a receiver sends back to groupq (docs/delivery.md#async-mode-jobs-longer-than-one-invocation): heartbeat,
// progress, complete and fail, each a POST of JSON to the URL the delivery named, authorized by
// the lease token in the body. 409 means the lease is gone (JOB_CANCELLED: the job was
// cancelled); brief network trouble is retried. A batch's jobs share one lease: batchCalls.
import { MAX_ERROR_CHARS } from '../protocol/constants';
import { parseErrorAnswer } from '../protocol/errors';
import { sleep } from '../protocol/sleep';
import type { Delivery } from '../protocol/delivery-body';
import { JobCancelledError, LeaseLostError } from './errors';

/** The fetch used for callbacks (a custom one for proxies or tests). */
export type FetchLike = (input: string, init: RequestInit) => Promise<Response>;

/** groupq refused a callback for a reason other than a lost lease (e.g. a result too large). */
export class CallbackError extends Error {
  override name = 'CallbackError';
  constructor(
    message: string,
    readonly status: number,
    readonly code: string | undefined,
  ) {
    super(message);
  }
}

/** Waits between tries: a heartbeat must land well inside its lease, so the waits stay short. */
const RETRY_DELAYS_MS = [250, 1_000];
/** Answers worth another try: the Worker or its Redis was briefly unavailable. */
const TRANSIENT = new Set([502, 503, 504]);
/** groupq caps a retryAfterMs, and a heartbeat's extendMs, at one day. */
export const DAY_MS = 86_400_000;

export type FailBody = { error: string; retry?: false; retryAfterMs?: number };

export interface LeaseCalls {
  heartbeat(extendMs?: number): Promise<{ expiresAt: number }>;
  progress(progress: unknown): Promise<void>;
  complete(result: unknown): Promise<{ state: string }>;
  fail(body: FailBody): Promise<{ state: string }>;
}

async function post(fetch: FetchLike, url: string, body: string): Promise<unknown> {
  for (let attempt = 0; ; attempt++) {
    let response: Response;
    try {
      response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    } catch (error) {
      if (attempt < RETRY_DELAYS_MS.length) {
        await sleep(RETRY_DELAYS_MS[attempt]!);
        continue;
      }
      throw error;
    }
    if (response.ok) return response.json();
    if (TRANSIENT.has(response.status) && attempt < RETRY_DELAYS_MS.length) {
      await response.body?.cancel().catch(() => {});
      await sleep(RETRY_DELAYS_MS[attempt]!);
      continue;
    }
    // groupq's error body, or undefineds for anything else.
    const { code, message } = parseErrorAnswer(await response.text().catch(() => '')) ?? {};
    // A retried complete or fail whose first try did land also gets 409: either way the lease is over.
    if (response.status === 409 && code === 'JOB_CANCELLED') throw new JobCancelledError(message ?? 'the job was cancelled');
    if (response.status === 409) throw new LeaseLostError(message ?? 'the lease is no longer held');
    throw new CallbackError(`${url}: HTTP ${response.status}${message ? `: ${message}` : ''}`, response.status, code);
  }
}

/** The four callbacks of one delivery, each carrying its lease token. */
export function leaseCalls(delivery: Delivery<unknown>, fetch: FetchLike): LeaseCalls {
  const { callbacks } = delivery;
  const lease = delivery.lease.token;
  return {
    async heartbeat(extendMs) {
      const answer = (await post(fetch, callbacks.heartbeat, JSON.stringify({ lease, extendMs }))) as { expiresAt: number };
      return { expiresAt: answer.expiresAt };
    },
    async progress(progress) {
      await post(fetch, callbacks.progress, JSON.stringify({ lease, progress }));
    },
    async complete(result) {
      // JSON.stringify drops an undefined result: groupq stores null then, as for an empty 200.
      return (await post(fetch, callbacks.complete, JSON.stringify({ lease, result }))) as { state: string };
    },
    async fail({ error, retry, retryAfterMs }) {
      const body = {
        lease,
        error: error.slice(0, MAX_ERROR_CHARS) || 'failed',
        retry,
        retryAfterMs: retryAfterMs === undefined ? undefined : Math.min(retryAfterMs, DAY_MS),
      };
      return (await post(fetch, callbacks.fail, JSON.stringify(body))) as { state: string };
    },
  };
}

/**
 * The callbacks of a batch as one LeaseCalls, for the one Lease its jobs share. A heartbeat on any
 * job of a batch renews them all, so heartbeats (and progress) go through the first job not yet
 * ended; complete ends that job and moves on to the next, in order, as groupq requires; fail ends
 * it, and groupq returns the jobs after it to their group. Each call waits for the one before, so
 * a heartbeat never crosses the complete of the job it goes through.
 */
export function batchCalls(jobs: Delivery<unknown>[], fetch: FetchLike): LeaseCalls {
  const calls = jobs.map((job) => leaseCalls(job, fetch));
  let head = 0;
  let previous: Promise<unknown> = Promise.resolve();
  const inTurn = <T>(call: (job: LeaseCalls) => Promise<T>): Promise<T> => {
    // Past the last job nothing is held: the last job's own callback then answers 409 (lease gone).
    const next = previous.then(() => call(calls[Math.min(head, calls.length - 1)]!));
    previous = next.catch(() => {});
    return next;
  };
  return {
    heartbeat: (extendMs) => inTurn((job) => job.heartbeat(extendMs)),
    progress: (progress) => inTurn((job) => job.progress(progress)),
    complete: (result) =>
      inTurn(async (job) => {
        const answer = await job.complete(result);
        head++;
        return answer;
      }),
    fail: (body) => inTurn((job) => job.fail(body)),
  };
}
