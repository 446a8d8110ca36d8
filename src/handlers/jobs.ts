// Admin routes for jobs: read one, list by state, remove, retry, promote, update.
import { Hono } from 'hono';
import { adminAuth } from './auth';
import { readJson } from './body';
import { type AppEnv, continueInBackground, scopeOf } from './scope';

export const jobRoutes = new Hono<AppEnv>()
  .get('/:queue/jobs', adminAuth, async (c) =>
    c.json(await scopeOf(c).engine.listJobs(c.req.param('queue'), c.req.query())),
  )
  .get('/:queue/jobs/:id', adminAuth, async (c) =>
    c.json(await scopeOf(c).engine.getJob(c.req.param('queue'), c.req.param('id'))),
  )
  .delete('/:queue/jobs/:id', adminAuth, async (c) => {
    await scopeOf(c).engine.removeJob(c.req.param('queue'), c.req.param('id'));
    return c.body(null, 204);
  })
  .post('/:queue/jobs/:id/retry', adminAuth, async (c) => {
    const job = await scopeOf(c).engine.retryJob(c.req.param('queue'), c.req.param('id'));
    continueInBackground(c, c.req.param('queue'), 'drain');
    return c.json(job);
  })
  .post('/:queue/jobs/:id/promote', adminAuth, async (c) => {
    const job = await scopeOf(c).engine.promoteJob(c.req.param('queue'), c.req.param('id'));
    continueInBackground(c, c.req.param('queue'), 'drain');
    return c.json(job);
  })
  .patch('/:queue/jobs/:id', adminAuth, async (c) => {
    const body = await readJson(c);
    const job = await scopeOf(c).engine.updateJob(c.req.param('queue'), c.req.param('id'), body);
    if (job.state === 'delayed') scopeOf(c).due.lower(c.req.param('queue'), job.runAt ?? Date.now());
    return c.json(job);
  });

