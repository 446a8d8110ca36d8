// The HTTP API (README, HTTP API (v1)). Route groups live in their own files; admin routes carry
// adminAuth themselves, because enqueue routes (publish tokens, CORS) and lease callbacks (the
// lease token) share their paths' prefix but not their auth.
import { Hono } from 'hono';
import { callbackRoutes } from './callbacks';
import { dashboardRoutes } from './dashboard';
import { noRouteFor } from './allowed-methods';
import { onError } from './errors';
import { groupRoutes } from './groups';
import { healthRoutes } from './health';
import { homeRoutes } from './home';
import { jobRoutes } from './jobs';
import { metricsRoutes } from './metrics';
import { publishingRoutes } from './publishing';
import { queueRoutes } from './queues';
import { repeatRoutes } from './repeats';
import type { AppEnv } from './scope';

export const app = new Hono<AppEnv>()
  .route('/', homeRoutes)
  .route('/', healthRoutes)
  .route('/', dashboardRoutes)
  .route('/v1/queues', publishingRoutes)
  .route('/v1/queues', callbackRoutes)
  .route('/v1/queues', jobRoutes)
  .route('/v1/queues', groupRoutes)
  .route('/v1/queues', repeatRoutes)
  .route('/v1/queues', metricsRoutes)
  .route('/v1/queues', queueRoutes);

app.onError(onError);
app.notFound(noRouteFor(app));
