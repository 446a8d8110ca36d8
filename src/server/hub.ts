// The queues' event hubs of the Node server: the same hub as a Worker's Durable Object
// (src/core/events/hub-core.ts), one per queue in this process, made when first asked. Its log
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
import { Sequencer } from '../core/events/order';
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
  close(): void;
}

function createHub(): LocalHub {
  const sockets = new PairSockets();
  let timer: ReturnType<typeof setTimeout> | undefined;
  // One alarm per hub, as a Durable Object has: a new one replaces the one set.
  const setAlarm = async (at: number) => {
    clearTimeout(timer);
    timer = setTimeout(() => core.alarm(), Math.max(0, at - Date.now()));
    timer.unref();
  };
  const core = new HubCore(sockets, new EventLog(memoryLogStore(), EVENTS_RETENTION_MS), new Sequencer(memoryOrderStore()), setAlarm);
  const stub: HubStub = {
    publish: async (events) => core.publish(events),
    snapshot: async (filter, since) => core.snapshot(filter, since),
    async subscribe(filter, since) {
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
    close() {
      clearTimeout(timer);
      for (const end of [...sockets.all()]) end.close();
    },
  };
}

export function createHubs(): Hubs {
  const hubs = new Map<string, LocalHub>();
  return {
    hub(queue) {
      let hub = hubs.get(queue);
      if (!hub) hubs.set(queue, (hub = createHub()));
      return hub.stub;
    },
    close() {
      for (const hub of hubs.values()) hub.close();
      hubs.clear();
    },
  };
}
