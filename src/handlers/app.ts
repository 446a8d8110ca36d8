// The HTTP API (docs/http-api.md). Route groups live in their own files; admin routes carry
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
import { openApiRoutes } from './openapi';
import { prometheusRoutes } from './prometheus';
import { publishingRoutes } from './publishing';
import { queueRoutes } from './queues';
import { repeatRoutes } from './repeats';
import { requestLog } from './request-log';
import { type AppEnv, openScope } from './scope';

export const app = new Hono<AppEnv>()
  // Every request's id (x-request-id) and log line, whatever answers it (docs/logs.md).
  .use('*', requestLog)
  // The request's scope (c.var.settings, c.var.service) for the routes that read it; the home
  // page and the dashboard's files need none.
  .use('/health', openScope)
  .use('/metrics', openScope)
  .use('/v1/*', openScope)
  .route('/', homeRoutes)
  .route('/', healthRoutes)
  .route('/', dashboardRoutes)
  .route('/', openApiRoutes)
  .route('/', prometheusRoutes)
  .route('/v1/queues', publishingRoutes)
  .route('/v1/queues', callbackRoutes)
  .route('/v1/queues', jobRoutes)
  .route('/v1/queues', groupRoutes)
  .route('/v1/queues', repeatRoutes)
  .route('/v1/queues', metricsRoutes)
  .route('/v1/queues', queueRoutes);

app.onError(onError);
app.notFound(noRouteFor(app));
