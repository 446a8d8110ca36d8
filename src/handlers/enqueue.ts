// The enqueue routes, the only ones open to publish tokens and to browsers (CORS limited to the
// queue's allowedOrigins). Each enqueue also leases ready jobs in the same script call, handed to
// a drain that runs after the response (leasing). A publish token's jobs pass its
// queue's publish policy and rate limits (src/core/engine/publish-policy.ts, publish-rate.lua), and its answers
// say nothing of jobs it did not make: a duplicate carries no state. Its answer gives each new job
// an `eventsUrl` (capabilities.ts) unless the queue's publishEvents is "none".
import type { Context } from 'hono';
import { cors } from 'hono/cors';
import { createMiddleware } from 'hono/factory';
import type { EnqueueResult } from '../protocol/api/types';
import type { StoredConfig } from '../protocol/config';
import { QueueError } from '../protocol/errors';
import { TRACEPARENT, TRACESTATE, type TraceContext, parseTraceContext } from '../protocol/trace-context';
import * as producer from '../core/engine/producer';
import type { Publisher } from '../core/engine/producer';
import { getStoredConfig } from '../core/engine/queues';
import { CAPABILITY_TTL_MS } from '../core/events/capability';
import { EVENTS_RETENTION_MS } from '../protocol/constants';
import { pushTarget } from '../core/store/leased';
import { checkPublisher } from './middleware/auth';
import { publishClient } from '../protocol/publish-client';
import { readJsonWithText } from './middleware/body';
import { rawBatchData, rawJobData } from '../protocol/raw-json';
import { eventsUrlOf } from './capabilities';
import type { AppEnv } from './scope';

/**
 * The queue's stored config, null for a missing queue. Served from the isolate's config cache
 * (src/core/store/config-cache.ts), so CORS, auth and the publish policy share one read.
 */
async function queueConfig(c: Context<AppEnv>): Promise<StoredConfig | null> {
  const queue = c.req.param('queue')!;
  const { ctx, configs } = c.var;
  try {
    return await configs.get(queue, () => getStoredConfig(ctx, queue));
  } catch (error) {
    if (error instanceof QueueError && (error.code === 'QUEUE_NOT_FOUND' || error.code === 'VALIDATION_FAILED')) return null;
    throw error;
  }
}

/** Hono's CORS, for an origin the queue allows: a POST with a bearer token and a JSON body. */
const allowedCors = cors({
  origin: (origin) => origin,
  allowMethods: ['POST', 'OPTIONS'],
  allowHeaders: ['authorization', 'content-type', 'idempotency-key', TRACEPARENT, TRACESTATE],
  // Read by a page only if listed: the answer's request id (docs/logs.md).
  exposeHeaders: ['x-request-id'],
  maxAge: 600,
});

/**
 * CORS of the enqueue routes, before auth and the body, so that error answers carry it too. An
 * Origin in the queue's allowedOrigins gets Hono's CORS; any other gets no access-control-*
 * header at all (Hono's cors would still answer a preflight with allow-headers and max-age),
 * and its preflight a bare 204.
 */
export const enqueueCors = createMiddleware<AppEnv>(async function enqueueCors(c, next) {
  const origin = c.req.header('origin');
  if (origin !== undefined && (await queueConfig(c))?.allowedOrigins.includes(origin)) return allowedCors(c, next);
  if (c.req.method === 'OPTIONS') return c.body(null, 204);
  await next();
});

/** The client whose publish windows a publish token's enqueue spends (publish-client.ts). */
function clientOf(c: Context<AppEnv>, config: StoredConfig, tokenHash: string): string {
  return publishClient({
    address: c.req.header('cf-connecting-ip'),
    hasCf: c.req.raw.cf !== undefined,
    local: c.var.settings.allowHttpLoopback,
    ipv6Prefix: config.publishIpv6Prefix,
    tokenHash,
  });
}

/**
 * Auth (the admin token or a publish token of this queue), then the body; CORS ran before.
 * `trace`: the W3C trace context headers, kept with every job of the call (docs/tracing.md); a
 * header that is not valid is ignored, as the spec says, and never refuses the jobs.
 */
async function admit(
  c: Context<AppEnv>,
): Promise<{ queue: string; text: string; value: unknown; publisher: Publisher | undefined; trace: TraceContext }> {
  const queue = c.req.param('queue')!;
  const producer = await checkPublisher(c, () => queueConfig(c));
  const publisher =
    producer.kind === 'publish'
      ? { config: producer.config, client: clientOf(c, producer.config, producer.tokenHash), tokenHash: producer.tokenHash }
      : undefined;
  const trace = parseTraceContext((name) => c.req.header(name));
  return { queue, publisher, trace, ...(await readJsonWithText(c)) };
}

/**
 * The single enqueue's job with its `Idempotency-Key` header as its id (Stripe's header, and the
 * IETF draft's, whose value is a quoted string: both forms are taken). The key is checked as any
 * id is; a body that names another id is refused rather than have one of them win.
 */
function withIdempotencyKey(job: unknown, header: string | undefined): unknown {
  if (header === undefined || typeof job !== 'object' || job === null || Array.isArray(job)) return job;
  const key = /^"(.*)"$/.exec(header)?.[1] ?? header;
  const { id } = job as { id?: unknown };
  if (id !== undefined && id !== key) {
    throw new QueueError('VALIDATION_FAILED', 'id: the body names another id than the Idempotency-Key header', [
      { path: 'id', message: 'differs from the Idempotency-Key header' },
    ]);
  }
  return { ...job, id: key };
}

/**
 * A publish token learns nothing of a job it may not have made: a duplicate answers its id only,
 * and no events URL (a `pub:` id is shared by every holder of the token, and the backend may name
 * one: naming an id proves nothing). A job it made gets one that sees what the queue's
 * publishEvents says, for CAPABILITY_TTL_MS.
 */
async function answerOf(c: Context<AppEnv>, queue: string, result: EnqueueResult, publisher: Publisher | undefined) {
  if (!publisher) return result;
  if (result.duplicate) return { id: result.id, duplicate: true };
  const see = publisher.config.publishEvents;
  if (see === 'none') return result;
  return { ...result, eventsUrl: await eventsUrlOf(c, queue, result.id, see, Date.now() + CAPABILITY_TTL_MS) };
}

/** Adds the jobs; what they lease in the same script call is delivered after the response. */
async function enqueueWith(c: Context<AppEnv>, add: typeof producer.enqueue, input: producer.EnqueueInput): Promise<EnqueueResult[]> {
  const { ctx, followUps } = c.var;
  const { results } = await followUps.leasing(
    (reserve) => add(ctx, { ...input, reserve }),
    ({ leased, config, parts }) =>
      parts.map(({ tag, more }) => ({ tag, jobs: leased.filter((job) => job.tag === tag), target: pushTarget(config), more })),
    // A delayed job is a timer this isolate has not seen: tick soon to learn when.
    ({ results }) => (results.some((r) => r.state === 'delayed') ? followUps.now() : null),
  );
  return results;
}

/**
 * Until when the jobs' events are wanted: an enqueue that answers eventsUrls wants them from its
 * own script call on, before the page opens the stream (which then keeps them wanted).
 */
const wantEventsUntil = (publisher: Publisher | undefined) =>
  publisher && publisher.config.publishEvents !== 'none' ? Date.now() + EVENTS_RETENTION_MS : 0;

export async function enqueue(c: Context<AppEnv>) {
  const { queue, text, value, publisher, trace } = await admit(c);
  const body = withIdempotencyKey(value, c.req.header('idempotency-key'));
  const input = { queue, body, rawData: [rawJobData(text)], publisher, trace, wantEventsUntil: wantEventsUntil(publisher) };
  const [result] = await enqueueWith(c, producer.enqueue, input);
  return c.json(await answerOf(c, queue, result!, publisher), result!.duplicate || result!.debounced ? 200 : 201);
}

export async function enqueueBatch(c: Context<AppEnv>) {
  const { queue, text, value, publisher, trace } = await admit(c);
  const input = { queue, body: value, rawData: rawBatchData(text), publisher, trace, wantEventsUntil: wantEventsUntil(publisher) };
  const results = await enqueueWith(c, producer.enqueueBatch, input);
  return c.json({ jobs: await Promise.all(results.map((result) => answerOf(c, queue, result, publisher))) }, 201);
}
