// Admin route for a queue's per-minute outcome counters (the dashboard's chart): the last 60
// minutes, oldest first, the current minute last.
import { Hono } from 'hono';
import { adminAuth } from './auth';
import type { AppEnv } from './scope';

export const metricsRoutes = new Hono<AppEnv>().get('/:queue/metrics', adminAuth, async (c) =>
  c.json({ minutes: await c.var.service.getMetrics(c.req.param('queue')) }),
);
