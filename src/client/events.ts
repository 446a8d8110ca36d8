// Following event streams from the client (issue 30): `queue.events()`, `queue.jobEvents(id)` and
// `followEventsUrl(url)` are async iterators of typed job events, read with SseParser from a fetch
// whose body streams in chunks (Node, Workers, Deno, Bun and browsers alike; EventSource exists
// only in browsers and cannot send the admin token).
//
// They resume by themselves, as EventSource does: when a connection drops or the Worker ends it
// (a deploy, the hub restarting), the next one goes out after the server's `retry:` hint (or a
// jittered backoff after a failure) with the last id read, and the server sends what came
// meanwhile, a `gap` first when it no longer holds all of it. Unlike EventSource they give up on
// an answer that will not change by asking again (400, 401, 403, 404...), with the client's
// GroupqError, and a job's iterator ends after the job's final event, or on the 204 a resume
// after that end gets.
//
// dist/client.js imports nothing: protocol/events.ts runs zod, so only its types come here, and
// the event names are listed again below, checked against them by the compiler.
import { isFinished } from '../protocol/constants';
import type { StreamEvent, StreamEventName } from '../protocol/events';
import { SseParser } from '../protocol/sse';
import { GroupqError, errorFromResponse } from './errors';
import { type StreamFetch, type Transport, connect } from './transport';

export interface FollowOptions {
  /** Ends the iteration: the pending `next()` throws GroupqError ABORTED (a `break` ends it quietly). */
  signal?: AbortSignal;
  /** Resumes after this event: the `eventId` of the last event an earlier iteration yielded. */
  lastEventId?: string;
  /** Called each time a connection opens, the first and every resume: a live indicator lights up. */
  onOpen?: () => void;
  /**
   * Called when a connection failed or ended and the next is tried after `waitMs`: a live
   * indicator dims, a view may poll meanwhile. `error` is what failed (none: the Worker ended the
   * stream on purpose).
   */
  onRetry?: (waitMs: number, error?: GroupqError) => void;
}

export interface QueueEventsOptions extends FollowOptions {
  /** Only the events of this group. */
  group?: string;
}

export interface EventsUrlOptions extends FollowOptions {
  /** A fetch to use instead of the global one. */
  fetch?: typeof fetch;
  /** Give up on a connection whose answer has not begun after this long. @default 30000 */
  timeoutMs?: number;
}


/** Opens one connection: resolves with the answer (any status), rejects with a GroupqError. */
type Opener = (lastEventId: string | undefined, signal: AbortSignal) => Promise<Response>;

/** The names an iterator yields; another (one a later Worker adds) is skipped. */
const NAMES: Record<StreamEventName, true> = {
  added: true, active: true, progress: true, retrying: true, completed: true, failed: true, cancelled: true, expired: true, gap: true,
};

/** The Worker writes a comment every 15 s: a connection silent for three of them is dead. */
export const STREAM_IDLE_MS = 45_000;
/** The wait before a resume when the Worker gave no `retry:` hint (EventSource waits "a few seconds"). */
const DEFAULT_RETRY_MS = 1000;
const BACKOFF_BASE_MS = 250;
const BACKOFF_MAX_MS = 30_000;

function aborted(what: string, signal: AbortSignal): GroupqError {
  return new GroupqError('ABORTED', 0, `${what} was aborted by its signal`, undefined, undefined, { cause: signal.reason });
}

/** Asking again may get another answer: none came, the Worker failed (5xx), or it asked to slow down. */
const worthRetrying = (error: GroupqError) => error.code !== 'ABORTED' && (error.status === 0 || error.status >= 500 || error.status === 429 || error.status === 408);

/** Waits `ms`, or less when `signal` aborts. */
function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}

/** One SSE event as the iterator yields it; undefined for a name it does not know. */
function typed(type: string, data: string, lastEventId: string, what: string): StreamEvent | undefined {
  if (!Object.hasOwn(NAMES, type)) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(data);
  } catch {
    throw new GroupqError('BAD_RESPONSE', 200, `${what}: the data of a ${type} event is not JSON: ${data.slice(0, 200)}`);
  }
  // `gap` has no id of its own: it says where the reader stands, not an event to resume after.
  return (type === 'gap' ? { event: type, data: value } : { event: type, eventId: lastEventId, data: value }) as StreamEvent;
}

/**
 * The events of one stream, across as many connections as it takes. `job`: the stream of one job,
 * which ends after its final event. `retries`: failures in a row before the first connection
 * opens that are borne (the client's `retries`); once a connection has opened, the iterator
 * keeps resuming until its signal aborts, as EventSource does.
 */
export async function* follow(open: Opener, what: string, job: boolean, retries: number, options: FollowOptions): AsyncGenerator<StreamEvent, void, undefined> {
  const { signal } = options;
  const parser = new SseParser(options.lastEventId === undefined ? {} : { lastEventId: options.lastEventId });
  let opened = false;
  let failures = 0;
  for (;;) {
    if (signal?.aborted) throw aborted(what, signal);
    const connection = new AbortController();
    const leave = () => connection.abort(signal?.reason);
    signal?.addEventListener('abort', leave, { once: true });
    let idle: ReturnType<typeof setTimeout> | undefined;
    let failure: GroupqError | undefined;
    let live = false;
    try {
      const response = await open(parser.lastEventId || undefined, connection.signal);
      // 204: nothing more will come (a job's stream resumed after its end), as EventSource reads it.
      if (response.status === 204) return;
      if (!response.ok) throw await errorFromResponse(response);
      if (!/^text\/event-stream\b/i.test(response.headers.get('content-type') ?? '') || !response.body) {
        throw new GroupqError('BAD_RESPONSE', response.status, `${what}: HTTP ${response.status} is not an event stream (something other than groupq answered)`);
      }
      opened = live = true;
      failures = 0;
      options.onOpen?.();
      const reader = response.body.getReader();
      const stall = () => connection.abort(new GroupqError('NETWORK_ERROR', 0, `${what}: nothing came for ${STREAM_IDLE_MS} ms`));
      idle = setTimeout(stall, STREAM_IDLE_MS);
      for (;;) {
        let chunk: ReadableStreamReadResult<Uint8Array>;
        try {
          chunk = await reader.read();
        } catch (error) {
          const reason = connection.signal.reason instanceof GroupqError ? connection.signal.reason.message : String(error);
          throw new GroupqError('NETWORK_ERROR', 0, `${what}: the stream broke: ${reason}`, undefined, undefined, { cause: error });
        }
        // Not counted while the caller works on what it is given: a slow loop is no dead stream.
        clearTimeout(idle);
        // The end of a connection: end() drops an event cut short (its id does not count either).
        const events = chunk.done ? parser.end() : parser.feed(chunk.value);
        for (const { type, data, lastEventId } of events) {
          const event = typed(type, data, lastEventId, what);
          if (!event) continue;
          yield event;
          if (job && isFinished(event.event)) return;
        }
        if (chunk.done) break;
        idle = setTimeout(stall, STREAM_IDLE_MS);
      }
    } catch (error) {
      if (signal?.aborted) throw aborted(what, signal);
      if (!(error instanceof GroupqError) || !worthRetrying(error)) throw error;
      failure = error;
      // What a connection cut midway left unread starts over: the resume sends what it missed.
      parser.end();
    } finally {
      clearTimeout(idle);
      signal?.removeEventListener('abort', leave);
      // Closes a connection still open: a `break` in the caller's loop, a job's final event.
      connection.abort();
    }
    // A stream that was open and ended or broke comes back after the Worker's hint, as
    // EventSource does; a connection that failed to open backs off, further after each failure.
    let waitMs = parser.retry ?? DEFAULT_RETRY_MS;
    if (failure && !live) {
      failures++;
      if (!opened && failures > retries) throw failure;
      // Full jitter, as the transport's retries: readers cut off together do not all come back at once.
      waitMs = failure.retryAfterMs ?? Math.random() * Math.min(BACKOFF_MAX_MS, BACKOFF_BASE_MS * 2 ** failures);
    }
    options.onRetry?.(waitMs, failure);
    await pause(waitMs, signal);
  }
}

/** The stream at `path` of the client's Worker (encoded, with its query), opened with the client's token. */
export function followPath(request: Transport, path: string, job: boolean, options: FollowOptions): AsyncGenerator<StreamEvent, void, undefined> {
  return follow((lastEventId, signal) => request.open(path, signal, lastEventId), `GET ${path}`, job, request.retries, options);
}

/**
 * Follows the job stream at `eventsUrl`, the link an enqueue with a publish token answers (or the
 * admin mints), whose capability is in its query string: no Authorization header, so a page on
 * any origin can open it, in browsers and elsewhere. It resumes with `?lastEventId=` rather than
 * the Last-Event-ID header, a request a browser sends without a CORS preflight. A relative URL
 * is taken relative to the page. Ends after the job's final event; an expired capability is
 * GroupqError UNAUTHORIZED (details.reason "expired"): ask for a new URL.
 */
export function followEventsUrl(eventsUrl: string | URL, options: EventsUrlOptions = {}): AsyncGenerator<StreamEvent, void, undefined> {
  // Calling a stored global fetch as a method throws "Illegal invocation" in browsers.
  const send: StreamFetch = options.fetch ?? ((input, init) => fetch(input, init));
  const page = (globalThis as { location?: { href?: string } }).location?.href;
  const url = new URL(String(eventsUrl), page);
  const open: Opener = (lastEventId, signal) => {
    const at = new URL(url);
    if (lastEventId !== undefined) at.searchParams.set('lastEventId', lastEventId);
    return connect(send, at.href, { accept: 'text/event-stream' }, signal, options.timeoutMs ?? 30_000);
  };
  return follow(open, `GET ${url.origin}${url.pathname}`, true, 3, options);
}
