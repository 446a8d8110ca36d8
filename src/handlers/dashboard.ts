// GET /dashboard (and /dashboard/), /dashboard/app.js, /dashboard/app.css: the dashboard's page,
// Workers static assets in public/dashboard (built by scripts/build-dashboard.mjs), read through
// the ASSETS binding. Open, without auth: the page holds no data, it asks for the admin token and
// sends it with each API call. Serving it touches no Redis. Its headers (strict CSP, nosniff,
// no-referrer, no-cache) come from public/_headers and its ETag from the asset worker.
// The Worker runs first on these paths (wrangler.toml run_worker_first) for two things the
// asset worker does not do: one page at /dashboard and /dashboard/ alike (no redirect, so the
// page's own #/ links stay put), and a 304 for an If-None-Match list (hono/etag; the asset worker
// compares the whole header with its one tag).
import { type Context, Hono } from 'hono';
import { etag } from 'hono/etag';
import type { AppEnv } from './scope';

/** Answers with the static asset at `path` (the asset worker serves index.html at its folder's URL). */
const asset = (path: string) => async (c: Context<AppEnv>) => {
  // A request of our own, without the browser's conditional headers: hono/etag answers them.
  const res = await c.env.ASSETS.fetch(new URL(path, c.req.url));
  // A fetched response's headers are immutable; hono/etag sets the ETag again.
  return new Response(res.body, res);
};

// '/dashboard/*' covers '/dashboard' too.
export const dashboardRoutes = new Hono<AppEnv>()
  .use('/dashboard/*', etag())
  .get('/dashboard', asset('/dashboard/'))
  .get('/dashboard/', asset('/dashboard/'))
  .get('/dashboard/app.js', asset('/dashboard/app.js'))
  .get('/dashboard/app.css', asset('/dashboard/app.css'));
