// Routing a queue's operations to its partitions (src/core/store/partitions.ts has the layout).
// An isolate learns a queue's partition count for free: it assumes one, and a partitioned
// queue's root refuses what must run on a partition with the count (Partitioned), which is then
// kept (PartitionCounts, per isolate) and the call made again. So a queue of one partition, the
// default, pays nothing for partitions, and an isolate that believed a count of a queue deleted
// and created again with another is corrected the same way (a group checked against its
// partition, or a partition that is not there).
import { QueueError } from '../../protocol/errors';
import { randomId } from '../../protocol/ids';
import { isQueueName } from '../../protocol/job-input';
import { checkQueueName } from '../../protocol/parse';
import type { EngineContext } from '../store/context';
import { PartitionCounts, fnv1a32, partitionOf, partitionTag, partitionTags, queueOfTag } from '../store/partitions';
import { Partitioned, ScriptRefusal, isRefusal } from '../store/refusals';

const counts = (ctx: EngineContext) => ctx.partitions ?? (ctx.partitions = new PartitionCounts());

/** The partition count this isolate believes `queue` has. */
export function partitionsOf(ctx: EngineContext, queue: string): number {
  return counts(ctx).of(queue);
}

/** `queue` has `partitions`, as a config read or written just now says. */
export function learnPartitions(ctx: EngineContext, queue: string, partitions: number): void {
  counts(ctx).set(queue, partitions);
}

/**
 * Runs `run` with the partition count this isolate believes, and again with the right one when a
 * script refuses it (Partitioned), or when a partition believed in is not there (the queue was
 * deleted, maybe created again). Three tries at most: the count believed, the one learned, and
 * one more for a queue deleted and created again in between.
 */
export async function routed<T>(ctx: EngineContext, queue: string, run: (partitions: number) => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const believed = partitionsOf(ctx, queue);
    try {
      return await run(believed);
    } catch (error) {
      if (attempt === 3) throw error;
      if (error instanceof Partitioned && error.partitions !== believed) learnPartitions(ctx, queue, error.partitions);
      else if (believed > 1 && isRefusal(error, 'QUEUE_NOT_FOUND')) learnPartitions(ctx, queue, 1);
      else throw error instanceof Partitioned ? new QueueError('INTERNAL', error.message) : error;
    }
  }
}

/** `run` on every partition of `queue` at once, in partition order. */
export function onEachPartition<T>(ctx: EngineContext, queue: string, run: (tag: string, partitions: number) => Promise<T>): Promise<T[]> {
  return routed(ctx, queue, (partitions) => Promise.all(partitionTags(queue, partitions).map((tag) => run(tag, partitions))));
}

/** `run` on the partition that holds `group`. */
export function onGroup<T>(ctx: EngineContext, queue: string, group: string, run: (tag: string) => Promise<T>): Promise<T> {
  return routed(ctx, queue, (partitions) => run(partitionTag(queue, partitionOf(group, partitions), partitions)));
}

/** The partition tag of `group` as this isolate knows `queue` (after a call that learned it). */
export function tagOfGroup(ctx: EngineContext, queue: string, group: string): string {
  const partitions = partitionsOf(ctx, queue);
  return partitionTag(queue, partitionOf(group, partitions), partitions);
}

/** Every partition tag of `queue` as this isolate knows it. */
export function tagsOf(ctx: EngineContext, queue: string): string[] {
  return partitionTags(queue, partitionsOf(ctx, queue));
}

/**
 * A new job id for a job of `group`, after `prefix` (a publish token's `pub:`): in a partitioned
 * queue, one that hashes to the group's partition (fnv1a32(id) % partitions), so that finding
 * the job by id costs one call (findJob). A few tries on average: as many as there are partitions.
 */
export function newJobId(group: string, partitions: number, prefix = ''): string {
  if (partitions === 1) return prefix + randomId();
  const p = partitionOf(group, partitions);
  for (;;) {
    const id = prefix + randomId();
    if (fnv1a32(id) % partitions === p) return id;
  }
}

/**
 * `run` on the partition that holds job `id`. One call for an id groupq made (it hashes to its
 * partition, newJobId); a producer's id found elsewhere costs a read of every other partition
 * (`locate`, at once), then the call where it was found: ids are unique within a group, so the
 * lowest partition that holds it wins.
 */
export async function onJob<T>(
  ctx: EngineContext,
  queue: string,
  id: string,
  run: (tag: string) => Promise<T>,
  locate: (tag: string) => Promise<unknown>,
): Promise<T> {
  return routed(ctx, queue, async (partitions) => {
    if (partitions === 1) return run(queue);
    // A partition on a database that is down hides nothing it does not hold: its error is the
    // answer only when no other partition holds the job.
    let unreachable: unknown = null;
    const missing = (error: unknown): false => {
      if (error instanceof QueueError && error.code === 'REDIS_UNAVAILABLE') unreachable ??= error;
      else if (!isRefusal(error, 'JOB_NOT_FOUND')) throw error;
      return false;
    };
    const first = fnv1a32(id) % partitions;
    try {
      return await run(partitionTag(queue, first, partitions));
    } catch (error) {
      missing(error);
    }
    const others = partitionTags(queue, partitions).filter((_, p) => p !== first);
    const found = await Promise.all(others.map((tag) => locate(tag).then(() => true, missing)));
    const at = found.indexOf(true);
    if (at < 0) throw unreachable ?? new ScriptRefusal('JOB_NOT_FOUND');
    return run(others[at]!);
  });
}

/** A queue's name or one of its partitions' tags (`<queue>:<p>`): what the engine's modules run on. */
export function checkTag(tag: string): string {
  return isQueueName(tag) || isQueueName(queueOfTag(tag)) ? tag : checkQueueName(tag);
}
