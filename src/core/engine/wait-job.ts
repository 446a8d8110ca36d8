// GET /v1/queues/{queue}/jobs/{id}?waitMs=N: the job as soon as it has finished, or after N ms as
// it is then. While a request waits it costs Redis one plain command a second, an HGET of the
// job's record (whose state field says whether the job finished); the job is read in full once,
// when the wait ends. A job gone from the hash (removed, or completed with keepCompleted 0) ends
// the wait too, and that read answers JOB_NOT_FOUND. Redis failing meanwhile is 503
// REDIS_UNAVAILABLE with a Retry-After, as for any other read, so that clients retry.
import * as z from 'zod';
import { MAX_WAIT_MS, isFinished } from '../../protocol/constants';
import { type EngineContext, parse, parseParam } from '../store/context';
import { QueueError } from '../../protocol/errors';
import { jobIdSchema } from '../../protocol/job-input';
import type { Job } from '../../protocol/api-types';
import { recordOf } from '../store/job-records';
import { queueKeys } from '../store/keys';
import { checkQueueName } from './queues';
import { getJobAt } from './reads';
import { onJob } from './partitions';
import { asQueueError } from '../store/redis';

/** One look at the job's record per this long, per waiting request. */
export const WAIT_POLL_MS = 1_000;

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

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

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
export async function waitForJob(ctx: EngineContext, queue: string, id: string, query: unknown = {}): Promise<Job> {
  checkQueueName(queue);
  parseParam(jobIdSchema, id, 'id');
  const { waitMs = 0 } = parse(getJobQuerySchema, query);
  // In the partition that holds the job (partitions.ts onJob): its first read says which.
  return onJob(ctx, queue, id, (tag) => waitAt(ctx, tag, id, waitMs), (tag) => getJobAt(ctx, tag, id));
}

async function waitAt(ctx: EngineContext, queue: string, id: string, waitMs: number): Promise<Job> {
  const deadline = Date.now() + waitMs;
  try {
    while (Date.now() < deadline && !(await hasEnded(ctx, queue, id))) {
      await sleep(Math.min(WAIT_POLL_MS, deadline - Date.now()));
    }
    return await getJobAt(ctx, queue, id);
  } catch (error) {
    return retryable(error);
  }
}
