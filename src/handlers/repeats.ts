// Admin routes for repeatable jobs: put (create or replace), list, delete.
import { Hono } from 'hono';
import { adminAuth } from './auth';
import { readJson } from './body';
import type { AppEnv } from './scope';

export const repeatRoutes = new Hono<AppEnv>()
  .get('/:queue/repeats', adminAuth, async (c) =>
    c.json({ repeats: await c.var.service.listRepeats(c.req.param('queue')) }),
  )
  .put('/:queue/repeats/:key', adminAuth, async (c) => {
    const body = await readJson(c);
    const { queue, key } = c.req.param();
    return c.json(await c.var.service.putRepeat(queue, key, body));
  })
  .delete('/:queue/repeats/:key', adminAuth, async (c) => {
    await c.var.service.deleteRepeat(c.req.param('queue'), c.req.param('key'));
    return c.body(null, 204);
  });
