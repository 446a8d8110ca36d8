// The Node server's Runtime (src/handlers/runtime.ts): a client per database, over TCP for a
// redis:// URL (redis-tcp.ts) and over Upstash's REST API otherwise (the Worker's client), and
// the queues' event hubs in this process (hub.ts), shared with the other processes through
// Redis pub/sub when database 0 is reached over TCP (bus.ts). It keeps what it opened, to close.
import type { HubStub } from '../core/events/hubs';
import type { Runtime } from '../handlers/runtime';
import { type Settings, isTcp } from '../handlers/settings';
import { type RedisConnection, createRedis } from '../core/store/redis';
import { busHubs } from './bus';
import { createHubs } from './hub';
import { type TcpRedis, createTcpRedis } from './redis-tcp';

export interface ServerRuntime extends Runtime {
  /** Subscribes to the other processes' events (database 0 over TCP); before the first request. */
  start(settings: Settings): Promise<void>;
  /** Closes the TCP connections and the hubs (their streams end: readers resume elsewhere). */
  close(): Promise<void>;
}

export function createServerRuntime(): ServerRuntime {
  const tcp: TcpRedis[] = [];
  const hubs = createHubs();
  let hubOf: (queue: string) => HubStub = (queue) => hubs.hub(queue);
  const open = (url: string) => {
    const client = createTcpRedis(url);
    tcp.push(client);
    return client;
  };
  return {
    connect: (database: RedisConnection) => (isTcp(database.url) ? open(database.url) : createRedis(database)),
    hub: (queue) => hubOf(queue),
    async start(settings) {
      const control = settings.databases[0]!.url;
      // Over REST there is no subscribing: this process' streams see the events of its own scripts (docs/self-hosting.md).
      if (isTcp(control)) hubOf = await busHubs(open(control), (queue) => hubs.hub(queue));
    },
    async close() {
      hubs.close();
      await Promise.all(tcp.map((client) => client.close()));
    },
  };
}
