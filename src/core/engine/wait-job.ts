// GET /v1/queues/{queue}/jobs/{id}?waitMs=N: the job as soon as it has finished, or after N ms as
// it is then. While a request waits it looks at the job's record with one plain command, an HGET
// (whose state field says whether the job finished): at 0, 100, 200, 400 and 800 ms, so that a
// short job is answered within 100-200 ms of its end, then once a second. That is 5 commands in
// the first second and 1 a second after. The job is read in full once, when the wait ends. A job
// gone from the hash (removed, or completed with keepCompleted 0) ends the wait too, and that
// read answers JOB_NOT_FOUND. Redis failing meanwhile is 503 REDIS_UNAVAILABLE with a
// Retry-After, as for any other read, so that clients retry.
import * as z from 'zod';
import { checkQueueName, parse, parseParam } from '../../protocol/parse';
import { MAX_WAIT_MS, isFinished } from '../../protocol/constants';
import type { EngineContext, JobRef, Query } from '../store/context';
import { QueueError } from '../../protocol/errors';
import { jobIdSchema } from '../../protocol/job-input';
import { sleep } from '../../protocol/sleep';
import type { Job } from '../../protocol/api/types';
import { recordOf } from '../store/job-records';
import { queueKeys } from '../store/keys';
import { getJobAt } from './reads';
import { onJob } from './partitions';
import { asQueueError } from '../store/redis';

/** How long a waiting request sleeps between looks at the job's record: fast at first, then this. */
export const WAIT_POLL_MS = 1_000;
const FIRST_POLLS_MS = [100, 100, 200, 400];
/** No look this close to the deadline: the full read follows it at once. */
const LAST_LOOK_MS = 10;

export const getJobQuerySchema = z
  .object({
    waitMs: z
      .string()
      .regex(/^\d+$/, `waitMs is a whole number of milliseconds, 0-${MAX_WAIT_MS}`)
      .transform(Number)
      .pipe(z.number().max(MAX_WAIT_MS, `waitMs is at most ${MAX_WAIT_MS}`))
      .optional(),
  })
  .strict();

/** One HGET: whether the job has finished, or left the hash. */
async function hasEnded(ctx: EngineContext, queue: string, id: string): Promise<boolean> {
  let raw: string | null;
  try {
    raw = await ctx.redis.hget<string>(queueKeys(queue).jobs, id);
  } catch (error) {
    // A plain command, not a script: callScript's mapping of Redis errors is not on its way.
    throw asQueueError(error);
  }
  return raw === null || isFinished(recordOf(raw).st ?? '');
}

/** Redis unavailable while a client waited: it may ask again in a moment. */
function retryable(error: unknown): never {
  if (error instanceof QueueError && error.code === 'REDIS_UNAVAILABLE') error.retryAfterMs ??= WAIT_POLL_MS;
  throw error;
}

/** The job; with `?waitMs=N`, once it has finished or N ms have passed (real time, not ctx.now). */
export async function waitForJob(ctx: EngineContext, { queue, id, query = {} }: JobRef & Query): Promise<Job> {
  checkQueueName(queue);
  parseParam(jobIdSchema, id, 'id');
  const { waitMs = 0 } = parse(getJobQuerySchema, query);
  // In the partition that holds the job (partitions.ts onJob): its first read says which.
  return onJob(ctx, queue, id, (tag) => waitAt(ctx, tag, id, waitMs), (tag) => getJobAt(ctx, tag, id));
}

async function waitAt(ctx: EngineContext, queue: string, id: string, waitMs: number): Promise<Job> {
  const deadline = Date.now() + waitMs;
  try {
    // A look due at the deadline is the full read's: a timer may wake a millisecond early by
    // Date.now(), and an HGET then would tell nothing the read after it does not.
    for (let look = 0; deadline - Date.now() > LAST_LOOK_MS && !(await hasEnded(ctx, queue, id)); look++) {
      await sleep(Math.min(FIRST_POLLS_MS[look] ?? WAIT_POLL_MS, deadline - Date.now()));
    }
    return await getJobAt(ctx, queue, id);
  } catch (error) {
    return retryable(error);
  }
}
