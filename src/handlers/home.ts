// GET /: where to go from here, for whoever opens the Worker's URL. Open, and touches no Redis.
import { Hono } from 'hono';
import type { AppEnv } from './scope';

/** The README, which documents the API, the client, the receiver and the deploy. */
const DOCS_URL = 'https://www.npmjs.com/package/groupq';

export const homeRoutes = new Hono<AppEnv>().get('/', (c) =>
  c.json({ name: 'groupq', dashboard: '/dashboard', health: '/health', api: '/v1/queues', docs: DOCS_URL }),
);
