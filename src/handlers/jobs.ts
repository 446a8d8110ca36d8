// Admin routes for jobs: read one (waiting for it to finish if asked), list by state, remove,
// retry, promote, cancel, update; and in bulk, retry every failed job and delete every job of a finished
// state.
import { Hono } from 'hono';
import { adminAuth } from './auth';
import { readJson } from './body';
import type { AppEnv } from './scope';

export const jobRoutes = new Hono<AppEnv>()
  .get('/:queue/jobs', adminAuth, async (c) =>
    c.json(await c.var.service.listJobs(c.req.param('queue'), c.req.query())),
  )
  .post('/:queue/jobs/retry', adminAuth, async (c) => {
    const body = await readJson(c);
    return c.json(await c.var.service.retryJobs(c.req.param('queue'), body));
  })
  .delete('/:queue/jobs', adminAuth, async (c) =>
    c.json(await c.var.service.cleanJobs(c.req.param('queue'), c.req.query())),
  )
  // ?waitMs=N: answers once the job has finished, or after N ms (src/core/engine/wait-job.ts).
  .get('/:queue/jobs/:id', adminAuth, async (c) =>
    c.json(await c.var.service.waitForJob(c.req.param('queue'), c.req.param('id'), c.req.query())),
  )
  .delete('/:queue/jobs/:id', adminAuth, async (c) => {
    await c.var.service.removeJob(c.req.param('queue'), c.req.param('id'));
    return c.body(null, 204);
  })
  .post('/:queue/jobs/:id/retry', adminAuth, async (c) =>
    c.json(await c.var.service.retryJob(c.req.param('queue'), c.req.param('id'))),
  )
  .post('/:queue/jobs/:id/promote', adminAuth, async (c) =>
    c.json(await c.var.service.promoteJob(c.req.param('queue'), c.req.param('id'))),
  )
  .post('/:queue/jobs/:id/cancel', adminAuth, async (c) =>
    c.json(await c.var.service.cancelJob(c.req.param('queue'), c.req.param('id'))),
  )
  .patch('/:queue/jobs/:id', adminAuth, async (c) => {
    const body = await readJson(c);
    return c.json(await c.var.service.updateJob(c.req.param('queue'), c.req.param('id'), body));
  });

