// The order of a queue's events in its hub (hub.ts): each partition's events go out in the order
// its scripts numbered them (meta's `es`, src/lua/includes/meta.lua placeEvents), whichever Worker
// handed them over and when. Two Workers that ran a job's scripts (its lease on one, its
// completion on another), or two publishes of one Worker's waitUntil, may reach the hub in either
// order; the numbers put them back.
//
// - An event whose turn it is (its number follows the last let out) goes out at once, with every
//   held one it frees. One that comes early is held until those before it come, HOLD_MS at most:
//   then the hub moves on, says so with a `gap` (how many never came) and lets the held ones out
//   in order. A number that comes again (or after the hub moved on past it) is dropped: what went
//   out never goes out again, nor out of order.
// - An event that took no number (progress: its script writes no meta) follows the last numbered
//   one of its partition when its script ran: it goes out right after that one, before the next.
//   One that comes when the next are out already goes out at once, unless one of them was its own
//   job's: it is dropped then (its job has moved on; out, it would come after, and say, a
//   `completed`).
// - A partition's sequence has an epoch (when it started): a queue deleted and made again starts
//   a later one, and the hub starts over with it; stragglers of an earlier one go out as they come.
//
// The held events and each partition's last number are in the hub's SQLite storage, so that
// hibernation (which drops the hub's memory) loses neither; the memory here is a copy (on the
// Node server, the memory is all there is: order-store.ts). Events that come in order write no
// row of their own there, only their partition's number, once per call.
import type { OrderStore } from './order-store';
import type { PublishedEvent } from './wire';

/** How long an event may wait for those before it. */
export const HOLD_MS = 2000;

/** What the order lets out: events, and gaps where it moved on past some that never came. */
export type Released = { kind: 'event'; event: PublishedEvent } | { kind: 'gap'; part: string; missing: number };

interface Held {
  /** Its row in `held`; null while only in memory (it came during this call). */
  row: number | null;
  arrived: number;
  event: PublishedEvent;
  /** Let out. */
  out?: boolean;
}

interface Part {
  epoch: number;
  /** The number of the last event let out. */
  last: number;
  /** Held numbered events by number. */
  numbered: Map<number, Held>;
  /** Held events that follow a number (`after`), by that number, then in arrival order. */
  following: Held[];
  /** When the longest-held event came; undefined: to be found again (one was let out). */
  oldest?: number | null;
  /** `last` or `epoch` changed since they were stored. */
  dirty: boolean;
}

const afterOf = (held: Held) => held.event.place!.after!;

/** Holds `held` in `part`: by its number, or among the followers in order. */
function hold(part: Part, held: Held): void {
  if (held.event.place!.seq !== undefined) part.numbered.set(held.event.place!.seq, held);
  else {
    // Arrivals mostly follow ever later numbers: the place is found from the end.
    let at = part.following.length;
    while (at > 0 && afterOf(part.following[at - 1]!) > afterOf(held)) at--;
    part.following.splice(at, 0, held);
  }
  if (part.oldest !== undefined) part.oldest = part.oldest === null ? held.arrived : Math.min(part.oldest, held.arrived);
}

const released = (event: PublishedEvent): Released => ({ kind: 'event', event });

/** Whether a job has an event out after number `after` of partition `part` (a late follower is dropped then). */
export type MovedOn = (part: string, job: string, after: number) => boolean;

/** What the order did since the hub last woke (memory only): what tests and the bench read. */
export interface OrderCounts {
  /** Events that came before one they follow, and were held. */
  early: number;
  /** Numbers that came again, or after the hub moved on past them; late progress whose job had moved on. */
  dropped: number;
  /** Gaps told, and the events they said never came. */
  gaps: number;
  missing: number;
}

export class Sequencer {
  readonly counts: OrderCounts = { early: 0, dropped: 0, gaps: 0, missing: 0 };
  private readonly parts = new Map<string, Part>();
  /** Rows of `held` let out during this call, deleted at save(). */
  private gone: number[] = [];
  /** Events this call held, stored at save() unless let out meanwhile. */
  private fresh: [string, Held][] = [];

  constructor(
    private readonly store: OrderStore,
    private readonly holdMs = HOLD_MS,
  ) {
    for (const { part, epoch, last } of store.parts()) {
      this.parts.set(part, { epoch, last, numbered: new Map(), following: [], oldest: null, dirty: false });
    }
    for (const { row, part: name, arrived, event } of store.held()) {
      const part = this.parts.get(name);
      if (part && event.place) hold(part, { row, arrived, event }); // (never stored otherwise)
    }
  }

  /**
   * Takes one call's events at `now`: answers those whose turn it is, in order, with every held one
   * they free; the rest are held (`held`, how many are now) or dropped (`dropped`).
   */
  take(events: readonly PublishedEvent[], now: number, movedOn: MovedOn): { released: Released[]; held: number; dropped: number } {
    const out: Released[] = [];
    let dropped = 0;
    const touched = new Map<string, Part>();
    for (const event of events) {
      const place = event.place;
      if (!place || place.epoch === 0) {
        // No sequence to keep (none yet, or none given): as it comes.
        out.push(released(event));
        continue;
      }
      let part = this.parts.get(place.part);
      if (!part) {
        part = { epoch: place.epoch, last: 0, numbered: new Map(), following: [], oldest: null, dirty: true };
        this.parts.set(place.part, part);
      } else if (place.epoch > part.epoch) {
        // A new sequence (the queue was made again): what the old one held goes first.
        while (this.moveOn(place.part, part, out));
        Object.assign(part, { epoch: place.epoch, last: 0, dirty: true });
      } else if (place.epoch < part.epoch) {
        out.push(released(event));
        continue;
      }
      touched.set(place.part, part);
      const late = place.seq !== undefined ? place.seq <= part.last || part.numbered.has(place.seq) : place.after! < part.last;
      if (!late) {
        const held: Held = { row: null, arrived: now, event };
        hold(part, held);
        this.fresh.push([place.part, held]);
      } else if (place.seq !== undefined || movedOn(place.part, event.data.id, place.after!)) {
        dropped++;
      } else {
        out.push(released(event));
      }
    }
    for (const part of touched.values()) this.drain(part, out);
    this.counts.early += this.fresh.filter(([, held]) => !held.out).length;
    this.save(touched);
    this.counts.dropped += dropped;
    return { released: out, held: this.heldCount(), dropped };
  }

  /** Moves on past every hold that began HOLD_MS or more before `now`: gaps, and what they free. */
  due(now: number): Released[] {
    const out: Released[] = [];
    const touched = new Map<string, Part>();
    for (const [name, part] of this.parts) {
      for (let oldest = oldestOf(part); oldest !== null && oldest + this.holdMs <= now; oldest = oldestOf(part)) {
        this.moveOn(name, part, out);
        touched.set(name, part);
      }
    }
    this.save(touched);
    return out;
  }

  /** When the oldest hold ends; null when nothing is held. */
  deadline(): number | null {
    let first: number | null = null;
    for (const part of this.parts.values()) {
      const oldest = oldestOf(part);
      if (oldest !== null && (first === null || oldest < first)) first = oldest;
    }
    return first === null ? null : first + this.holdMs;
  }

  /** How many events are held. */
  heldCount(): number {
    let n = 0;
    for (const part of this.parts.values()) n += part.numbered.size + part.following.length;
    return n;
  }

  /** Lets out, in order, every held event of `part` whose turn it is. */
  private drain(part: Part, out: Released[]): void {
    for (;;) {
      // The followers of the numbers out so far (in order: `following` is kept so), then the next number.
      let n = 0;
      while (n < part.following.length && afterOf(part.following[n]!) <= part.last) this.letOut(part, part.following[n++]!, out);
      if (n > 0) part.following.splice(0, n);
      const next = part.numbered.get(part.last + 1);
      if (!next) return;
      part.numbered.delete(part.last + 1);
      part.last++;
      part.dirty = true;
      this.letOut(part, next, out);
    }
  }

  /** Moves `part` on to its nearest held event, past the ones missing before it; false when none is held. */
  private moveOn(name: string, part: Part, out: Released[]): boolean {
    let to: number | null = null;
    for (const seq of part.numbered.keys()) if (to === null || seq - 1 < to) to = seq - 1;
    const first = part.following[0];
    if (first && (to === null || afterOf(first) < to)) to = afterOf(first);
    if (to === null) return false;
    if (to > part.last) {
      out.push({ kind: 'gap', part: name, missing: to - part.last });
      this.counts.gaps++;
      this.counts.missing += to - part.last;
    }
    part.last = Math.max(part.last, to);
    part.dirty = true;
    this.drain(part, out);
    return true;
  }

  private letOut(part: Part, held: Held, out: Released[]): void {
    held.out = true;
    part.oldest = undefined;
    if (held.row !== null) this.gone.push(held.row);
    out.push(released(held.event));
  }

  /** Writes what changed: rows of newly held events, rows let out, the partitions' numbers. */
  private save(touched: Map<string, Part>): void {
    for (const row of this.gone) this.store.letGo(row);
    this.gone = [];
    for (const [name, held] of this.fresh) {
      if (held.out) continue;
      held.row = this.store.hold(name, held.arrived, held.event);
    }
    this.fresh = [];
    for (const [name, part] of touched) {
      if (!part.dirty) continue;
      this.store.savePart(name, part.epoch, part.last);
      part.dirty = false;
    }
  }
}

/** When the longest-held event of `part` came; null when it holds none. Found again only after one went out. */
function oldestOf(part: Part): number | null {
  if (part.oldest !== undefined) return part.oldest;
  let oldest: number | null = null;
  for (const held of part.numbered.values()) if (oldest === null || held.arrived < oldest) oldest = held.arrived;
  for (const held of part.following) if (oldest === null || held.arrived < oldest) oldest = held.arrived;
  part.oldest = oldest;
  return oldest;
}
