// What a queue's event hub does, wherever it lives: as a Durable Object for a Worker (hub.ts),
// as an object in the process for the Node server (src/server/hub.ts). Each gives it three
// things: its streams' sockets (by tag, each with its filter), the log and the order over their
// stores (log-store.ts, order-store.ts), and an alarm (the DO's, or a timer). No Worker API here.
//
// - publish(events): one script call's events; puts them in their partition's order (order.ts:
//   an event that came early waits for those before it, 2 s at most, then a `gap` says what
//   never came; the wait ends by the alarm if nothing else comes), stores what goes out, and
//   sends each to the streams whose filter wants it, framed as SSE once per event.
// - greet(socket, filter, since): a stream attached; it gets a hello, then the held events after
//   `since` that match, then live ones.
// - snapshot(filter, since): the held events after `since`, for a reader that needs no live ones.
// - message(text): a stream asked Redis for events until a later time; every stream is told.
import { FINAL_EVENT_NAMES, JOB_EVENT_NAMES } from '../../protocol/events';
import type { Published, Snapshot } from './hubs';
import { type EventLog, type StoredEvent, frameOf } from './log';
import type { OrderCounts, Released, Sequencer } from './order';
import { type EventFilter, type Hello, type HubMessage, type PublishedEvent, type StreamMessage, isHashedTag, matches, tagsFor } from './wire';

/** A message of SSE text is cut at about this size: a resume may replay thousands of events. */
const MAX_MESSAGE_CHARS = 256 * 1024;

const FINAL = new Set<string>(FINAL_EVENT_NAMES);
const NAMES = new Set<string>(JOB_EVENT_NAMES);

/** The hub's end of a stream's socket. */
export interface HubEnd {
  send(text: string): void;
}

/** The streams attached to a hub: each socket carries one tag (wire.ts tagOf) and its filter. */
export interface Sockets<S extends HubEnd> {
  /** Every socket attached. */
  all(): Iterable<S>;
  /** The sockets of `tag`. */
  tagged(tag: string): Iterable<S>;
  filterOf(socket: S): EventFilter;
}

/** Sends `frames` to `ws` in messages of MAX_MESSAGE_CHARS at most; `end` goes with the last. */
function sendFrames(ws: HubEnd, frames: readonly string[], end: boolean): void {
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

/** What publish() refuses: an event built wrong would break every reader's parse, or the order. */
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

export class HubCore<S extends HubEnd> {
  /** The alarm set for the end of the oldest hold; null: none known (a DO's hibernation forgets it). */
  private alarmAt: number | null = null;

  /** `setAlarm` replaces the alarm set before, if any; a failure only makes the next call set it again. */
  constructor(
    private readonly sockets: Sockets<S>,
    private readonly log: EventLog,
    private readonly order: Sequencer,
    private readonly setAlarm: (at: number) => Promise<void>,
  ) {}

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
  alarm(): void {
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
    // Not awaited: a DO's write goes out with this call's others (the output gate holds the reply).
    this.setAlarm(at).catch(() => {
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
        // Closing: the socket leaves the list once closed.
      }
    }
    return { stored: stored.filter((event) => event.event !== 'gap').length, streams };
  }

  /** Each stream that wants some of `stored`, with its filter and what it wants, in order. */
  private *readersOf(stored: readonly StoredEvent[]): Generator<[S, EventFilter, StoredEvent[]]> {
    if (stored.some((event) => event.event === 'gap')) {
      // A gap is every stream's (the events that never came may be of any job): each socket's
      // filter is read. Rare: the per-tag way below is the usual one.
      for (const ws of this.sockets.all()) {
        const filter = this.sockets.filterOf(ws);
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
      for (const ws of this.sockets.tagged(tag)) {
        const filter = this.sockets.filterOf(ws);
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

  /**
   * A stream attached with `filter` (its socket is among the hub's already): its hello, then
   * the held events after `since`. All of it in one turn: no publish runs in between, so the
   * held events and the live ones meet without a gap or an overlap.
   */
  greet(ws: S, filter: EventFilter, since: string | undefined): void {
    const head = this.log.head(Date.now());
    const resume = this.log.after(since, filter);
    const hello: Hello = { t: 'hello', head, wantedUntil: this.log.wantedUntil() };
    if (since !== undefined) Object.assign(hello, { missed: resume.missed, oldest: resume.oldest });
    ws.send(JSON.stringify(hello));
    if (resume.events.length > 0) sendFrames(ws, resume.events.map(frameOf), resume.events.some((event) => ends(filter, event)));
  }

  /** A stream asked Redis for events until a later time: kept, and told to every stream. */
  message(message: string): void {
    let parsed: StreamMessage;
    try {
      parsed = JSON.parse(message) as StreamMessage;
    } catch {
      return; // not one of ours
    }
    if (parsed?.t !== 'wanted' || !Number.isSafeInteger(parsed.until)) return;
    const until = this.log.wanted(parsed.until);
    const text = JSON.stringify({ t: 'wanted', until } satisfies HubMessage);
    for (const ws of this.sockets.all()) {
      try {
        ws.send(text);
      } catch {
        // closing
      }
    }
  }
}
