// Admin routes for queues: create/replace, change some fields, read, list, delete, pause and resume, repair.
import { Hono } from 'hono';
import { adminAuth } from './auth';
import { readJson } from './body';
import type { AppEnv } from './scope';

export const queueRoutes = new Hono<AppEnv>()
  .get('/', adminAuth, async (c) => c.json({ queues: await c.var.service.listQueues() }))
  .put('/:queue', adminAuth, async (c) => {
    const body = await readJson(c);
    const { name, config, counts } = await c.var.service.putQueue(c.req.param('queue'), body);
    return c.json({ name, config, counts });
  })
  .patch('/:queue', adminAuth, async (c) => {
    const { name, config, counts } = await c.var.service.patchQueue(c.req.param('queue'), await readJson(c));
    return c.json({ name, config, counts });
  })
  .get('/:queue', adminAuth, async (c) => c.json(await c.var.service.getQueue(c.req.param('queue'))))
  .delete('/:queue', adminAuth, async (c) => {
    await c.var.service.deleteQueue(c.req.param('queue'));
    return c.body(null, 204);
  })
  .post('/:queue/pause', adminAuth, async (c) => c.json(await c.var.service.pauseQueue(c.req.param('queue'))))
  .get('/:queue/partitions', adminAuth, async (c) => c.json({ partitions: await c.var.service.listPartitions(c.req.param('queue')) }))
  .post('/:queue/partitions/:partition/move', adminAuth, async (c) =>
    c.json(await c.var.service.movePartition(c.req.param('queue'), c.req.param('partition'), await readJson(c))),
  )
  .post('/:queue/resume', adminAuth, async (c) => c.json(await c.var.service.resumeQueue(c.req.param('queue'))))
  // Brings back jobs stranded by scripts that failed half way (docs/http-api.md#repair).
  .post('/:queue/repair', adminAuth, async (c) => c.json(await c.var.service.repairQueue(c.req.param('queue'))));
