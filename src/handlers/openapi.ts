// GET /openapi.json: the OpenAPI 3.1 document of this API (src/protocol/openapi.generated.json,
// built by `npm run build:openapi`), minified. Open, touches no Redis; any origin may read it
// (it is public, and API tools fetch it from the browser). hono/etag lets clients revalidate.
import { Hono } from 'hono';
import { etag } from 'hono/etag';
import document from '../protocol/openapi.generated.json';
import type { AppEnv } from './scope';

let text: string | undefined;

export const openApiRoutes = new Hono<AppEnv>().get('/openapi.json', etag(), (c) => {
  text ??= JSON.stringify(document);
  return c.body(text, 200, {
    'content-type': 'application/json; charset=utf-8',
    'cache-control': 'no-cache',
    'access-control-allow-origin': '*',
    'x-content-type-options': 'nosniff',
  });
});
