// Admin routes for jobs: read one, list by state, remove, retry, promote, cancel, update.
import { Hono } from 'hono';
import { adminAuth } from './auth';
import { readJson } from './body';
import { type AppEnv, scopeOf } from './scope';

export const jobRoutes = new Hono<AppEnv>()
  .get('/:queue/jobs', adminAuth, async (c) =>
    c.json(await scopeOf(c).service.listJobs(c.req.param('queue'), c.req.query())),
  )
  .get('/:queue/jobs/:id', adminAuth, async (c) =>
    c.json(await scopeOf(c).service.getJob(c.req.param('queue'), c.req.param('id'))),
  )
  .delete('/:queue/jobs/:id', adminAuth, async (c) => {
    await scopeOf(c).service.removeJob(c.req.param('queue'), c.req.param('id'));
    return c.body(null, 204);
  })
  .post('/:queue/jobs/:id/retry', adminAuth, async (c) =>
    c.json(await scopeOf(c).service.retryJob(c.req.param('queue'), c.req.param('id'))),
  )
  .post('/:queue/jobs/:id/promote', adminAuth, async (c) =>
    c.json(await scopeOf(c).service.promoteJob(c.req.param('queue'), c.req.param('id'))),
  )
  .post('/:queue/jobs/:id/cancel', adminAuth, async (c) =>
    c.json(await scopeOf(c).service.cancelJob(c.req.param('queue'), c.req.param('id'))),
  )
  .patch('/:queue/jobs/:id', adminAuth, async (c) => {
    const body = await readJson(c);
    return c.json(await scopeOf(c).service.updateJob(c.req.param('queue'), c.req.param('id'), body));
  });

