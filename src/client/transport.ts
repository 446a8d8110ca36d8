// HTTP for the client: JSON in and out, the bearer token, and safe retries. Only idempotent
// calls are retried (the caller says which), and only when the answer never came or was a 503:
// resending a call that may have happened must not do it twice. A 503's Retry-After sets the
// wait before the next try.
import { GroupqError, errorFromResponse } from './errors';

export interface TransportOptions {
  /** The Worker's origin, e.g. https://groupq.example.workers.dev. */
  url: string;
  /** The admin token, or a queue's publish token (enqueue only). */
  token: string;
  /** A fetch to use instead of the global one. */
  fetch?: typeof fetch;
  /** Retries of an idempotent call after a network error or a 503 (waiting what its Retry-After asks). @default 3 */
  retries?: number;
  /** Give up on one attempt after this long. @default 30000 */
  timeoutMs?: number;
}

export interface Call {
  method: 'GET' | 'PUT' | 'POST' | 'PATCH' | 'DELETE';
  /** Path below the origin, already percent-encoded. */
  path: string;
  body?: unknown;
  /** True when sending it twice has the effect of sending it once. */
  idempotent: boolean;
  /** The caller's: aborting it ends the call (and its retries) with ABORTED. */
  signal?: AbortSignal;
  /** This call's bound on each attempt, instead of the client's. */
  timeoutMs?: number;
  /** Request headers of its own (trace context), sent on every attempt. */
  headers?: Record<string, string>;
}

const RETRY_BASE_MS = 100;
const RETRY_MAX_MS = 2000;
/** A 503 asking for a longer wait than this is not waited for: the caller gets it at once. */
export const MAX_RETRY_AFTER_MS = 60_000;

export function createTransport(options: TransportOptions) {
  const origin = options.url.replace(/\/+$/, '');
  // Calling a stored global fetch as a method throws "Illegal invocation" in browsers.
  const send = options.fetch ?? ((input: RequestInfo | URL, init?: RequestInit) => fetch(input, init));
  const retries = options.retries ?? 3;
  const timeoutMs = options.timeoutMs ?? 30_000;

  function noAnswer(call: Call, error: unknown): GroupqError {
    if (call.signal?.aborted) return aborted(call);
    const reason = error instanceof Error ? error.message : String(error);
    const message = `${call.method} ${origin}${call.path} got no answer: ${reason}`;
    return new GroupqError('NETWORK_ERROR', 0, message, undefined, undefined, { cause: error });
  }

  function aborted(call: Call): GroupqError {
    const message = `${call.method} ${origin}${call.path} was aborted by its signal`;
    return new GroupqError('ABORTED', 0, message, undefined, undefined, { cause: call.signal?.reason });
  }

  /** Waits `ms`, or less when the call's signal aborts. */
  function pause(call: Call, ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        call.signal?.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      call.signal?.addEventListener('abort', done, { once: true });
    });
  }

  async function attempt(call: Call): Promise<Response> {
    const headers: Record<string, string> = { ...call.headers, authorization: `Bearer ${options.token}`, accept: 'application/json' };
    if (call.body !== undefined) headers['content-type'] = 'application/json';
    const timeout = AbortSignal.timeout(call.timeoutMs ?? timeoutMs);
    try {
      return await send(`${origin}${call.path}`, {
        method: call.method,
        headers,
        body: call.body === undefined ? undefined : JSON.stringify(call.body),
        signal: call.signal ? AbortSignal.any([call.signal, timeout]) : timeout,
      });
    } catch (error) {
      throw noAnswer(call, error);
    }
  }

  /** A 2xx answer's JSON. A body cut short (or past timeoutMs) is no answer at all; one that
   * is not JSON came from something other than groupq (a proxy's or a portal's page). */
  async function readJson<T>(call: Call, response: Response): Promise<T> {
    let text: string;
    try {
      text = await response.text();
    } catch (error) {
      throw noAnswer(call, error);
    }
    if (text === '') return undefined as T;
    try {
      return JSON.parse(text) as T;
    } catch {
      const start = text.trim().slice(0, 200);
      const message = `${call.method} ${origin}${call.path}: HTTP ${response.status} with a body that is not JSON: ${start}`;
      const requestId = response.headers.get('x-request-id') ?? undefined;
      throw new GroupqError('BAD_RESPONSE', response.status, message, undefined, undefined, requestId === undefined ? undefined : { requestId });
    }
  }

  /**
   * Opens an event stream (events.ts reads it and resumes it): the answer as soon as its headers
   * came, whatever its status. `timeoutMs` bounds that wait only; the stream then lasts as long
   * as `signal` lets it.
   */
  function open(path: string, signal: AbortSignal, lastEventId?: string): Promise<Response> {
    const headers: Record<string, string> = { authorization: `Bearer ${options.token}`, accept: 'text/event-stream' };
    if (lastEventId !== undefined && lastEventId !== '') headers['last-event-id'] = lastEventId;
    return connect(send, `${origin}${path}`, headers, signal, timeoutMs);
  }

  return Object.assign(async function request<T>(call: Call): Promise<T> {
    for (let retry = 0; ; retry++) {
      if (call.signal?.aborted) throw aborted(call);
      let failure: GroupqError;
      try {
        const response = await attempt(call);
        if (response.ok) return await readJson<T>(call, response);
        failure = await errorFromResponse(response);
      } catch (error) {
        if (!(error instanceof GroupqError)) throw error;
        failure = error;
      }
      const asked = failure.status === 503 ? failure.retryAfterMs : undefined;
      if (!call.idempotent || !failure.retryable || retry >= retries || (asked ?? 0) > MAX_RETRY_AFTER_MS) throw failure;
      // Full jitter: clients that failed together do not come back together.
      const capped = Math.min(RETRY_MAX_MS, RETRY_BASE_MS * 2 ** retry);
      await pause(call, asked ?? Math.random() * capped);
    }
  }, { open, retries });
}

/**
 * Sends one call and answers its JSON (a function, not a fetch `Request`); `open` opens an event
 * stream with the same token, and `retries` is the client's setting, which a stream's first open
 * follows too.
 */
export type Transport = ReturnType<typeof createTransport>;

/** The fetch a stream goes out with: the caller's, or the global one. */
export type StreamFetch = (input: string, init: RequestInit) => Promise<Response>;

/**
 * A stream's GET: the answer once its headers came. `timeoutMs` bounds that wait only, so a
 * stream lasts as long as `signal` lets it. No answer is NETWORK_ERROR; the caller's signal
 * aborting is left to the caller to tell.
 */
export async function connect(send: StreamFetch, url: string, headers: Record<string, string>, signal: AbortSignal, timeoutMs: number): Promise<Response> {
  const connecting = new AbortController();
  const timer = setTimeout(() => connecting.abort(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
  try {
    return await send(url, { method: 'GET', headers, signal: AbortSignal.any([signal, connecting.signal]) });
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new GroupqError('NETWORK_ERROR', 0, `GET ${url} got no answer: ${reason}`, undefined, undefined, { cause: error });
  } finally {
    clearTimeout(timer);
  }
}
