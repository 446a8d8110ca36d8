// GET /health: open, cheap, and honest about Redis.
import { Hono } from 'hono';
import type { Engine } from '../core/engine';
import type { Env } from './settings';

export function healthRoutes(engineOf: (env: Env) => Engine) {
  return new Hono<{ Bindings: Env }>().get('/health', async (c) => {
    try {
      await engineOf(c.env).countQueues();
      return c.json({ ok: true, redis: 'ok' });
    } catch (error) {
      console.error('groupq: health check failed', error);
      return c.json({ ok: false, redis: 'down' }, 503);
    }
  });
}
