// Lease callbacks, authorized by the lease token in the body alone: heartbeat, complete, fail,
// progress. A wrong or stale lease is 409 LEASE_LOST and changes nothing. complete and fail
// lease the next ready jobs in the same script call; the service delivers them after the response.
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
import { readJson } from './body';
import { type AppEnv, scopeOf } from './scope';

function target(c: Context<AppEnv>) {
  return { queue: c.req.param('queue')!, id: c.req.param('id')! };
}

export const callbackRoutes = new Hono<AppEnv>()
  .post('/:queue/jobs/:id/heartbeat', async (c) => {
    const { queue, id } = target(c);
    const input = parse(heartbeatInputSchema, await readJson(c));
    return c.json(await scopeOf(c).service.heartbeat(queue, { id, ...input }));
  })
  .post('/:queue/jobs/:id/progress', async (c) => {
    const { queue, id } = target(c);
    const input = parse(progressInputSchema, await readJson(c));
    return c.json(await scopeOf(c).service.progress(queue, { id, ...input }));
  })
  .post('/:queue/jobs/:id/complete', async (c) => {
    const { queue, id } = target(c);
    const input = parse(completeInputSchema, await readJson(c));
    if (input.result !== undefined && new TextEncoder().encode(JSON.stringify(input.result)).byteLength > MAX_RESULT_BYTES) {
      throw new QueueError('PAYLOAD_TOO_LARGE', `results are at most ${MAX_RESULT_BYTES} bytes of JSON`, { maxResultBytes: MAX_RESULT_BYTES });
    }
    return c.json(await scopeOf(c).service.complete(queue, { id, ...input }));
  })
  .post('/:queue/jobs/:id/fail', async (c) => {
    const { queue, id } = target(c);
    const input = parse(failInputSchema, await readJson(c));
    return c.json(await scopeOf(c).service.fail(queue, { id, ...input }));
  });
