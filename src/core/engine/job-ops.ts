// Operations on one job by hand: remove, retry a failed one, promote a delayed one, update,
// cancel one that has not finished.
import { scripts } from '../../lua/scripts.generated';
import { type EngineContext, parse, parseParam } from '../store/context';
import { type QueueError } from '../../protocol/errors';
import { isRefusal, startTooLate } from '../store/refusals';
import { randomSeed } from '../../protocol/ids';
import { jobIdSchema, jobPatchSchema } from '../../protocol/job-input';
import type { Job } from '../../protocol/api-types';
import { toJob } from '../store/job-records';
import { toOutcomesToSend } from '../store/leased';
import { checkQueueName } from './queues';
import { callScript } from '../store/scripts';

/**
 * Runs a script on job `id` with its group's key declared: the group is read first (job-group),
 * and if the job was replaced meanwhile by one of another group, the call is made once more.
 */
async function onJob<T>(ctx: EngineContext, queue: string, id: string, run: (group: string) => Promise<T>): Promise<T> {
  checkQueueName(queue);
  parseParam(jobIdSchema, id, 'id');
  const readGroup = async () => (await callScript(ctx, scripts.jobGroup, { queue }, [id])).group;
  try {
    return await run(await readGroup());
  } catch (error) {
    if (!isRefusal(error, 'JOB_CHANGED_GROUP')) throw error;
    return run(await readGroup());
  }
}

/** Deletes a job that is not active (active: INVALID_STATE). */
export async function removeJob(ctx: EngineContext, queue: string, id: string): Promise<void> {
  await onJob(ctx, queue, id, (group) => callScript(ctx, scripts.removeJob, { queue, group }, [id, group, ctx.now()]));
}

/** failed -> waiting, attempts reset. */
export async function retryJob(ctx: EngineContext, queue: string, id: string): Promise<Job> {
  const view = await onJob(ctx, queue, id, (group) => callScript(ctx, scripts.retryJob, { queue, group }, [id, randomSeed(), group, ctx.now()]));
  return toJob(queue, view);
}

/** delayed -> waiting now. */
export async function promoteJob(ctx: EngineContext, queue: string, id: string): Promise<Job> {
  const view = await onJob(ctx, queue, id, (group) => callScript(ctx, scripts.promoteJob, { queue, group }, [id, group, ctx.now()]));
  return toJob(queue, view);
}

/**
 * Ends a waiting, delayed or active job as `cancelled` (finished: INVALID_STATE). An active
 * job's lease is revoked: its callbacks get JOB_CANCELLED, and its group's next job is ready.
 */
export async function cancelJob(ctx: EngineContext, queue: string, id: string) {
  const recorded = await onJob(ctx, queue, id, (group) => callScript(ctx, scripts.cancelJob, { queue, group }, [id, group, ctx.now()]));
  // The outcome callback the cancel recorded, leased to the caller to send (docs/delivery.md#outcome-callbacks).
  return { id, state: 'cancelled' as const, outcomes: toOutcomesToSend(queue, recorded) };
}

/** Changes a waiting or delayed job's data and/or delay (delayMs counts from now). */
export async function updateJob(ctx: EngineContext, queue: string, id: string, patch: unknown): Promise<Job> {
  const { data, delayMs } = parse(jobPatchSchema, patch);
  const view = await onJob(ctx, queue, id, (group) =>
    callScript(ctx, scripts.updateJob, { queue, group }, [ctx.now(), id, data === undefined ? '' : JSON.stringify(data), delayMs ?? -1, group]),
  ).catch((error: unknown) => {
    throw isRefusal(error, 'DELAY_TOO_LONG') ? startTooLate('delayMs', error as QueueError) : error;
  });
  return toJob(queue, view);
}
