// Operations on one job by hand: remove, retry a failed one, promote a delayed one, update,
// cancel one that has not finished.
import { scripts } from '../lua/scripts.generated';
import { type EngineContext, parse } from './context';
import { noteDue } from './due-index';
import { isRefusal } from './errors';
import { randomSeed } from './ids';
import { jobIdSchema, jobPatchSchema } from './job-input';
import { type Job, toJob } from './job-view';
import { checkQueueName } from './queues';
import { type Reply, callScript } from './scripts';

/**
 * Runs a script on job `id` with its group's key declared: the group is read first (job-group),
 * and if the job was replaced meanwhile by one of another group, the call is made once more.
 */
async function onJob(ctx: EngineContext, queue: string, id: string, run: (group: string) => Promise<Reply>): Promise<Reply> {
  checkQueueName(queue);
  parse(jobIdSchema, id);
  let [, group] = await callScript(ctx, scripts.jobGroup, { queue }, [id]);
  try {
    return await run(group as string);
  } catch (error) {
    if (!isRefusal(error, 'JOB_CHANGED_GROUP')) throw error;
    [, group] = await callScript(ctx, scripts.jobGroup, { queue }, [id]);
    return run(group as string);
  }
}

/** Deletes a job that is not active (active: INVALID_STATE). */
export async function removeJob(ctx: EngineContext, queue: string, id: string): Promise<void> {
  const reply = await onJob(ctx, queue, id, (group) => callScript(ctx, scripts.removeJob, { queue, group }, [id, group, ctx.now()]));
  await noteDue(ctx, queue, reply[1]);
}

/** failed -> waiting, attempts reset. */
export async function retryJob(ctx: EngineContext, queue: string, id: string): Promise<Job> {
  const reply = await onJob(ctx, queue, id, (group) => callScript(ctx, scripts.retryJob, { queue, group }, [id, randomSeed(), group, ctx.now()]));
  await noteDue(ctx, queue, reply[2]);
  return toJob(queue, reply[1] as unknown[]);
}

/** delayed -> waiting now. */
export async function promoteJob(ctx: EngineContext, queue: string, id: string): Promise<Job> {
  const reply = await onJob(ctx, queue, id, (group) => callScript(ctx, scripts.promoteJob, { queue, group }, [id, group, ctx.now()]));
  await noteDue(ctx, queue, reply[2]);
  return toJob(queue, reply[1] as unknown[]);
}

/**
 * Ends a waiting, delayed or active job as `cancelled` (finished: INVALID_STATE). An active
 * job's lease is revoked: its callbacks get JOB_CANCELLED, and its group's next job is ready.
 */
export async function cancelJob(ctx: EngineContext, queue: string, id: string): Promise<{ id: string; state: 'cancelled' }> {
  const reply = await onJob(ctx, queue, id, (group) => callScript(ctx, scripts.cancelJob, { queue, group }, [id, group, ctx.now()]));
  await noteDue(ctx, queue, reply[1]);
  return { id, state: 'cancelled' };
}

/** Changes a waiting or delayed job's data and/or delay (delayMs counts from now). */
export async function updateJob(ctx: EngineContext, queue: string, id: string, patch: unknown): Promise<Job> {
  const { data, delayMs } = parse(jobPatchSchema, patch);
  const reply = await onJob(ctx, queue, id, (group) =>
    callScript(ctx, scripts.updateJob, { queue, group }, [ctx.now(), id, data === undefined ? '' : JSON.stringify(data), delayMs ?? -1, group]),
  );
  await noteDue(ctx, queue, reply[2]);
  return toJob(queue, reply[1] as unknown[]);
}
