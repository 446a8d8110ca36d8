// Events between the Node server's processes. A Worker hands a script's events to its queue's
// hub, one Durable Object that every Worker reaches; processes have no such object, so each keeps
// hubs of its own (hub.ts), and every process must see every process's events. Over a TCP Redis
// (REDIS_URL) each script call's events are PUBLISHed on one channel, which every process
// subscribes to: its hubs take them from there, its own included, and their order rests on the
// events' places as it does for a Durable Object (src/core/events/order.ts). A PUBLISH is one
// command, sent only while some stream wants events (want-events.lua).
// Pub/sub keeps nothing: a process whose subscriber connection was down misses what was sent
// meanwhile, and its hub tells its streams so with a `gap` (an event that never came).
import type { HubStub, Published } from '../core/events/hubs';
import type { PublishedEvent } from '../core/events/wire';
import type { TcpRedis } from './redis-tcp';

/** The channel: not a key (pub/sub is database-wide), named like groupq's keys. */
export const EVENTS_CHANNEL = 'gq:events';

interface Message {
  queue: string;
  events: PublishedEvent[];
}

/**
 * Hubs that share their events through `redis`: a HubStub per queue whose publish goes to the
 * channel; what comes from the channel goes to `local(queue)`. Resolves once subscribed.
 */
export async function busHubs(redis: TcpRedis, local: (queue: string) => HubStub): Promise<(queue: string) => HubStub> {
  await redis.subscribe(EVENTS_CHANNEL, (text) => {
    let message: Message;
    try {
      message = JSON.parse(text) as Message;
    } catch {
      return; // not ours
    }
    if (typeof message?.queue !== 'string' || !Array.isArray(message.events)) return;
    // The hub checks each event (hub-core checkEvent): a malformed one is refused there.
    local(message.queue).publish(message.events).catch(() => {});
  });
  return (queue) => {
    const hub = local(queue);
    return {
      async publish(events): Promise<Published> {
        await redis.publish(EVENTS_CHANNEL, JSON.stringify({ queue, events } satisfies Message));
        // Stored and sent by each process's hub when it comes back on the channel.
        return { stored: 0, streams: 0 };
      },
      snapshot: (filter, since) => hub.snapshot(filter, since),
      subscribe: (filter, since) => hub.subscribe(filter, since),
    };
  };
}
