// GET /: where to go from here, for whoever opens the Worker's URL. Open, and touches no Redis.
import { Hono } from 'hono';
import type { AppEnv } from './scope';

export const homeRoutes = new Hono<AppEnv>().get('/', (c) =>
  c.json({
    name: 'groupq',
    dashboard: '/dashboard',
    health: '/health',
    api: '/v1/queues',
    /** The OpenAPI 3.1 document of the HTTP API. */
    openapi: '/openapi.json',
    /** The API reference, rendered from that document (a static asset: public/reference.html). */
    docs: '/reference',
  }),
);
