// Admin routes for queues: create/replace, read, list, delete, pause and resume.
import { Hono } from 'hono';
import { adminAuth } from './auth';
import { readJson } from './body';
import { type AppEnv, continueInBackground, scopeOf } from './scope';

export const queueRoutes = new Hono<AppEnv>()
  .get('/', adminAuth, async (c) => c.json({ queues: await scopeOf(c).engine.listQueues() }))
  .put('/:queue', adminAuth, async (c) => {
    const body = await readJson(c);
    const { name, config, counts } = await scopeOf(c).engine.putQueue(c.req.param('queue'), body);
    return c.json({ name, config, counts });
  })
  .get('/:queue', adminAuth, async (c) => c.json(await scopeOf(c).engine.getQueue(c.req.param('queue'))))
  .delete('/:queue', adminAuth, async (c) => {
    await scopeOf(c).engine.deleteQueue(c.req.param('queue'));
    return c.body(null, 204);
  })
  .post('/:queue/pause', adminAuth, async (c) => c.json(await scopeOf(c).engine.pauseQueue(c.req.param('queue'))))
  .post('/:queue/resume', adminAuth, async (c) => {
    const queue = c.req.param('queue');
    const result = await scopeOf(c).engine.resumeQueue(queue);
    // Jobs waited while paused: deliver them now, not at the next cron.
    continueInBackground(c, queue, 'drain');
    return c.json(result);
  });
