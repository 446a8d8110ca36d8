// Admin routes for groups: list, read one (its jobs in order), pause and resume one group, set
// or delete its runtime limits.
import { Hono } from 'hono';
import { adminAuth } from './auth';
import { readJson } from './body';
import type { AppEnv } from './scope';

export const groupRoutes = new Hono<AppEnv>()
  .get('/:queue/groups', adminAuth, async (c) =>
    c.json(await c.var.service.listGroups(c.req.param('queue'), c.req.query())),
  )
  .get('/:queue/groups/:group', adminAuth, async (c) =>
    c.json(await c.var.service.getGroup(c.req.param('queue'), c.req.param('group'))),
  )
  .post('/:queue/groups/:group/pause', adminAuth, async (c) =>
    c.json(await c.var.service.pauseGroup(c.req.param('queue'), c.req.param('group'))),
  )
  .post('/:queue/groups/:group/resume', adminAuth, async (c) =>
    c.json(await c.var.service.resumeGroup(c.req.param('queue'), c.req.param('group'))),
  )
  .put('/:queue/groups/:group/limits', adminAuth, async (c) => {
    const body = await readJson(c);
    return c.json(await c.var.service.setGroupLimits(c.req.param('queue'), c.req.param('group'), body));
  })
  .delete('/:queue/groups/:group/limits', adminAuth, async (c) => {
    await c.var.service.clearGroupLimits(c.req.param('queue'), c.req.param('group'));
    return c.body(null, 204);
  });
