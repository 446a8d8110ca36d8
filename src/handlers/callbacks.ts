// Lease callbacks, authorized by the lease token in the body alone: heartbeat, complete, fail,
// progress. A wrong or stale lease is 409 LEASE_LOST and changes nothing. complete and fail
// lease the next ready jobs in the same script call; the service delivers them after the response.
// Anyone can call these routes, so what needs no Redis to refuse is refused before it: a body
// over CALLBACK_MAX_BODY_BYTES (413), and a lease token that no lease could have (409).
import { type Context, Hono } from 'hono';
import type * as z from 'zod';
import { completeInputSchema, failInputSchema, heartbeatInputSchema, progressInputSchema } from '../protocol/callback-input';
import { MAX_RESULT_BYTES } from '../protocol/constants';
import { parse, parseParam } from '../core/store/context';
import { QueueError } from '../protocol/errors';
import { ScriptRefusal } from '../core/store/refusals';
import { jobIdSchema } from '../protocol/job-input';
import { checkQueueName } from '../core/engine/queues';
import { readJson } from './body';
import type { AppEnv } from './scope';

/** The queue and job of the route, checked (400) before anything else. */
function target(c: Context<AppEnv>) {
  const queue = checkQueueName(c.req.param('queue')!);
  return { queue, id: parseParam(jobIdSchema, c.req.param('id')!, 'id') };
}

/** The largest callback body: a complete's result (MAX_RESULT_BYTES of JSON) and room for the rest. */
export const CALLBACK_MAX_BODY_BYTES = 80 * 1024;
/**
 * Every lease token groupq hands out: 16 hex digits (src/lua/includes/job.lua, tokenFor), led by
 * `<partition>.` in a partitioned queue (src/core/store/partitions.ts publicLease).
 */
const LEASE_TOKEN = /^(?:\d{1,3}\.)?[0-9a-f]{16}$/;

/** The callback's body, parsed with `schema`; a lease token of the wrong form is LEASE_LOST, unread. */
async function readCallback<S extends z.ZodType<{ lease: string }>>(c: Context<AppEnv>, schema: S): Promise<z.output<S>> {
  const input = parse(schema, await readJson(c, CALLBACK_MAX_BODY_BYTES));
  if (!LEASE_TOKEN.test(input.lease)) throw new ScriptRefusal('LEASE_LOST');
  return input;
}

export const callbackRoutes = new Hono<AppEnv>()
  .post('/:queue/jobs/:id/heartbeat', async (c) => {
    const { queue, id } = target(c);
    const input = await readCallback(c, heartbeatInputSchema);
    return c.json(await c.var.service.heartbeat(queue, { id, ...input }));
  })
  .post('/:queue/jobs/:id/progress', async (c) => {
    const { queue, id } = target(c);
    const input = await readCallback(c, progressInputSchema);
    return c.json(await c.var.service.progress(queue, { id, ...input }));
  })
  .post('/:queue/jobs/:id/complete', async (c) => {
    const { queue, id } = target(c);
    const input = await readCallback(c, completeInputSchema);
    if (input.result !== undefined && new TextEncoder().encode(JSON.stringify(input.result)).byteLength > MAX_RESULT_BYTES) {
      throw new QueueError('PAYLOAD_TOO_LARGE', `results are at most ${MAX_RESULT_BYTES} bytes of JSON`, { maxResultBytes: MAX_RESULT_BYTES });
    }
    return c.json(await c.var.service.complete(queue, { id, ...input }));
  })
  .post('/:queue/jobs/:id/fail', async (c) => {
    const { queue, id } = target(c);
    const input = await readCallback(c, failInputSchema);
    return c.json(await c.var.service.fail(queue, { id, ...input }));
  });
