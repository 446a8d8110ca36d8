// The Worker: the HTTP API for fetch, the scheduler for the cron trigger. A Worker whose bindings
// are wrong or missing (settingsOf) starts neither: every request answers 500 naming the
// binding, and the scheduled handler throws.
import { createLog } from './core/log';
import { app } from './handlers/app';
import { REQUEST_ID_HEADER, requestIdOf } from './handlers/request-log';
import { runScheduled } from './handlers/scheduled';
import { BindingsError, settingsOf } from './handlers/settings';

/** The most of an unread request body the Worker reads to keep the connection open. */
const DRAIN_MAX_BYTES = 64 * 1024;

/**
 * Reads what an answer left unread of its request's body, up to DRAIN_MAX_BYTES (a refusal that
 * never looked at it: 401, 404, 415). In workerd the Worker sits behind the static-assets router,
 * which cannot reuse a keep-alive connection whose request body was left unread: the client's
 * next request on it fails with a reset. A larger body is cancelled and its connection closes.
 */
async function drainBody(request: Request): Promise<void> {
  if (request.body === null || request.bodyUsed) return;
  const reader = request.body.getReader();
  for (let read = 0; read <= DRAIN_MAX_BYTES; ) {
    const { done, value } = await reader.read();
    if (done) return;
    read += value.byteLength;
  }
  await reader.cancel();
}

/**
 * The app's answer, or the 500 of a Worker whose bindings do not parse: with a request id as the
 * app's answers have (src/handlers/request-log.ts), logged at error whatever GROUPQ_LOG_LEVEL
 * says (it is one of the bindings that may not parse).
 */
async function answer(request: Request, env: Env, ctx: ExecutionContext): Promise<Response> {
  try {
    settingsOf(env);
  } catch (error) {
    if (!(error instanceof BindingsError)) throw error;
    const requestId = requestIdOf(request.headers);
    createLog('error', { requestId }).error('bindings_invalid', error.message);
    const body = { error: { code: 'INTERNAL', message: error.message, requestId } };
    return Response.json(body, { status: 500, headers: { [REQUEST_ID_HEADER]: requestId } });
  }
  return app.fetch(request, env, ctx);
}

export default {
  async fetch(request, env, ctx) {
    const response = await answer(request, env, ctx);
    ctx.waitUntil(drainBody(request).catch(() => {}));
    return response;
  },
  async scheduled(_controller, env, ctx) {
    settingsOf(env);
    ctx.waitUntil(runScheduled(env));
  },
} satisfies ExportedHandler<Env>;
