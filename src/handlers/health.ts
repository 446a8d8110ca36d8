// GET /health: open, cheap, and honest about Redis. Anyone may ask, so an anonymous answer says
// only whether the Worker reaches Redis, every database of a pool (docs/scaling-out.md), and comes
// from what this isolate found within the last HEALTH_CACHE_MS: a stranger's requests cost at
// most one check a second per isolate, and tell nothing of the pool's size or which database is
// down. With the admin token the answer is checked now and names each database. One database:
// a count of the queues (one command). A pool: one command on each database. Not ok is 503, with
// Retry-After as every 503 has.
import type { Context } from 'hono';
import { countQueues } from '../core/engine/queues';
import { databaseStates } from '../core/store/pool';
import { timingSafeEqual } from 'hono/utils/buffer';
import { bearerOf } from './middleware/auth';
import type { Settings } from './settings';
import type { AppEnv } from './scope';

/** How long an anonymous answer is reused in an isolate. */
export const HEALTH_CACHE_MS = 1_000;

type Up = 'ok' | 'down';
interface Health {
  ok: boolean;
  redis: Up;
  databases?: Up[];
}
interface Cached {
  /** Shared by the requests that come meanwhile, so a burst costs one check. */
  health: Promise<Health>;
  until: number;
}

/** Each isolate's last anonymous answer, by its settings (one object per isolate). */
const cache = new WeakMap<Settings, Cached>();

export async function health(c: Context<AppEnv>) {
  const token = bearerOf(c);
  const admin = token !== null && (await timingSafeEqual(token, c.var.settings.adminToken));
  const check = async (): Promise<Health> => {
    if (c.var.settings.databases.length > 1) {
      const databases = await databaseStates(c.var.ctx);
      const ok = databases.every((state) => state === 'ok');
      if (!ok) c.var.log.error('health_down', 'health check: databases down', { databases: databases.flatMap((state, i) => (state === 'down' ? [i] : [])) });
      return { ok, redis: databases[0]!, databases };
    }
    try {
      await countQueues(c.var.ctx);
      return { ok: true, redis: 'ok' };
    } catch (error) {
      c.var.log.error('health_down', 'health check failed', { error });
      return { ok: false, redis: 'down' };
    }
  };
  let health: Health;
  if (admin) {
    health = await check();
  } else {
    const now = Date.now();
    let cached = cache.get(c.var.settings);
    if (!cached || cached.until <= now) {
      cached = { health: check(), until: now + HEALTH_CACHE_MS };
      cache.set(c.var.settings, cached);
      // The check runs on in this request's context while others await it: a client that hangs
      // up must not cancel it under them.
      c.executionCtx.waitUntil(cached.health);
    }
    const { ok } = await cached.health;
    // `redis` anonymously: whether every database answered, not which.
    health = { ok, redis: ok ? 'ok' : 'down' };
  }
  if (!health.ok) c.header('retry-after', '1');
  return c.json(health, health.ok ? 200 : 503);
}
