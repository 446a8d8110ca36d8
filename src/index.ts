// The Worker: the HTTP API for fetch, the scheduler for the cron trigger.
import { app } from './handlers/app';
import { runScheduled } from './handlers/scheduled';

export default {
  fetch: app.fetch,
  async scheduled(_controller, env, ctx) {
    ctx.waitUntil(runScheduled(env));
  },
} satisfies ExportedHandler<Env>;
