// What differs between the two places the app runs: a Cloudflare Worker (src/index.ts) and the
// Node server (src/server). The app reads `env` as a Worker gets it; the Node server adds one
// binding of its own, RUNTIME, an object (as EVENT_HUB and ASSETS are), which a Worker never has.
// Everything else (routes, engine, scheduler, pushes) is the same code on both.
import type { HubStub } from '../core/events/hubs';
import { workerHub } from '../core/events/stream';
import type { ScriptRunner } from '../core/store/scripts';
import { type RedisConnection, createRedis } from '../core/store/redis';

export interface Runtime {
  /** A client for one database of the pool (REST, or on the Node server TCP for a redis: URL). */
  connect(database: RedisConnection): ScriptRunner;
  /** The event hub of `queue`: the same one whichever request asks. */
  hub(queue: string): HubStub;
}

declare global {
  interface Env {
    /** Set by the Node server only (src/server/env.ts). */
    RUNTIME?: Runtime;
    /** The Node server's database 0 over TCP (redis://), in place of UPSTASH_REDIS_REST_*. */
    REDIS_URL?: string;
  }
}

const workers = new WeakMap<object, Runtime>();

/** The runtime `env` names, or a Worker's: Upstash over REST, and a Durable Object per queue's hub. */
export function runtimeOf(env: Env): Runtime {
  if (env.RUNTIME) return env.RUNTIME;
  let runtime = workers.get(env);
  if (!runtime) {
    runtime = { connect: createRedis, hub: (queue) => workerHub(env.EVENT_HUB.get(env.EVENT_HUB.idFromName(queue))) };
    workers.set(env, runtime);
  }
  return runtime;
}
