// EventHub: one Durable Object per queue (`idFromName(queue)`) that every Worker reaches, so the
// events any Worker got from a script reach every stream of the queue, wherever it is open
// (docs/design/events-plan.md). It keeps the retention log (log.ts, in its SQLite storage) and
// holds its streams as hibernatable WebSockets (ctx.acceptWebSocket): between events the runtime
// may evict it from memory with its sockets still open, and it bills no duration then (the
// spike, spike/hub-worker-ws.mjs: hibernated after 30 idle seconds with its readers attached).
// So nothing lives only in memory: the log and its ids are in storage, each socket's filter is
// its tag and its attachment.
//
// - publish(events): RPC from the Worker that got them in a script's reply; stores them, then
//   sends each to the streams whose filter wants it, framed as SSE once per event.
// - fetch(/subscribe?group=|job=|since=): a stream attaches (WebSocket upgrade); the hub answers
//   a hello, then the held events after `since` that match, then live ones.
// - snapshot(filter, since): the held events after `since`, for a reader that needs no live ones.
import { DurableObject } from 'cloudflare:workers';
import { EVENTS_RETENTION_MS } from '../../protocol/constants';
import { FINAL_EVENT_NAMES, JOB_EVENT_NAMES } from '../../protocol/events';
import { EventLog, type StoredEvent, frameOf } from './log';
import {
  type EventFilter, type Hello, type HubMessage, type PublishedEvent, type Resume, type StreamMessage,
  filterOf, isHashedTag, matches, tagOf, tagsFor,
} from './wire';

/** A message of SSE text is cut at about this size: a resume may replay thousands of events. */
const MAX_MESSAGE_CHARS = 256 * 1024;

const FINAL = new Set<string>(FINAL_EVENT_NAMES);
const NAMES = new Set<string>(JOB_EVENT_NAMES);

export interface Snapshot extends Resume {
  /** The newest id the hub has given (see Hello). */
  head: string;
  /** Their data as JSON text: a reader frames it as it is (log.ts frameOf). */
  events: StoredEvent[];
}

/** Sends `frames` to `ws` in messages of MAX_MESSAGE_CHARS at most; `end` goes with the last. */
function sendFrames(ws: WebSocket, frames: readonly string[], end: boolean): void {
  let text = '';
  const flush = (last: boolean) => {
    const message: HubMessage = last && end ? { t: 'frames', text, end: true } : { t: 'frames', text };
    ws.send(JSON.stringify(message));
    text = '';
  };
  for (const frame of frames) {
    if (text !== '' && text.length + frame.length > MAX_MESSAGE_CHARS) flush(false);
    text += frame;
  }
  if (text !== '' || end) flush(true);
}

/** Whether `stored` ends the stream of the socket whose filter is `filter`: the job's final event. */
const ends = (filter: EventFilter, stored: StoredEvent) => filter.job !== undefined && FINAL.has(stored.event);

/** What publish() refuses: an event the Worker built wrong would break every reader's parse. */
function checkEvent(event: PublishedEvent): void {
  const data = event.data as Partial<PublishedEvent['data']> | null;
  if (!NAMES.has(event.event) || typeof data?.id !== 'string' || typeof data.group !== 'string') {
    throw new TypeError(`not a job event: ${JSON.stringify(event).slice(0, 200)}`);
  }
}

export class EventHub extends DurableObject<Env> {
  private readonly log: EventLog;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    // Synchronous SQLite: nothing awaits, so no other call runs between a read and its write.
    this.log = new EventLog(ctx.storage.sql, EVENTS_RETENTION_MS);
  }

  /**
   * Stores `events` (one script call's, in order) and sends each to the streams that want it.
   * Answers how many were stored and to how many streams they went.
   */
  publish(events: PublishedEvent[]): { stored: number; streams: number } {
    events.forEach(checkEvent);
    const stored = this.log.append(events, Date.now());
    // Per tag, the events it wants: each socket has one tag, so it gets one message per call.
    const byTag = new Map<string, StoredEvent[]>();
    for (const event of stored) {
      for (const tag of tagsFor(event.group, event.job)) {
        const list = byTag.get(tag);
        if (list) list.push(event);
        else byTag.set(tag, [event]);
      }
    }
    let streams = 0;
    for (const [tag, list] of byTag) {
      for (const ws of this.ctx.getWebSockets(tag)) {
        const filter = ws.deserializeAttachment() as EventFilter;
        const wanted = isHashedTag(tag) ? list.filter((event) => matches(filter, event.group, event.job)) : list;
        if (wanted.length === 0) continue;
        try {
          sendFrames(ws, wanted.map(frameOf), wanted.some((event) => ends(filter, event)));
          streams++;
        } catch {
          // Closing: the runtime drops it from getWebSockets() once closed.
        }
      }
    }
    return { stored: stored.length, streams };
  }

  /** The held events after `since` that match `filter` (all held ones' ids after it, in order). */
  snapshot(filter: EventFilter, since?: string): Snapshot {
    const head = this.log.head(Date.now());
    const { missed, oldest, events } = this.log.after(since, filter);
    return { head, missed, oldest, events };
  }

  /** A stream attaches: the WebSocket is the hub's, hibernatable, tagged with its filter. */
  override async fetch(request: Request): Promise<Response> {
    const url = new URL(request.url);
    if (url.pathname !== '/subscribe' || request.headers.get('upgrade')?.toLowerCase() !== 'websocket') {
      return new Response('the hub takes WebSocket subscriptions at /subscribe', { status: 400 });
    }
    const filter = filterOf(url);
    if (filter.group !== undefined && filter.job !== undefined) return new Response('one of group and job', { status: 400 });
    const since = url.searchParams.get('since') ?? undefined;
    const { 0: client, 1: server } = new WebSocketPair();
    this.ctx.acceptWebSocket(server, [tagOf(filter)]);
    server.serializeAttachment(filter);
    // All of it before this turn ends: no publish runs in between, so the held events and the
    // live ones meet without a gap or an overlap. The messages wait for the stream to accept.
    const head = this.log.head(Date.now());
    const resume = this.log.after(since, filter);
    const hello: Hello = { t: 'hello', head, wantedUntil: this.log.wantedUntil() };
    if (since !== undefined) Object.assign(hello, { missed: resume.missed, oldest: resume.oldest });
    server.send(JSON.stringify(hello));
    if (resume.events.length > 0) sendFrames(server, resume.events.map(frameOf), resume.events.some((event) => ends(filter, event)));
    return new Response(null, { status: 101, webSocket: client });
  }

  /** A stream asked Redis for events until a later time: kept, and told to every stream. */
  override webSocketMessage(_ws: WebSocket, message: string | ArrayBuffer): void {
    let parsed: StreamMessage;
    try {
      parsed = JSON.parse(message as string) as StreamMessage;
    } catch {
      return; // not one of ours
    }
    if (parsed?.t !== 'wanted' || !Number.isSafeInteger(parsed.until)) return;
    const until = this.log.wanted(parsed.until);
    const text = JSON.stringify({ t: 'wanted', until } satisfies HubMessage);
    for (const ws of this.ctx.getWebSockets()) {
      try {
        ws.send(text);
      } catch {
        // closing
      }
    }
  }

  /** The stream went (its reader left): completes the close handshake. */
  override webSocketClose(ws: WebSocket, code: number): void {
    try {
      ws.close(code === 1005 || code === 1006 ? 1000 : code);
    } catch {
      // already closed
    }
  }
}
