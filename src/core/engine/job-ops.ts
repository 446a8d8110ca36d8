// Operations on one job by hand: remove, retry a failed one, promote a delayed one, update,
// cancel one that has not finished. Each change answers the job events it caused while its
// queue's meta says someone may listen (`events`, src/core/store/events.ts); none otherwise.
import { scripts } from '../../lua/scripts.generated';
import { checkQueueName, parse, parseParam } from '../../protocol/parse';
import type { Body, EngineContext, JobRef } from '../store/context';
import { type QueueError } from '../../protocol/errors';
import { isRefusal, startTooLate } from '../store/refusals';
import { randomSeed } from '../../protocol/ids';
import { jobIdSchema, jobPatchSchema } from '../../protocol/job-input';
import type { Job } from '../../protocol/api/types';
import { toJob } from '../store/job-records';
import { toOutcomesToSend } from '../store/leased';
import { type EventList, type ScriptEvent, withEvents } from '../store/events';
import type { JobTuple } from '../store/replies';
import { onJob } from './partitions';
import { callScript } from '../store/scripts';

/**
 * Runs a script on job `id` with its group's key declared: the group is read first (job-group),
 * and if the job was replaced meanwhile by one of another group, the call is made once more.
 */
async function withGroup<T>(ctx: EngineContext, tag: string, id: string, run: (group: string) => Promise<T>): Promise<T> {
  const readGroup = async () => (await callScript(ctx, scripts.jobGroup, { queue: tag }, [id])).group;
  try {
    return await run(await readGroup());
  } catch (error) {
    if (!isRefusal(error, 'JOB_CHANGED_GROUP')) throw error;
    return run(await readGroup());
  }
}

/**
 * withGroup in the partition that holds job `id` (partitions.ts onJob); `run` gets the partition's
 * tag (the queue's name, unpartitioned) and the job's group.
 */
function onJobOf<T>(ctx: EngineContext, queue: string, id: string, run: (tag: string, group: string) => Promise<T>): Promise<T> {
  checkQueueName(queue);
  parseParam(jobIdSchema, id, 'id');
  const locate = (tag: string) => callScript(ctx, scripts.jobGroup, { queue: tag }, [id]);
  return onJob(ctx, queue, id, (tag) => withGroup(ctx, tag, id, (group) => run(tag, group)), locate);
}

/** Deletes a job that is not active (active: INVALID_STATE). */
export async function removeJob(ctx: EngineContext, { queue, id }: JobRef): Promise<void> {
  await onJobOf(ctx, queue, id, (tag, group) => callScript(ctx, scripts.removeJob, { queue: tag, group }, [id, group, ctx.now()]));
}

/** A job as a change by hand left it, with the events the change caused (when wanted). */
export type ChangedJob = Job & { events?: ScriptEvent[] };

/** A job's view and events, as rejoin-job and update-job answer them, for partition `tag`. */
const changed = (tag: string, { view, events }: { view: JobTuple; events?: EventList }): ChangedJob =>
  withEvents(toJob(tag, view), tag, events);

/** failed -> waiting, attempts reset. */
export async function retryJob(ctx: EngineContext, { queue, id }: JobRef): Promise<ChangedJob> {
  return onJobOf(ctx, queue, id, async (tag, group) =>
    changed(tag, await callScript(ctx, scripts.rejoinJob, { queue: tag, group }, [id, group, ctx.now(), 'failed', randomSeed()])),
  );
}

/** delayed -> waiting now. */
export async function promoteJob(ctx: EngineContext, { queue, id }: JobRef): Promise<ChangedJob> {
  return onJobOf(ctx, queue, id, async (tag, group) => changed(tag, await callScript(ctx, scripts.rejoinJob, { queue: tag, group }, [id, group, ctx.now(), 'delayed', ''])));
}

/**
 * Ends a waiting, delayed or active job as `cancelled` (finished: INVALID_STATE). An active
 * job's lease is revoked: its callbacks get JOB_CANCELLED, and its group's next job is ready.
 */
export async function cancelJob(ctx: EngineContext, { queue, id }: JobRef) {
  return onJobOf(ctx, queue, id, async (tag, group) => {
    const { recorded, events } = await callScript(ctx, scripts.cancelJob, { queue: tag, group }, [id, group, ctx.now()]);
    // The outcome callback the cancel recorded, leased to the caller to send (docs/delivery.md#outcome-callbacks).
    return withEvents({ id, state: 'cancelled' as const, outcomes: toOutcomesToSend(tag, recorded) }, tag, events);
  });
}

/** Changes a waiting or delayed job's data and/or delay (delayMs counts from now). */
export async function updateJob(ctx: EngineContext, { queue, id, body: patch }: JobRef & Body): Promise<ChangedJob> {
  const { data, delayMs } = parse(jobPatchSchema, patch);
  return onJobOf(ctx, queue, id, async (tag, group) =>
    changed(tag, await callScript(ctx, scripts.updateJob, { queue: tag, group }, [ctx.now(), id, data === undefined ? '' : JSON.stringify(data), delayMs ?? -1, group])),
  ).catch((error: unknown) => {
    throw isRefusal(error, 'DELAY_TOO_LONG') ? startTooLate('delayMs', error as QueueError) : error;
  });
}
