// Bulk actions on a queue's finished jobs: retry every failed job, delete every job of a finished
// state. Each script call handles at most BULK_STEP jobs, so none runs long whatever the backlog;
// the caller repeats steps while its budget allows and reports an exact count, and `done: false`
// when jobs of that state remain (call again). A retry's steps answer the `added` of each job
// they retried while the queue's meta says someone may listen (`events`, src/core/store/events.ts).
import { scripts } from '../../lua/scripts.generated';
import { checkQueueName, parse } from '../../protocol/parse';
import type { BulkResult } from '../../protocol/api/types';
import type { Body, EngineContext, Query, QueueRef } from '../store/context';
import { randomSeed } from '../../protocol/ids';
import { cleanJobsSchema, retryJobsSchema } from '../../protocol/job-input';
import { partitionTags } from '../store/partitions';
import { routed } from './partitions';
import { callScript } from '../store/scripts';
import { type ScriptEvent, joinEvents, toScriptEvents } from '../store/events';

/** Jobs per script call. */
export const BULK_STEP = 200;

/** Asked between steps: false stops the action, which then answers `done: false`. */
export type KeepGoing = () => boolean;
/** A bulk action's budget: it stops between steps once `keepGoing` says no. @default no end */
export interface Budget {
  keepGoing?: KeepGoing;
}

/** A bulk action's result, with the job events its steps caused (when wanted). */
export type BulkDone = BulkResult & { events?: ScriptEvent[] };

/** The result of `count` jobs done, with the events of each step (undefined where it had none). */
function bulkDone(count: number, done: boolean, lists: readonly (ScriptEvent[] | undefined)[]): BulkDone {
  const events = joinEvents(lists);
  return { count, done, ...(events && { events }) };
}

/** Runs `step` (jobs done, jobs of the state left, events) until none are left or `keepGoing` says stop. */
async function inSteps(step: () => Promise<[done: number, left: number, events?: ScriptEvent[]]>, keepGoing: KeepGoing): Promise<BulkDone> {
  let count = 0;
  const lists: (ScriptEvent[] | undefined)[] = [];
  for (;;) {
    const [done, left, events] = await step();
    count += done;
    lists.push(events);
    if (left === 0) return bulkDone(count, true, lists);
    if (!keepGoing()) return bulkDone(count, false, lists);
  }
}

/**
 * Sends every failed job back to waiting, attempts reset, each at its own place in its group.
 * A step reads the oldest failed ids with their groups, then retries them with those group keys
 * declared (retry-jobs leaves a job whose group changed meanwhile for the next read).
 */
/** `action` on each partition of `queue` in turn, while `keepGoing` says so: one count. */
async function eachPartition(ctx: EngineContext, queue: string, keepGoing: KeepGoing, action: (tag: string) => Promise<BulkDone>): Promise<BulkDone> {
  checkQueueName(queue);
  return routed(ctx, queue, async (partitions) => {
    const tags = partitionTags(queue, partitions);
    let count = 0;
    const lists: (ScriptEvent[] | undefined)[] = [];
    for (const [i, tag] of tags.entries()) {
      const step = await action(tag);
      count += step.count;
      lists.push(step.events);
      if (!step.done || (i < tags.length - 1 && !keepGoing())) return bulkDone(count, false, lists);
    }
    return bulkDone(count, true, lists);
  });
}

export async function retryJobs(ctx: EngineContext, { queue, body: input, keepGoing = () => true }: QueueRef & Body & Budget): Promise<BulkDone> {
  const { state } = parse(retryJobsSchema, input);
  return eachPartition(ctx, queue, keepGoing, (tag) =>
    inSteps(async () => {
      const page = await callScript(ctx, scripts.finishedPage, { queue: tag }, [state, BULK_STEP]);
      if (page.length === 0) return [0, 0];
      const groups = page.filter((_, i) => i % 2 === 1);
      const { retried, left, events } = await callScript(ctx, scripts.retryJobs, { queue: tag, groups }, [ctx.now(), randomSeed(), ...page]);
      return [retried, left, events && toScriptEvents(tag, events)];
    }, keepGoing),
  );
}

/** Deletes every job of a finished state, oldest first. */
export async function cleanJobs(ctx: EngineContext, { queue, query, keepGoing = () => true }: QueueRef & Query & Budget): Promise<BulkResult> {
  const { state } = parse(cleanJobsSchema, query);
  return eachPartition(ctx, queue, keepGoing, (tag) =>
    inSteps(async () => {
      const { deleted, left } = await callScript(ctx, scripts.cleanJobs, { queue: tag }, [state, BULK_STEP]);
      return [deleted, left];
    }, keepGoing),
  );
}
