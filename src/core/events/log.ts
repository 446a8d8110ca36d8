// A queue's retention log: the events its hub (hub-core.ts) was given, in the Durable Object's
// SQLite storage, so that a resume (Last-Event-ID) survives the hub's hibernation, which drops its
// memory (docs/events.md); on the Node server, in its memory (log-store.ts holds both stores). Kept for EVENTS_RETENTION_MS and at most MAX_HELD_EVENTS
// rows, oldest out first. Each row is one event: its SSE id, when it was stored, its group and
// job (what filters read) and its name and data as the SSE frame needs them.
//
// Ids are `<ms>-<seq>` (src/protocol/event-id.ts) and increase with every row: the hub gives each
// event the next id when it lets it out (order.ts puts each partition's events in their scripts'
// order first), so the order a stream sends, the order of the ids and the order of the rows are
// one order across the queue's partitions, and a resume is "the rows after this id". (An event
// handed over with an id after the newest given keeps it: tests name ids so.) A row also keeps
// the event's partition and number there (part, pseq): what tells a late progress event whether
// its job has moved on (movedOn).
//
// A `gap` the order told (events that never came) is a row too, so that a resume from before it
// is told it as well; its frame has no `id:` (the gap of src/protocol/events.ts has none), and
// its row's id, which no reader sees, keeps the ids of the rows in order.
//
// What a resume is told rests on two ids kept beside the rows: `head`, the newest id given, and
// `floor`, the newest id trimmed away (every event after it is held). A resume from an id that is
// held, or is the floor, misses nothing; from any other (trimmed, or never given here) it is
// told it missed some: never a silent gap.
import { compareEventIds, formatEventId, isEventId } from '../../protocol/event-id';
import { encodeMessage } from '../../protocol/sse';
import { queueOfTag } from '../store/partitions';
import type { LogStore, StoredEvent } from './log-store';
import type { Released } from './order';
import type { EventFilter, Resume } from './wire';

export type { StoredEvent } from './log-store';

/** At most this many events are held, whatever their age: bounds storage and a resume's replay. */
export const MAX_HELD_EVENTS = 10_000;


/** The SSE frame of one stored event: `event:`, `id:` and its one `data:` line. */
export function frameOf(stored: StoredEvent): string {
  if (stored.event === 'gap') return encodeMessage({ event: stored.event, data: stored.data });
  return encodeMessage({ event: stored.event, id: stored.eventId, data: stored.data });
}

export class EventLog {
  private headId: string | null;
  private floorId: string | null;

  constructor(
    private readonly store: LogStore,
    private readonly retentionMs: number,
    private readonly maxEvents = MAX_HELD_EVENTS,
  ) {
    this.headId = store.get('head');
    this.floorId = store.get('floor');
  }

  /**
   * The newest id given. A hub that never held an event gives one now, with no event: a job
   * stream's first event needs an id to resume from, and the events that follow get later ones.
   */
  head(now: number): string {
    if (this.headId === null) {
      this.headId = this.floorId = formatEventId(now, 0);
      this.store.set('head', this.headId);
      this.store.set('floor', this.floorId);
    }
    return this.headId;
  }

  /** The id after the newest given: the same millisecond's next, or `now`'s first. */
  private nextId(now: number): string {
    return this.headId === null ? formatEventId(now, 0) : nextAfter(this.headId, now);
  }

  /** Whether job `job` has an event of partition `part` out after that partition's number `after`. */
  movedOn(part: string, job: string, after: number): boolean {
    return this.store.movedOn(part, job, after);
  }

  /** Stores what the order let out, in order, each with its id (see above), then trims; answers them as stored. */
  append(items: readonly Released[], now: number): StoredEvent[] {
    const stored: StoredEvent[] = [];
    let lastSeq = 0;
    const insert = (row: StoredEvent, part: string | null, pseq: number | null) => {
      lastSeq = this.store.insert({ ...row, storedAt: now, part, pseq });
      this.headId = row.eventId;
      stored.push(row);
    };
    for (const item of items) {
      if (item.kind === 'gap') {
        // Said between the last id given and the next: the one the event after it gets.
        const lastEventId = this.head(now);
        const id = this.nextId(now);
        const data = { queue: queueOfTag(item.part), lastEventId, oldestEventId: nextAfter(id, now), missing: item.missing, at: now };
        insert({ eventId: id, event: 'gap', group: '', job: '', data: JSON.stringify(data) }, item.part, null);
        continue;
      }
      const { eventId, event, data, place } = item.event;
      const given = eventId !== undefined && isEventId(eventId) && (this.headId === null || compareEventIds(eventId, this.headId) > 0);
      const id = given ? eventId : this.nextId(now);
      insert({ eventId: id, event, group: data.group, job: data.id, data: JSON.stringify(data) }, place?.part ?? null, place?.seq ?? place?.after ?? null);
    }
    if (stored.length === 0) return stored;
    this.store.set('head', this.headId!);
    this.trim(now, lastSeq);
    return stored;
  }

  /**
   * Drops rows older than the retention or beyond the count, oldest first, and remembers the
   * newest dropped as the floor. Reads only the rows it drops and one more: rows are stored in
   * time order, so the walk stops at the first one young enough.
   */
  private trim(now: number, lastSeq: number): void {
    let cut = lastSeq - this.maxEvents;
    const oldEnough = now - this.retentionMs;
    for (const row of this.store.ages()) {
      if (row.storedAt >= oldEnough && row.seq > cut) break;
      cut = Math.max(cut, row.seq);
    }
    const last = this.store.dropThrough(cut);
    if (last === undefined) return;
    this.floorId = last;
    this.store.set('floor', last);
  }

  /** The oldest event held (a gap's row is none: no reader has its id), or null. */
  oldest(): string | null {
    return this.store.oldest();
  }

  /**
   * What a stream resuming after `since` (none: a new stream, which gets nothing held) gets of
   * the held events that match `filter`, in order, and whether it missed some.
   */
  after(since: string | undefined, filter: EventFilter): Resume & { events: StoredEvent[] } {
    if (since === undefined) return { missed: false, oldest: null, events: [] };
    const found = isEventId(since) ? this.store.seqOf(since) : undefined;
    const missed = found === undefined && since !== this.floorId;
    const events = this.store.rowsAfter(found ?? 0, filter);
    return { missed, oldest: missed ? this.oldest() : null, events };
  }

  /** Until when scripts were last asked for events (0: never), as streams told the hub. */
  wantedUntil(): number {
    return Number(this.store.get('wanted') ?? 0);
  }

  /** Keeps the later of the stored time and `until`; answers the time kept. */
  wanted(until: number): number {
    const kept = Math.max(this.wantedUntil(), until);
    this.store.set('wanted', String(kept));
    return kept;
  }
}

/** The id after `id`, at `now`: the same millisecond's next, or `now`'s first. */
function nextAfter(id: string, now: number): string {
  const [ms, seq] = id.split('-').map(Number) as [number, number];
  if (now > ms) return formatEventId(now, 0);
  return Number.isSafeInteger(seq + 1) ? formatEventId(ms, seq + 1) : formatEventId(ms + 1, 0);
}
