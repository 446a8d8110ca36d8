// The open pages, which touch no Redis:
// - GET /: where to go from here, for whoever opens the Worker's URL;
// - GET /openapi.json: the OpenAPI 3.1 document of this API (src/protocol/api/openapi.generated.json,
//   built by `npm run build:openapi`), minified; any origin may read it (it is public, and API
//   tools fetch it from the browser);
// - GET /dashboard (and /dashboard/), /dashboard/app.js, /dashboard/app.css: the dashboard's page,
//   Workers static assets in public/dashboard (built by scripts/build-dashboard.mjs), read through
//   the ASSETS binding. Without auth: the page holds no data, it asks for the admin token and
//   sends it with each API call. Its headers (strict CSP, nosniff, no-referrer, no-cache) come
//   from public/_headers. The Worker runs first on these paths (wrangler.toml run_worker_first)
//   for two things the asset worker does not do: one page at /dashboard and /dashboard/ alike
//   (no redirect, so the page's own #/ links stay put), and a 304 for an If-None-Match list
//   (hono/etag; the asset worker compares the whole header with its one tag).
// hono/etag lets clients revalidate the document and the dashboard.
import type { Context } from 'hono';
import document from '../protocol/api/openapi.generated.json';
import type { AppEnv } from './scope';

export function home(c: Context<AppEnv>) {
  return c.json({
    name: 'groupq',
    dashboard: '/dashboard',
    health: '/health',
    api: '/v1/queues',
    /** The OpenAPI 3.1 document of the HTTP API. */
    openapi: '/openapi.json',
    /** The API reference, rendered from that document (a static asset: public/reference.html). */
    docs: '/reference',
  });
}

let text: string | undefined;

export function openApi(c: Context<AppEnv>) {
  text ??= JSON.stringify(document);
  return c.body(text, 200, {
    'content-type': 'application/json; charset=utf-8',
    'cache-control': 'no-cache',
    'access-control-allow-origin': '*',
    'x-content-type-options': 'nosniff',
  });
}

/** Answers with the static asset at `path` (the asset worker serves index.html at its folder's URL). */
export const asset = (path: string) => async (c: Context<AppEnv>) => {
  // A request of our own, without the browser's conditional headers: hono/etag answers them.
  const res = await c.env.ASSETS.fetch(new URL(path, c.req.url));
  // A fetched response's headers are immutable; hono/etag sets the ETag again.
  return new Response(res.body, res);
};
