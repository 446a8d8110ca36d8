// The queues' event hubs of the Node server: the same hub as a Worker's Durable Object
// (src/core/events/hub-core.ts), one per queue in this process, made when first asked and
// dropped once unused past the retention (IDLE_MS), so that their number stays that of live queues. Its log
// and order live in memory (node:sqlite is not in Node 20): a restart loses them, and a stream
// that resumes then is told it missed some, by a `gap` first, never silently. The alarm that ends
// a hold is a timer, unref'd so that it keeps no process alive; a stream's socket is an
// in-process pair (socket-pair.ts).
//
// Events reach a hub through its publish(), whoever has them: this process's engine (the
// onEvents of src/handlers/scope.ts), or what another process published, handed over by the bus
// between processes. Each hub orders them by their place (order.ts): a number that comes twice
// goes out once.
import { EVENTS_RETENTION_MS } from '../protocol/constants';
import { HubCore, type Sockets } from '../core/events/hub-core';
import type { HubStub } from '../core/events/hubs';
import { EventLog } from '../core/events/log';
import { memoryLogStore } from '../core/events/log-store';
import { HOLD_MS, Sequencer } from '../core/events/order';
import { memoryOrderStore } from '../core/events/order-store';
import { type EventFilter, tagOf } from '../core/events/wire';
import { PairEnd } from './socket-pair';

export interface Hubs {
  /** The hub of `queue`: the same one whoever asks. */
  hub(queue: string): HubStub;
  /** Stops every hub's timer and closes its streams (their readers come back and resume). */
  close(): void;
}

/** A hub's ends of its streams' sockets: by tag, each with its filter, until it closes. */
class PairSockets implements Sockets<PairEnd> {
  private readonly filters = new Map<PairEnd, EventFilter>();
  private readonly byTag = new Map<string, Set<PairEnd>>();

  add(end: PairEnd, filter: EventFilter): void {
    const tag = tagOf(filter);
    this.filters.set(end, filter);
    let ends = this.byTag.get(tag);
    if (!ends) this.byTag.set(tag, (ends = new Set()));
    ends.add(end);
    end.addEventListener('close', () => {
      this.filters.delete(end);
      ends.delete(end);
      if (ends.size === 0 && this.byTag.get(tag) === ends) this.byTag.delete(tag);
    });
  }

  all(): Iterable<PairEnd> {
    return this.filters.keys();
  }

  tagged(tag: string): Iterable<PairEnd> {
    return this.byTag.get(tag) ?? [];
  }

  filterOf(end: PairEnd): EventFilter {
    return this.filters.get(end)!;
  }
}

interface LocalHub {
  stub: HubStub;
  /** Whether nothing holds it: no stream, and nothing published, read or held for `ms`. */
  idleFor(ms: number, now: number): boolean;
  close(): void;
}

function createHub(): LocalHub {
  const sockets = new PairSockets();
  let used = Date.now();
  let timer: ReturnType<typeof setTimeout> | undefined;
  // One alarm per hub, as a Durable Object has: a new one replaces the one set.
  const setAlarm = async (at: number) => {
    clearTimeout(timer);
    timer = setTimeout(() => core.alarm(), Math.max(0, at - Date.now()));
    timer.unref();
  };
  const core = new HubCore(sockets, new EventLog(memoryLogStore(), EVENTS_RETENTION_MS), new Sequencer(memoryOrderStore()), setAlarm);
  const stub: HubStub = {
    publish: async (events) => {
      used = Date.now();
      return core.publish(events);
    },
    snapshot: async (filter, since) => {
      used = Date.now();
      return core.snapshot(filter, since);
    },
    async subscribe(filter, since) {
      used = Date.now();
      if (filter.group !== undefined && filter.job !== undefined) throw new TypeError('a stream filters by one of group and job');
      const [stream, end] = PairEnd.pair();
      sockets.add(end, filter);
      end.addEventListener('message', ({ data }) => core.message(data as string));
      core.greet(end, filter, since);
      return stream;
    },
  };
  return {
    stub,
    idleFor: (ms, now) => now - used > ms && [...sockets.all()].length === 0,
    close() {
      clearTimeout(timer);
      for (const end of [...sockets.all()]) end.close();
    },
  };
}

/**
 * A hub that nothing used for this long holds nothing a reader could get (its events are past
 * the retention, its holds past HOLD_MS): it is dropped, so the hubs of queues deleted or gone
 * quiet do not pile up. Used again, it starts empty, as after a restart (a resume gets a `gap`).
 */
const IDLE_MS = EVENTS_RETENTION_MS + HOLD_MS;

/** `idleMs`: when an unused hub is dropped (tests shorten it). */
export function createHubs({ idleMs = IDLE_MS }: { idleMs?: number } = {}): Hubs {
  const hubs = new Map<string, LocalHub>();
  const sweep = setInterval(() => {
    const now = Date.now();
    for (const [queue, hub] of hubs) {
      if (!hub.idleFor(idleMs, now)) continue;
      hub.close();
      hubs.delete(queue);
    }
  }, idleMs);
  sweep.unref();
  return {
    hub(queue) {
      let hub = hubs.get(queue);
      if (!hub) hubs.set(queue, (hub = createHub()));
      return hub.stub;
    },
    close() {
      clearInterval(sweep);
      for (const hub of hubs.values()) hub.close();
      hubs.clear();
    },
  };
}
