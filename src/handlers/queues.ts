// Admin routes for queues: create/replace, read, list, delete, pause and resume, repair.
import { Hono } from 'hono';
import { adminAuth } from './auth';
import { readJson } from './body';
import { type AppEnv, scopeOf } from './scope';

export const queueRoutes = new Hono<AppEnv>()
  .get('/', adminAuth, async (c) => c.json({ queues: await scopeOf(c).service.listQueues() }))
  .put('/:queue', adminAuth, async (c) => {
    const body = await readJson(c);
    const { name, config, counts } = await scopeOf(c).service.putQueue(c.req.param('queue'), body);
    return c.json({ name, config, counts });
  })
  .get('/:queue', adminAuth, async (c) => c.json(await scopeOf(c).service.getQueue(c.req.param('queue'))))
  .delete('/:queue', adminAuth, async (c) => {
    await scopeOf(c).service.deleteQueue(c.req.param('queue'));
    return c.body(null, 204);
  })
  .post('/:queue/pause', adminAuth, async (c) => c.json(await scopeOf(c).service.pauseQueue(c.req.param('queue'))))
  .post('/:queue/resume', adminAuth, async (c) => c.json(await scopeOf(c).service.resumeQueue(c.req.param('queue'))))
  // Brings back jobs stranded by scripts that failed half way (README, Repair).
  .post('/:queue/repair', adminAuth, async (c) => c.json(await scopeOf(c).service.repairQueue(c.req.param('queue'))));
