// GET /health: open, cheap, and honest about Redis.
import { Hono } from 'hono';
import type { AppEnv } from './scope';

export const healthRoutes = new Hono<AppEnv>().get('/health', async (c) => {
  try {
    await c.var.service.countQueues();
    return c.json({ ok: true, redis: 'ok' });
  } catch (error) {
    console.error('groupq: health check failed', error);
    return c.json({ ok: false, redis: 'down' }, 503);
  }
});
