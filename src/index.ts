// The Worker: Hono routes for fetch, and the cron trigger for the scheduler.
import { Hono } from 'hono';
import { createEngine, type Engine } from './core/engine';
import { createRedis } from './core/redis';
import { healthRoutes } from './handlers/health';
import { tickAllQueues } from './handlers/scheduled';
import { type Env, settingsOf } from './handlers/settings';

function engineOf(env: Env): Engine {
  const settings = settingsOf(env);
  return createEngine({ redis: createRedis(settings.redis), allowHttpLoopback: settings.allowHttpLoopback });
}

const app = new Hono<{ Bindings: Env }>();
app.route('/', healthRoutes(engineOf));

export default {
  fetch: app.fetch,
  async scheduled(_controller, env, ctx) {
    ctx.waitUntil(tickAllQueues(engineOf(env)));
  },
} satisfies ExportedHandler<Env>;
