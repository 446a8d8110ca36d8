// One event stream of the API (a queue's, a group's, a job's: docs/events.md), held open for a
// view. The dashboard holds the admin token, and EventSource cannot send an Authorization header,
// so it reads the stream with fetch and a ReadableStream reader, and frames it with SseParser
// (src/protocol/sse.ts, import-free, so it bundles as is). Like EventSource, it reconnects after
// a drop with Last-Event-ID, after the stream's `retry:` hint, and the API replays what it missed
// (or sends `gap`). Unlike it, it gives up fast: after a failure the view polls again (the
// owner sees status `failing`), and after FAILURES_BEFORE_SLOWING in a row it only tries once
// a minute, so a Worker without a working event hub costs one request a minute, not one a second.
import { isFinished } from '../../protocol/constants';
import { type SseEvent, SseParser } from '../../protocol/sse';

/** connecting: opening (or reopening after a drop); open: events flow; failing: the last try failed; ended: nothing more to read. */
export type StreamStatus = 'connecting' | 'open' | 'failing' | 'ended';

/** The wait before reconnecting until the stream sends its own `retry:` (EventSource's default is about this). */
const DEFAULT_RETRY_MS = 1000;
/** Failures in a row (an open refused, or a drop soon after it) before tries slow to SLOW_RETRY_MS. */
const FAILURES_BEFORE_SLOWING = 3;
const SLOW_RETRY_MS = 60_000;
/** A connection that lasted this long, or carried an event, was not a failure: the count restarts. */
const STABLE_MS = 30_000;
/**
 * The API sends a comment every 15 s on an idle stream (KEEP_ALIVE_MS): after three missed, the
 * connection is taken for dead (a laptop that slept, a network that changed under it) and reopened.
 */
const SILENT_MS = 45_000;

export interface StreamOwner {
  /** Something may have changed: an event, a fresh open (what came before it is not replayed), the stream's end. */
  changed(why: 'event' | 'opened' | 'ended'): void;
  /** `status` moved. */
  statusChanged(): void;
}

export class EventStream {
  status: StreamStatus = 'connecting';
  /** Keeps the last event id and the retry hint across connections, as EventSource does. */
  private readonly parser = new SseParser();
  private controller: AbortController | null = null;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private failures = 0;
  /** Events read, over every connection: a connection that read one was not a failure. */
  private seen = 0;
  private closed = false;

  /** `path`: the stream's route on this origin; `job`: a job's stream, over after its final event. */
  constructor(
    readonly path: string,
    private readonly token: string,
    private readonly job: boolean,
    private readonly owner: StreamOwner,
  ) {
    void this.connect();
  }

  /** Leaves the stream: the connection is cut, and nothing is tried again. */
  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
    this.controller?.abort();
  }

  private setStatus(status: StreamStatus): void {
    if (this.status === status) return;
    this.status = status;
    this.owner.statusChanged();
  }

  /** One connection, from the request to its end; then the next one is planned. */
  private async connect(): Promise<void> {
    if (this.closed) return;
    const controller = (this.controller = new AbortController());
    const resumeAfter = this.parser.lastEventId;
    const headers: Record<string, string> = { authorization: `Bearer ${this.token}`, accept: 'text/event-stream' };
    if (resumeAfter !== '') headers['last-event-id'] = resumeAfter;
    let openedAt = 0;
    const seenBefore = this.seen;
    let silence: ReturnType<typeof setTimeout> | undefined;
    const listen = () => {
      clearTimeout(silence);
      silence = setTimeout(() => controller.abort(), SILENT_MS);
    };
    try {
      const res = await fetch(this.path, { headers, cache: 'no-store', signal: controller.signal });
      // 204: an ended job's resume, with nothing after the id (EventSource stops there too).
      // 404: the queue or the job is gone; the view's own read will say so.
      if (res.status === 204 || res.status === 404) {
        void res.body?.cancel();
        return this.end();
      }
      if (!res.ok || !res.body || !res.headers.get('content-type')?.startsWith('text/event-stream')) {
        void res.body?.cancel();
        throw new Error(`the stream answered ${res.status}`);
      }
      openedAt = Date.now();
      this.setStatus('open');
      // A stream opened afresh replays nothing: what changed between the view's last read and
      // now is only seen by reading again. A resume replays it (or says `gap`); a job's stream
      // opens with the job's state, an event, which does it.
      if (resumeAfter === '' && !this.job) this.owner.changed('opened');
      const reader = res.body.getReader();
      listen();
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        listen();
        if (this.take(this.parser.feed(value))) return void reader.cancel().catch(() => {});
      }
    } catch {
      // A refused open, a network error, a cut connection, or close(): told apart below.
    } finally {
      clearTimeout(silence);
      if (this.controller === controller) this.controller = null;
    }
    if (this.closed || this.status === 'ended') return;
    if (this.take(this.parser.end())) return;
    this.retry(openedAt > 0 && (this.seen > seenBefore || Date.now() - openedAt >= STABLE_MS));
  }

  /** Hands `events` to the owner; true when one of them ended a job's stream. */
  private take(events: SseEvent[]): boolean {
    for (const event of events) {
      this.seen++;
      this.owner.changed('event');
      // Each finished state is entered by the event of its name (protocol/events.ts).
      if (this.job && isFinished(event.type)) {
        this.end();
        return true;
      }
    }
    return false;
  }

  private end(): void {
    this.setStatus('ended');
    this.owner.changed('ended');
  }

  /** Plans the next connection: after the hint, doubling with each failure, then once a minute. */
  private retry(stable: boolean): void {
    this.failures = stable ? 0 : this.failures + 1;
    this.setStatus(this.failures === 0 ? 'connecting' : 'failing');
    const hint = this.parser.retry ?? DEFAULT_RETRY_MS;
    const wait = this.failures >= FAILURES_BEFORE_SLOWING ? SLOW_RETRY_MS : hint * 2 ** Math.max(0, this.failures - 1);
    // A little jitter: many tabs cut by one deploy do not all come back in the same instant.
    this.timer = setTimeout(() => void this.connect(), wait + Math.random() * 250);
  }
}

/** A queue's stream route (docs/events.md), or one group's with `group`. */
export function queueEventsPath(queue: string, group?: string): string {
  const path = `/v1/queues/${encodeURIComponent(queue)}/events`;
  return group === undefined ? path : `${path}?group=${encodeURIComponent(group)}`;
}

/** A job's stream route: its state first, then its events until it ends. */
export function jobEventsPath(queue: string, id: string): string {
  return `/v1/queues/${encodeURIComponent(queue)}/jobs/${encodeURIComponent(id)}/events`;
}
