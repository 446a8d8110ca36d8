// GET /health: open, cheap, and honest about Redis.
import { Hono } from 'hono';
import { type AppEnv, scopeOf } from './scope';

export const healthRoutes = new Hono<AppEnv>().get('/health', async (c) => {
  // Outside the try: bindings that do not parse are a 500 naming them in the log, not "redis down".
  const { service } = scopeOf(c);
  try {
    await service.countQueues();
    return c.json({ ok: true, redis: 'ok' });
  } catch (error) {
    console.error('groupq: health check failed', error);
    return c.json({ ok: false, redis: 'down' }, 503);
  }
});
