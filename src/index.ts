// The Worker: the HTTP API for fetch, the scheduler for the cron trigger. A Worker whose bindings
// are wrong or missing (settingsOf) starts neither: every request answers 500 naming the
// binding, and the scheduled handler throws.
import { app } from './handlers/app';
import { runScheduled } from './handlers/scheduled';
import { BindingsError, settingsOf } from './handlers/settings';

export default {
  fetch(request, env, ctx) {
    try {
      settingsOf(env);
    } catch (error) {
      if (!(error instanceof BindingsError)) throw error;
      console.error(error.message);
      return Response.json({ error: { code: 'INTERNAL', message: error.message } }, { status: 500 });
    }
    return app.fetch(request, env, ctx);
  },
  async scheduled(_controller, env, ctx) {
    settingsOf(env);
    ctx.waitUntil(runScheduled(env));
  },
} satisfies ExportedHandler<Env>;
