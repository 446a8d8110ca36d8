// The enqueue routes, the only ones open to publish tokens and to browsers (CORS limited to the
// queue's allowedOrigins). Each enqueue also leases ready jobs in the same script call and hands
// them to a drain that runs after the response.
import { type Context, Hono } from 'hono';
import type { StoredConfig } from '../core/config';
import { QueueError } from '../core/errors';
import type { Enqueued } from '../core/producer';
import { checkPublisher } from './auth';
import { readJsonWithText } from './body';
import { rawBatchData, rawJobData } from './raw-json';
import { type AppEnv, continueInBackground, scopeOf } from './scope';

/** The queue's stored config, read at most once per request; null for a missing queue. */
function configReader(c: Context<AppEnv>, queue: string): () => Promise<StoredConfig | null> {
  let read: Promise<StoredConfig | null> | undefined;
  return () =>
    (read ??= scopeOf(c)
      .engine.getStoredConfig(queue)
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

async function enqueueRoute(c: Context<AppEnv>, enqueue: (body: { text: string; value: unknown }, reserve: number) => Promise<Enqueued>) {
  const queue = c.req.param('queue')!;
  const config = configReader(c, queue);
  await allowOrigin(c, config);
  await checkPublisher(c, config);
  const body = await readJsonWithText(c);
  const { dispatcher, due } = scopeOf(c);
  const { invocation } = dispatcher;
  const reserve = invocation.claim();
  let enqueued: Enqueued | undefined;
  try {
    enqueued = await enqueue(body, reserve);
  } finally {
    invocation.release(reserve - (enqueued?.leased.length ?? 0));
  }
  // A delayed job is a timer this isolate has not seen: tick soon to learn when.
  if (enqueued.results.some((r) => r.state === 'delayed')) due.lower(queue, Date.now());
  const leased = enqueued.leased;
  continueInBackground(c, queue, { jobs: leased, endpoint: enqueued.config.endpoint, more: reserve > 0 && leased.length === reserve });
  return enqueued.results;
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
    const results = await enqueueRoute(c, ({ text, value }, reserve) =>
      scopeOf(c).engine.enqueueBatchAndReserve(c.req.param('queue'), value, reserve, rawBatchData(text)),
    );
    return c.json({ jobs: results }, 201);
  })
  .post('/:queue/jobs', async (c) => {
    const [result] = await enqueueRoute(c, ({ text, value }, reserve) =>
      scopeOf(c).engine.enqueueAndReserve(c.req.param('queue'), value, reserve, rawJobData(text)),
    );
    return c.json(result!, result!.duplicate ? 200 : 201);
  });
