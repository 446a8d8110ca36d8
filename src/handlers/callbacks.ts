// Lease callbacks, authorized by the lease token in the body alone: heartbeat, complete, fail,
// progress. A wrong or stale lease is 409 LEASE_LOST and changes nothing. complete and fail
// lease the next ready jobs in the same script call, delivered after the response (leasing).
// Anyone can call these routes, so what needs no Redis to refuse is refused before it: a body
// over CALLBACK_MAX_BODY_BYTES (413), and a lease token that no lease could have (409).
import type { Context } from 'hono';
import { checkQueueName, parse, parseParam } from '../protocol/parse';
import type * as z from 'zod';
import { completeInputSchema, failInputSchema, heartbeatInputSchema, progressInputSchema } from '../protocol/callback-input';
import { MAX_RESULT_BYTES } from '../protocol/constants';
import { QueueError } from '../protocol/errors';
import * as leases from '../core/engine/leases';
import { ScriptRefusal } from '../core/store/refusals';
import { deliveryCount } from '../core/store/leased';
import { jobIdSchema } from '../protocol/job-input';
import { readJson } from './middleware/body';
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

/** Ends a lease; the same call leases the next ready jobs (in its partition), delivered after the response. */
async function endLease(c: Context<AppEnv>, end: (reserve: number) => ReturnType<typeof leases.complete>) {
  const { followUps } = c.var;
  const { state } = await followUps.leasing(
    end,
    // As many leased as asked for: more may be ready.
    ({ next, target, outcomes, tag }, reserve) => [{ tag, jobs: next, target, outcomes, more: reserve > 0 && deliveryCount(next) === reserve }],
    // A retry holds the group until a time the tick knows: learn it soon.
    (ended) => (ended.state === 'waiting' ? followUps.now() : null),
  );
  return c.json({ state });
}

export async function heartbeat(c: Context<AppEnv>) {
  const at = target(c);
  const input = await readCallback(c, heartbeatInputSchema);
  return c.json(await leases.heartbeat(c.var.ctx, { ...at, ...input }));
}

export async function progress(c: Context<AppEnv>) {
  const at = target(c);
  const input = await readCallback(c, progressInputSchema);
  return c.json(await leases.progress(c.var.ctx, { ...at, ...input }));
}

export async function complete(c: Context<AppEnv>) {
  const at = target(c);
  const input = await readCallback(c, completeInputSchema);
  if (input.result !== undefined && new TextEncoder().encode(JSON.stringify(input.result)).byteLength > MAX_RESULT_BYTES) {
    throw new QueueError('PAYLOAD_TOO_LARGE', `results are at most ${MAX_RESULT_BYTES} bytes of JSON`, { maxResultBytes: MAX_RESULT_BYTES });
  }
  return endLease(c, (reserve) => leases.complete(c.var.ctx, { ...at, ...input, reserve }));
}

export async function fail(c: Context<AppEnv>) {
  const at = target(c);
  const input = await readCallback(c, failInputSchema);
  return endLease(c, (reserve) => leases.fail(c.var.ctx, { ...at, ...input, reserve }));
}
