// The enqueue routes, the only ones open to publish tokens and to browsers (CORS limited to the
// queue's allowedOrigins). Each enqueue also leases ready jobs in the same script call; the
// service hands them to a drain that runs after the response.
import { type Context, Hono } from 'hono';
import type { StoredConfig } from '../core/config';
import { QueueError } from '../core/errors';
import { checkPublisher } from './auth';
import { readJsonWithText } from './body';
import { rawBatchData, rawJobData } from './raw-json';
import { type AppEnv, scopeOf } from './scope';

/** The queue's stored config, read at most once per request; null for a missing queue. */
function configReader(c: Context<AppEnv>, queue: string): () => Promise<StoredConfig | null> {
  let read: Promise<StoredConfig | null> | undefined;
  return () =>
    (read ??= scopeOf(c)
      .service.getStoredConfig(queue)
      .catch((error: unknown) => {
        if (error instanceof QueueError && (error.code === 'QUEUE_NOT_FOUND' || error.code === 'VALIDATION_FAILED')) return null;
        throw error;
      }));
}

/** CORS headers for an allowed Origin; other origins get none. */
async function allowOrigin(c: Context<AppEnv>, config: () => Promise<StoredConfig | null>): Promise<boolean> {
  const origin = c.req.header('origin');
  if (origin === undefined || !(await config())?.allowedOrigins.includes(origin)) return false;
  c.header('access-control-allow-origin', origin);
  c.header('vary', 'Origin', { append: true });
  return true;
}

/** CORS, then auth (the admin token or a publish token of this queue), then the body. */
async function admit(c: Context<AppEnv>): Promise<{ queue: string; text: string; value: unknown }> {
  const queue = c.req.param('queue')!;
  const config = configReader(c, queue);
  await allowOrigin(c, config);
  await checkPublisher(c, config);
  return { queue, ...(await readJsonWithText(c)) };
}

async function preflight(c: Context<AppEnv>) {
  if (await allowOrigin(c, configReader(c, c.req.param('queue')!))) {
    c.header('access-control-allow-methods', 'POST, OPTIONS');
    c.header('access-control-allow-headers', 'authorization, content-type');
    c.header('access-control-max-age', '600');
  }
  return c.body(null, 204);
}

export const publishingRoutes = new Hono<AppEnv>()
  .options('/:queue/jobs', preflight)
  .options('/:queue/jobs/batch', preflight)
  .post('/:queue/jobs/batch', async (c) => {
    const { queue, text, value } = await admit(c);
    return c.json({ jobs: await scopeOf(c).service.enqueueBatch(queue, value, rawBatchData(text)) }, 201);
  })
  .post('/:queue/jobs', async (c) => {
    const { queue, text, value } = await admit(c);
    const result = await scopeOf(c).service.enqueue(queue, value, rawJobData(text));
    return c.json(result, result.duplicate || result.debounced ? 200 : 201);
  });
