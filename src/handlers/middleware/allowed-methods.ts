// 405 for a path that has routes, asked with a method none of them takes. The methods are read
// from the app's own router, so the Allow header cannot drift from the routes.
import type { Context, Hono } from 'hono';
import { QueueError } from '../../protocol/errors';
import { errorResponse } from './errors';
import type { AppEnv } from '../scope';

/** What is read of the app: its routes, and the router that matches them. */
type Routes = Pick<Hono<AppEnv>, 'routes' | 'router'>;

/** The methods `path` has routes for, HEAD included wherever GET is (Hono answers it with GET). */
export function allowedMethods(app: Routes, path: string): string[] {
  const methods = new Set(app.routes.map((route) => route.method).filter((method) => method !== 'ALL'));
  const allowed = [...methods].filter((method) =>
    app.router.match(method, path)[0].some(([[, route]]) => route.method === method),
  );
  if (allowed.includes('GET')) allowed.push('HEAD');
  return allowed.sort();
}

/** The app's not-found handler: 405 with Allow when the path is known, else 404 NOT_FOUND. */
export function noRouteFor(app: Routes) {
  return function noRoute(c: Context): Response {
    const where = `${c.req.method} ${new URL(c.req.url).pathname}`;
    const allowed = allowedMethods(app, c.req.path);
    if (allowed.length === 0) return errorResponse(c, new QueueError('NOT_FOUND', `no route for ${where}`));
    c.header('allow', allowed.join(', '));
    return errorResponse(c, new QueueError('METHOD_NOT_ALLOWED', `${where} is not allowed; this path takes ${allowed.join(', ')}`, { allow: allowed }));
  };
}
