// EventHub: one Durable Object per queue (`idFromName(queue)`) that every Worker reaches, so the
// events any Worker got from a script reach every stream of the queue, wherever it is open
// (docs/events.md). It keeps the retention log (log.ts, in its SQLite storage) and
// holds its streams as hibernatable WebSockets (ctx.acceptWebSocket): between events the runtime
// may evict it from memory with its sockets still open, and it bills no duration then (the
// hibernated after 30 idle seconds with its readers attached).
// So nothing lives only in memory: the log and its ids are in storage, each socket's filter is
// its tag and its attachment.
//
// - publish(events): RPC from the Worker that got them in a script's reply; puts them in their
//   partition's order (order.ts: an event that came early waits for those before it, 2 s at
//   most, then a `gap` says what never came; the wait ends by the hub's alarm if nothing else
//   comes), stores what goes out, and sends each to the streams whose filter wants it, framed
//   as SSE once per event.
// - fetch(/subscribe?group=|job=|since=): a stream attaches (WebSocket upgrade); the hub answers
//   a hello, then the held events after `since` that match, then live ones.
// - snapshot(filter, since): the held events after `since`, for a reader that needs no live ones.
import { DurableObject } from 'cloudflare:workers';
import { EVENTS_RETENTION_MS } from '../../protocol/constants';
import { FINAL_EVENT_NAMES, JOB_EVENT_NAMES } from '../../protocol/events';
import { EventLog, type StoredEvent, frameOf } from './log';
import { type OrderCounts, type Released, Sequencer } from './order';
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

const count = (n: unknown) => Number.isSafeInteger(n) && (n as number) >= 0;

/** What publish() refuses: an event the Worker built wrong would break every reader's parse, or the order. */
function checkEvent(event: PublishedEvent): void {
  const data = event.data as Partial<PublishedEvent['data']> | null;
  const place = event.place;
  const placed = place === undefined
    || (typeof place.part === 'string' && count(place.epoch) && (place.seq === undefined) !== (place.after === undefined)
      && (place.seq === undefined || (count(place.seq) && place.seq > 0)) && (place.after === undefined || count(place.after)));
  if (!NAMES.has(event.event) || typeof data?.id !== 'string' || typeof data.group !== 'string' || !placed) {
    throw new TypeError(`not a job event: ${JSON.stringify(event).slice(0, 200)}`);
  }
}

/** What publish() answers: how many events went out and to how many streams; held and dropped only when some were. */
export interface Published {
  stored: number;
  streams: number;
  /** Events the hub holds now, waiting for those before them. */
  held?: number;
  /** Events of this call dropped: a number that came again, or a progress whose job had moved on (order.ts). */
  dropped?: number;
}

export class EventHub extends DurableObject<Env> {
  private readonly log: EventLog;
  private readonly order: Sequencer;
  /** The alarm set for the end of the oldest hold; null: none known (hibernation forgets it). */
  private alarmAt: number | null = null;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    // Synchronous SQLite: nothing awaits, so no other call runs between a read and its write.
    this.log = new EventLog(ctx.storage.sql, EVENTS_RETENTION_MS);
    this.order = new Sequencer(ctx.storage.sql);
  }

  /**
   * Takes `events` (one script call's, in order): what is their turn goes out, stored then sent
   * to the streams that want it, with whatever it frees of the held ones (and any hold past its
   * end); the rest waits (order.ts). Answers how many went out and to how many streams.
   */
  publish(events: PublishedEvent[]): Published {
    events.forEach(checkEvent);
    const now = Date.now();
    // The new events first: one of them may be what a hold past its end waits for.
    const { released, dropped } = this.order.take(events, now, (part, job, after) => this.log.movedOn(part, job, after));
    const { stored, streams } = this.release([...released, ...this.order.due(now)], now);
    this.schedule();
    const held = this.order.heldCount();
    return { stored, streams, ...(held > 0 && { held }), ...(dropped > 0 && { dropped }) };
  }

  /** What the order did since the hub last woke: for tests and the bench (order.ts OrderCounts). */
  orderCounts(): OrderCounts {
    return { ...this.order.counts };
  }

  /** A hold ended with nothing else coming: the hub moves on (a `gap`, then what was held). */
  override alarm(): void {
    this.alarmAt = null;
    const now = Date.now();
    this.release(this.order.due(now), now);
    this.schedule();
  }

  /** Sets the alarm for the end of the oldest hold, unless one as early is set. */
  private schedule(): void {
    const at = this.order.deadline();
    if (at === null || (this.alarmAt !== null && this.alarmAt <= at)) return;
    this.alarmAt = at;
    // Not awaited: the write goes out with this call's others (the output gate holds the reply).
    this.ctx.storage.setAlarm(at).catch(() => {
      this.alarmAt = null;
    });
  }

  /** Stores what the order let out and sends each to the streams that want it. */
  private release(items: readonly Released[], now: number): { stored: number; streams: number } {
    if (items.length === 0) return { stored: 0, streams: 0 };
    const stored = this.log.append(items, now);
    let streams = 0;
    for (const [ws, filter, wanted] of this.readersOf(stored)) {
      try {
        sendFrames(ws, wanted.map(frameOf), wanted.some((event) => ends(filter, event)));
        streams++;
      } catch {
        // Closing: the runtime drops it from getWebSockets() once closed.
      }
    }
    return { stored: stored.filter((event) => event.event !== 'gap').length, streams };
  }

  /** Each stream that wants some of `stored`, with its filter and what it wants, in order. */
  private *readersOf(stored: readonly StoredEvent[]): Generator<[WebSocket, EventFilter, StoredEvent[]]> {
    if (stored.some((event) => event.event === 'gap')) {
      // A gap is every stream's (the events that never came may be of any job): each socket's
      // filter is read. Rare: the per-tag way below is the usual one.
      for (const ws of this.ctx.getWebSockets()) {
        const filter = ws.deserializeAttachment() as EventFilter;
        const wanted = stored.filter((event) => event.event === 'gap' || matches(filter, event.group, event.job));
        if (wanted.length > 0) yield [ws, filter, wanted];
      }
      return;
    }
    // Per tag, the events it wants: each socket has one tag, so it gets one message per call.
    const byTag = new Map<string, StoredEvent[]>();
    for (const event of stored) {
      for (const tag of tagsFor(event.group, event.job)) {
        const list = byTag.get(tag);
        if (list) list.push(event);
        else byTag.set(tag, [event]);
      }
    }
    for (const [tag, list] of byTag) {
      for (const ws of this.ctx.getWebSockets(tag)) {
        const filter = ws.deserializeAttachment() as EventFilter;
        const wanted = isHashedTag(tag) ? list.filter((event) => matches(filter, event.group, event.job)) : list;
        if (wanted.length > 0) yield [ws, filter, wanted];
      }
    }
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
