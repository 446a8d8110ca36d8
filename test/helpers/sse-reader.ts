// An SSE reader for tests: opens a stream with fetch (as the client kit will) and reads it with
// src/protocol/sse.ts's SseParser, keeping every event, and the comments (which the parser drops
// as the standard says) apart, so a test can wait for either and see when the stream ended.
import { SseParser, type SseEvent } from '../../src/protocol/sse';

export interface SseReader {
  res: Response;
  /** Every event read so far, in order. */
  events: SseEvent[];
  /** Every comment line read so far, without its colon. */
  comments: string[];
  /** The `retry:` value read, if any. */
  retry(): number | undefined;
  /** What a reconnect would send as Last-Event-ID. */
  lastEventId(): string;
  /** Resolves once `n` events have been read (or rejects after `timeoutMs`). */
  waitForEvents(n: number, timeoutMs?: number): Promise<SseEvent[]>;
  /** Resolves once a comment has been read that `test` accepts. */
  waitForComment(test: (comment: string) => boolean, timeoutMs?: number): Promise<string>;
  /** Settles when the server ended the stream. */
  ended: Promise<void>;
  /** Leaves: the connection is cut, as a reader that goes away. */
  close(): void;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until<T>(check: () => T | undefined, timeoutMs: number, what: () => string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const got = check();
    if (got !== undefined) return got;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what()}`);
    await sleep(10);
  }
}

/** Opens `url` (a 200 text/event-stream is expected; the caller checks) and reads it in the background. */
export async function openSse(url: string, init: RequestInit = {}, lastEventId?: string): Promise<SseReader> {
  const controller = new AbortController();
  const headers = new Headers(init.headers);
  headers.set('accept', 'text/event-stream');
  if (lastEventId !== undefined) headers.set('last-event-id', lastEventId);
  const res = await fetch(url, { ...init, headers, signal: controller.signal });
  const parser = new SseParser(lastEventId === undefined ? {} : { lastEventId });
  const events: SseEvent[] = [];
  const comments: string[] = [];
  const decoder = new TextDecoder();
  let pending = '';
  let done = false;
  const ended = (async () => {
    if (!res.body || !res.ok) return;
    const reader = res.body.getReader();
    try {
      for (;;) {
        const { value, done: end } = await reader.read();
        if (end) break;
        events.push(...parser.feed(value));
        // Comments, from the same bytes: whole lines that start with a colon.
        const lines = (pending + decoder.decode(value, { stream: true })).split('\n');
        pending = lines.pop() ?? '';
        for (const line of lines) if (line.startsWith(':')) comments.push(line.slice(1).trimStart());
      }
      events.push(...parser.end());
    } catch {
      // aborted by close()
    } finally {
      done = true;
    }
  })();
  return {
    res,
    events,
    comments,
    retry: () => parser.retry,
    lastEventId: () => parser.lastEventId,
    waitForEvents: (n, timeoutMs = 10_000) =>
      until(() => (events.length >= n ? events.slice(0, n) : done ? events.slice() : undefined), timeoutMs, () => `${n} events (got ${events.length})`),
    waitForComment: (test, timeoutMs = 10_000) => until(() => comments.find(test), timeoutMs, () => `a comment (got ${JSON.stringify(comments)})`),
    ended,
    close: () => controller.abort(),
  };
}
