// The enqueue routes, the only ones open to publish tokens and to browsers (CORS limited to the
// queue's allowedOrigins). Each enqueue also leases ready jobs in the same script call; the
// service hands them to a drain that runs after the response. A publish token's jobs pass its
// queue's publish policy and rate limit (src/core/engine/publish-policy.ts, quota.lua), and its answers
// say nothing of jobs it did not make: a duplicate carries no state.
import { type Context, Hono } from 'hono';
import type { EnqueueResult } from '../protocol/api-types';
import type { StoredConfig } from '../protocol/config';
import { QueueError } from '../protocol/errors';
import { parseV6 } from '../protocol/private-address';
import type { Publisher } from '../core/engine/producer';
import { type Producer, checkPublisher } from './auth';
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

/** An address as Cloudflare gives it (IPv4 or IPv6); anything else is not one. */
const ADDRESS = /^[0-9A-Fa-f:.]{2,45}$/;

/**
 * Whose publishRateLimit a publish token's enqueue spends: the client's address
 * (CF-Connecting-IP, set by Cloudflare; workerd sets it in local development too), else, for a
 * request that carries none, the token. An IPv6 client is its /64: a home or a host is given a
 * whole /64, and would otherwise get a fresh window from each of its 2^64 addresses.
 */
function clientOf(c: Context<AppEnv>, tokenHash: string): string {
  const address = c.req.header('cf-connecting-ip');
  if (address === undefined || !ADDRESS.test(address)) return `token:${tokenHash}`;
  const v6 = address.includes(':') ? parseV6(address) : null;
  if (v6 === null) return `ip:${address}`;
  return `ip6:${v6.slice(0, 4).map((group) => group.toString(16)).join(':')}::/64`;
}

/** CORS, then auth (the admin token or a publish token of this queue), then the body. */
async function admit(
  c: Context<AppEnv>,
): Promise<{ queue: string; text: string; value: unknown; publisher: Publisher | undefined }> {
  const queue = c.req.param('queue')!;
  const config = configReader(c, queue);
  await allowOrigin(c, config);
  const producer: Producer = await checkPublisher(c, config);
  // A publish token matched the config it was checked against: that config says what it may send.
  const publisher = producer.kind === 'publish' ? { config: (await config())!, client: clientOf(c, producer.tokenHash) } : undefined;
  return { queue, publisher, ...(await readJsonWithText(c)) };
}

/** A publish token learns nothing of a job it may not have made: a duplicate answers its id only. */
function answerOf(result: EnqueueResult, publisher: Publisher | undefined) {
  return publisher && result.duplicate ? { id: result.id, duplicate: true } : result;
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
    const { queue, text, value, publisher } = await admit(c);
    const results = await scopeOf(c).service.enqueueBatch(queue, value, rawBatchData(text), publisher);
    return c.json({ jobs: results.map((result) => answerOf(result, publisher)) }, 201);
  })
  .post('/:queue/jobs', async (c) => {
    const { queue, text, value, publisher } = await admit(c);
    const result = await scopeOf(c).service.enqueue(queue, value, rawJobData(text), publisher);
    return c.json(answerOf(result, publisher), result.duplicate || result.debounced ? 200 : 201);
  });
