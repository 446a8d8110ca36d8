// Lease callbacks, authorized by the lease token in the body alone: heartbeat, complete, fail,
// progress. A wrong or stale lease is 409 LEASE_LOST and changes nothing. complete and fail
// lease the next ready jobs in the same script call, and a drain delivers them after the response.
import { type Context, Hono } from 'hono';
import {
  MAX_RESULT_BYTES,
  completeInputSchema,
  failInputSchema,
  heartbeatInputSchema,
  progressInputSchema,
} from '../core/callback-input';
import { parse } from '../core/context';
import { QueueError } from '../core/errors';
import type { LeasedJob } from '../core/leases';
import { readJson } from './body';
import { type AppEnv, continueInBackground, scopeOf } from './scope';

function target(c: Context<AppEnv>) {
  return { queue: c.req.param('queue')!, id: c.req.param('id')! };
}

/** Ends a lease through `end`, then drains what it leased next. */
async function endLease(
  c: Context<AppEnv>,
  end: (reserveNext: number) => Promise<{ state: string; next: LeasedJob[]; endpoint: string }>,
) {
  const { invocation } = scopeOf(c).dispatcher;
  const reserveNext = invocation.claim();
  let ended: Awaited<ReturnType<typeof end>> | undefined;
  try {
    ended = await end(reserveNext);
  } finally {
    invocation.release(reserveNext - (ended?.next.length ?? 0));
  }
  const { state, next, endpoint } = ended;
  continueInBackground(c, target(c).queue, { jobs: next, endpoint, more: reserveNext > 0 && next.length === reserveNext });
  return c.json({ state });
}

export const callbackRoutes = new Hono<AppEnv>()
  .post('/:queue/jobs/:id/heartbeat', async (c) => {
    const { queue, id } = target(c);
    const input = parse(heartbeatInputSchema, await readJson(c));
    return c.json(await scopeOf(c).engine.heartbeat(queue, { id, ...input }));
  })
  .post('/:queue/jobs/:id/progress', async (c) => {
    const { queue, id } = target(c);
    const input = parse(progressInputSchema, await readJson(c));
    return c.json(await scopeOf(c).engine.progress(queue, { id, ...input }));
  })
  .post('/:queue/jobs/:id/complete', async (c) => {
    const { queue, id } = target(c);
    const input = parse(completeInputSchema, await readJson(c));
    if (input.result !== undefined && new TextEncoder().encode(JSON.stringify(input.result)).byteLength > MAX_RESULT_BYTES) {
      throw new QueueError('PAYLOAD_TOO_LARGE', `results are at most ${MAX_RESULT_BYTES} bytes of JSON`, { maxResultBytes: MAX_RESULT_BYTES });
    }
    return endLease(c, (reserveNext) => scopeOf(c).engine.complete(queue, { id, ...input }, reserveNext));
  })
  .post('/:queue/jobs/:id/fail', async (c) => {
    const { queue, id } = target(c);
    const input = parse(failInputSchema, await readJson(c));
    return endLease(c, async (reserveNext) => {
      const ended = await scopeOf(c).engine.fail(queue, { id, ...input }, reserveNext);
      // A retry holds the group until a time the tick knows: learn it soon.
      if (ended.state === 'waiting') scopeOf(c).due.lower(queue, Date.now());
      return ended;
    });
  });
