// GET /health: open, cheap, and honest about Redis. One database: a count of the queues (one
// command), {"ok":true,"redis":"ok"}. A pool (docs/scaling-out.md): one command on each database,
// and `databases` says which answered; any one down is 503, with Retry-After as every 503 has.
import { Hono } from 'hono';
import type { AppEnv } from './scope';

export const healthRoutes = new Hono<AppEnv>().get('/health', async (c) => {
  if (c.var.settings.databases.length > 1) {
    const databases = await c.var.service.databaseStates();
    const ok = databases.every((state) => state === 'ok');
    if (!ok) c.var.log.error('health_down', 'health check: databases down', { databases: databases.flatMap((state, i) => (state === 'down' ? [i] : [])) });
    if (!ok) c.header('retry-after', '1');
    return c.json({ ok, redis: databases[0]!, databases }, ok ? 200 : 503);
  }
  try {
    await c.var.service.countQueues();
    return c.json({ ok: true, redis: 'ok' as const });
  } catch (error) {
    c.var.log.error('health_down', 'health check failed', { error });
    c.header('retry-after', '1');
    return c.json({ ok: false, redis: 'down' as const }, 503);
  }
});
