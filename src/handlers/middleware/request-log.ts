// Every request's id and its one log line (docs/logs.md). The id is Cloudflare's cf-ray when the
// request came through Cloudflare (the same id Cloudflare's own logs and support know it by),
// else a generated one. It is set before anything else runs, so that every answer carries it as
// x-request-id (errors too, whose body repeats it), every line the request logs carries it, and
// every job or outcome callback its follow-up pushes carries it as groupq-request-id.
import type { Context } from 'hono';
import { createMiddleware } from 'hono/factory';
import { matchedRoutes } from 'hono/route';
import { type Log, createLog } from '../../core/log';
import type { AppEnv } from '../scope';
import { settingsOf } from '../settings';

export const REQUEST_ID_HEADER = 'x-request-id';

/**
 * A cf-ray as Cloudflare sets it (16 hex digits, a dash, the data centre: 8f1c2a3b4d5e6f70-AMS).
 * Only what looks like one is taken: without Cloudflare in front (local development), anyone may
 * send the header, and the id is logged and echoed.
 */
const CF_RAY = /^[0-9a-f]{16}-[A-Z]{3}$/;
/** How much of an unmatched path a request line keeps. */
const PATH_CHARS = 200;

/** The request's id: its cf-ray, else a new random one. */
export function requestIdOf(headers: Headers): string {
  const ray = headers.get('cf-ray');
  return ray !== null && CF_RAY.test(ray) ? ray : crypto.randomUUID();
}

/**
 * The route pattern that answered (`/v1/queues/:queue/jobs`), never the path itself (job ids,
 * group names). A route's own middleware (adminAuth's 401) answers at the route's pattern; when
 * one registered with use() (method ALL: openScope, etag) answered, it is the pattern of the
 * route the request was on its way to. `atRoute`: the answer came from the route itself, whose
 * params (`:queue`) can be read. Null when no route matched (404, 405).
 */
function routeOf(c: Context): { route: string | null; atRoute: boolean } {
  const routes = matchedRoutes(c);
  const current = routes[c.req.routeIndex];
  if (current && current.method !== 'ALL') return { route: current.path, atRoute: true };
  return { route: routes.find((route) => route.method !== 'ALL')?.path ?? null, atRoute: false };
}

/**
 * Gives the request its id and its log (`c.var.requestId`, `c.var.log`) and, once it has been
 * answered, echoes the id as x-request-id and writes the request line: info, or error for a 5xx
 * (whose cause onError has logged). Runs first, before openScope.
 */
export const requestLog = createMiddleware<AppEnv>(async function requestLog(c, next) {
  const start = Date.now();
  const requestId = requestIdOf(c.req.raw.headers);
  // src/index.ts answers before the app while the bindings do not parse: here they do.
  const log: Log = createLog(settingsOf(c.env).logLevel, { requestId });
  c.set('requestId', requestId);
  c.set('log', log);
  await next();
  c.header(REQUEST_ID_HEADER, requestId);
  const status = c.res.status;
  const level = status >= 500 ? 'error' : 'info';
  if (!log.enabled(level)) return;
  const { route, atRoute } = routeOf(c);
  const queue = atRoute ? c.req.param('queue') : undefined;
  const method = c.req.method;
  log[level]('request', `${method} ${route ?? 'no route'} ${status}`, {
    method,
    route,
    // Only a request no route took says its path: a route's pattern says what was asked.
    path: route === null ? c.req.path.slice(0, PATH_CHARS) : undefined,
    status,
    durationMs: Date.now() - start,
    queue,
  });
});
