// EventHub: one Durable Object per queue (`idFromName(queue)`) that every Worker reaches, so the
// events any Worker got from a script reach every stream of the queue, wherever it is open
// (docs/events.md). What the hub does is hub-core.ts's (the Node server runs the same); this is
// its Durable Object: the log and the order in its SQLite storage (log-store.ts,
// order-store.ts), its streams as hibernatable WebSockets (ctx.acceptWebSocket), its alarm. Between
// events the runtime may evict it from memory with its sockets still open, and it bills no
// duration then (the hibernated after 30 idle seconds with its readers attached).
// So nothing lives only in memory: the log and its ids are in storage, each socket's filter is
// its tag and its attachment.
//
// - publish(events): RPC from the Worker that got them in a script's reply (hub-core.ts).
// - fetch(/subscribe?group=|job=|since=): a stream attaches (WebSocket upgrade); the hub answers
//   a hello, then the held events after `since` that match, then live ones.
// - snapshot(filter, since): the held events after `since`, for a reader that needs no live ones.
import { DurableObject } from 'cloudflare:workers';
import { EVENTS_RETENTION_MS } from '../../protocol/constants';
import { HubCore, type Sockets } from './hub-core';
import type { Published, Snapshot } from './hubs';
import { EventLog } from './log';
import { sqlLogStore } from './log-store';
import { type OrderCounts, Sequencer } from './order';
import { sqlOrderStore } from './order-store';
import { type EventFilter, type PublishedEvent, filterOf, tagOf } from './wire';

export class EventHub extends DurableObject<Env> {
  private readonly core: HubCore<WebSocket>;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    // The runtime keeps the sockets, their tags and attachments across hibernation.
    const sockets: Sockets<WebSocket> = {
      all: () => ctx.getWebSockets(),
      tagged: (tag) => ctx.getWebSockets(tag),
      filterOf: (ws) => ws.deserializeAttachment() as EventFilter,
    };
    // Synchronous SQLite: nothing awaits, so no other call runs between a read and its write.
    const log = new EventLog(sqlLogStore(ctx.storage.sql), EVENTS_RETENTION_MS);
    const order = new Sequencer(sqlOrderStore(ctx.storage.sql));
    this.core = new HubCore(sockets, log, order, (at) => ctx.storage.setAlarm(at));
  }

  /** Takes one script call's events, in order (hub-core.ts publish). */
  publish(events: PublishedEvent[]): Published {
    return this.core.publish(events);
  }

  /** What the order did since the hub last woke: for tests and the bench (order.ts OrderCounts). */
  orderCounts(): OrderCounts {
    return this.core.orderCounts();
  }

  /** A hold ended with nothing else coming: the hub moves on (a `gap`, then what was held). */
  override alarm(): void {
    this.core.alarm();
  }

  /** The held events after `since` that match `filter` (all held ones' ids after it, in order). */
  snapshot(filter: EventFilter, since?: string): Snapshot {
    return this.core.snapshot(filter, since);
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
    // The messages wait for the stream to accept.
    this.core.greet(server, filter, since);
    return new Response(null, { status: 101, webSocket: client });
  }

  /** A stream asked Redis for events until a later time (hub-core.ts message). */
  override webSocketMessage(_ws: WebSocket, message: string | ArrayBuffer): void {
    this.core.message(message as string);
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
