// The Worker: the HTTP API for fetch, the scheduler for the cron trigger. A Worker whose bindings
// are wrong or missing (settingsOf) starts neither: every request answers 500 (naming the
// binding to the admin token only), and the scheduled handler throws.
import { createLog } from './core/log';
import { app } from './handlers/app';
import { sentRawAdminToken } from './handlers/middleware/auth';
import { MAX_BODY_BYTES } from './handlers/middleware/body';
import { REQUEST_ID_HEADER, requestIdOf } from './handlers/middleware/request-log';
import { runScheduled } from './handlers/scheduled';
import { BindingsError, settingsOf } from './handlers/settings';

// The event hub's class (wrangler.toml's EVENT_HUB binding): a Durable Object class is exported
// by the Worker's main module.
export { EventHub } from './core/events/hub';

/** The most of an unread request body the Worker reads to keep the connection open: any body
 * the API accepts (a larger one is refused with 413 anyway). */
const DRAIN_MAX_BYTES = MAX_BODY_BYTES;

/**
 * Reads what an answer left unread of its request's body, up to DRAIN_MAX_BYTES (a refusal that
 * never looked at it: 401, 404, 415). In workerd (npm run dev, the tests) a connection whose
 * request body is left unread past a few KiB when the answer ends is closed, without a
 * `Connection: close`: the client's write of the rest, or its next request on that keep-alive
 * connection, fails with a reset (issue 28: a storm of malformed requests). So the answer waits
 * for the body, as Node's and nginx's lingering close do. A body declared larger is left
 * unread, one found larger as it streams is cancelled: either way its connection closes.
 */
async function drainBody(request: Request): Promise<void> {
  if (request.body === null || request.bodyUsed) return;
  // Refused by its length (413) before a byte was read: not worth reading, and with
  // `expect: 100-continue` the client sends none of it.
  if (Number(request.headers.get('content-length') ?? 0) > DRAIN_MAX_BYTES) return;
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
 * app's answers have (src/handlers/middleware/request-log.ts), logged at error whatever GROUPQ_LOG_LEVEL
 * says (it is one of the bindings that may not parse). Which binding is broken tells a stranger
 * how the deployment is set up: only the log and the admin token's answer name it.
 */
async function answer(request: Request, env: Env, ctx: ExecutionContext): Promise<Response> {
  try {
    settingsOf(env);
  } catch (error) {
    if (!(error instanceof BindingsError)) throw error;
    const requestId = requestIdOf(request.headers);
    createLog('error', { requestId }).error('bindings_invalid', error.message);
    const message = (await sentRawAdminToken(request, env))
      ? error.message
      : "groupq: the Worker's bindings are invalid or missing: its log, or an answer to the admin token, names them";
    const body = { error: { code: 'INTERNAL', message, requestId } };
    return Response.json(body, { status: 500, headers: { [REQUEST_ID_HEADER]: requestId } });
  }
  return app.fetch(request, env, ctx);
}

export default {
  async fetch(request, env, ctx) {
    const response = await answer(request, env, ctx);
    // Before the answer, not in waitUntil: workerd decides whether to keep the connection as
    // the answer ends, and a body still arriving then is cut off.
    await drainBody(request).catch(() => {});
    return response;
  },
  async scheduled(_controller, env, ctx) {
    settingsOf(env);
    ctx.waitUntil(runScheduled(env, (work) => ctx.waitUntil(work)));
  },
} satisfies ExportedHandler<Env>;
