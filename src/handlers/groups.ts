// Admin routes for groups: list, read one (its jobs in order), pause and resume one group.
import { Hono } from 'hono';
import { adminAuth } from './auth';
import { type AppEnv, scopeOf } from './scope';

export const groupRoutes = new Hono<AppEnv>()
  .get('/:queue/groups', adminAuth, async (c) =>
    c.json(await scopeOf(c).service.listGroups(c.req.param('queue'), c.req.query())),
  )
  .get('/:queue/groups/:group', adminAuth, async (c) =>
    c.json(await scopeOf(c).service.getGroup(c.req.param('queue'), c.req.param('group'))),
  )
  .post('/:queue/groups/:group/pause', adminAuth, async (c) =>
    c.json(await scopeOf(c).service.pauseGroup(c.req.param('queue'), c.req.param('group'))),
  )
  .post('/:queue/groups/:group/resume', adminAuth, async (c) =>
    c.json(await scopeOf(c).service.resumeGroup(c.req.param('queue'), c.req.param('group'))),
  );
