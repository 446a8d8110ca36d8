// The HTTP API (docs/http-api.md): every operation's row (operations.ts) mounted on one app, after
// the middleware every request passes, and the one error shape for whatever fails.
import { Hono } from 'hono';
import { noRouteFor } from './middleware/allowed-methods';
import { onError } from './middleware/errors';
import { requestLog } from './middleware/request-log';
import { mount } from './mount';
import { OPERATIONS } from './operations';
import { type AppEnv, openScope } from './scope';

export const app = new Hono<AppEnv>()
  // Every request's id (x-request-id) and log line, whatever answers it (docs/logs.md).
  .use('*', requestLog)
  // The request's scope (c.var.ctx, c.var.followUps) for the routes that read it; the home page,
  // the document and the dashboard's files need none.
  .use('/health', openScope)
  .use('/metrics', openScope)
  .use('/v1/*', openScope);

for (const row of OPERATIONS) mount(app, row);

app.onError(onError);
app.notFound(noRouteFor(app));
