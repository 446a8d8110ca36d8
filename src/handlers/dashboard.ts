// GET /dashboard (and /dashboard/), /dashboard/app.js, /dashboard/app.css: the dashboard's page,
// bundled into src/dashboard/assets.generated.ts by scripts/build-dashboard.mjs. Open, without
// auth: the page holds no data, it asks for the admin token and sends it with each API call.
// Serving it touches no Redis. A strict CSP allows only this origin's script, style and API
// (no inline code, no framing, no forms posting anywhere); ETags let browsers revalidate cheaply.
import { type Context, Hono } from 'hono';
import { type DashboardAsset, dashboardAssets } from '../dashboard/assets.generated';
import type { AppEnv } from './scope';

const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  "img-src 'self' data:",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** If-None-Match matches `etag` (a list, `*`, weak or strong: GET compares weakly, RFC 9110). */
function matches(ifNoneMatch: string | undefined, etag: string): boolean {
  if (ifNoneMatch === undefined) return false;
  if (ifNoneMatch.trim() === '*') return true;
  return ifNoneMatch.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag);
}

function serve(c: Context<AppEnv>, asset: DashboardAsset): Response {
  const headers = {
    'content-type': asset.contentType,
    // Revalidate every time: a deploy changes the assets under the same URLs, and a 304 is cheap.
    'cache-control': 'no-cache',
    etag: asset.etag,
    'content-security-policy': CONTENT_SECURITY_POLICY,
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
  };
  if (matches(c.req.header('if-none-match'), asset.etag)) return c.body(null, 304, headers);
  return c.body(asset.body, 200, headers);
}

export const dashboardRoutes = new Hono<AppEnv>()
  .get('/dashboard', (c) => serve(c, dashboardAssets.html))
  .get('/dashboard/', (c) => serve(c, dashboardAssets.html))
  .get('/dashboard/app.js', (c) => serve(c, dashboardAssets.js))
  .get('/dashboard/app.css', (c) => serve(c, dashboardAssets.css));
