// Operations on one job by hand: remove, retry a failed one, promote a delayed one, update.
import { scripts } from '../lua/scripts.generated';
import { type EngineContext, parse } from './context';
import { randomSeed } from './ids';
import { jobIdSchema, jobPatchSchema } from './job-input';
import { type Job, toJob } from './job-view';
import { queueKeys } from './keys';
import { checkQueueName } from './queues';
import { runScript } from './scripts';

function target(queue: string, id: string) {
  const k = queueKeys(checkQueueName(queue));
  parse(jobIdSchema, id);
  return k;
}

/** Deletes a job that is not active (active: INVALID_STATE). */
export async function removeJob(ctx: EngineContext, queue: string, id: string): Promise<void> {
  const k = target(queue, id);
  await runScript(ctx.redis, scripts.removeJob, [k.meta, k.jobs, k.ready, k.active, k.held, k.delayed, k.completed, k.failed], [id]);
}

/** failed -> waiting, attempts reset. */
export async function retryJob(ctx: EngineContext, queue: string, id: string): Promise<Job> {
  const k = target(queue, id);
  const reply = await runScript(ctx.redis, scripts.retryJob, [k.meta, k.jobs, k.ready, k.active, k.failed], [id, randomSeed()]);
  return toJob(queue, reply[1] as unknown[]);
}

/** delayed -> waiting now. */
export async function promoteJob(ctx: EngineContext, queue: string, id: string): Promise<Job> {
  const k = target(queue, id);
  const reply = await runScript(ctx.redis, scripts.promoteJob, [k.meta, k.jobs, k.ready, k.active, k.delayed], [id]);
  return toJob(queue, reply[1] as unknown[]);
}

/** Changes a waiting or delayed job's data and/or delay (delayMs counts from now). */
export async function updateJob(ctx: EngineContext, queue: string, id: string, patch: unknown): Promise<Job> {
  const k = target(queue, id);
  const { data, delayMs } = parse(jobPatchSchema, patch);
  const reply = await runScript(
    ctx.redis,
    scripts.updateJob,
    [k.meta, k.jobs, k.ready, k.active, k.held, k.delayed],
    [ctx.now(), id, data === undefined ? '' : JSON.stringify(data), delayMs ?? -1],
  );
  return toJob(queue, reply[1] as unknown[]);
}
