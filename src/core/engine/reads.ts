// Reads for the API: one job, a page of jobs by state, groups and one group. A partitioned
// queue's listing walks its partitions in order (a group's jobs are all in its partition, so a
// listing of one group reads only that one); its cursors name the partition (cursors.ts).
import { scripts } from '../../lua/scripts.generated';
import { checkQueueName, parse, parseParam } from '../../protocol/parse';
import type { EngineContext, GroupRef, JobRef, Query, QueueRef } from '../store/context';
import { type Listing, decodeCursor, decodePartitionCursor, encodeCursor, encodePartitionCursor, isPartitionCursor } from '../store/cursors';
import { groupParamSchema, jobIdSchema, listJobsSchema, pageSchema } from '../../protocol/job-input';
import type { GroupSummary, Job } from '../../protocol/api/types';
import { toJob, toOutcomeStatus } from '../store/job-records';
import { partitionTag } from '../store/partitions';
import { getStoredConfig } from './queues';
import { callScript } from '../store/scripts';
import { onGroup, onJob, partitionsOf, routed, checkTag } from './partitions';

/** The most jobs GET group returns. */
const GROUP_JOBS_LIMIT = 1000;

/** Job `id` of one queue or partition (`tag`). */
export async function getJobAt(ctx: EngineContext, tag: string, id: string): Promise<Job> {
  checkTag(tag);
  parseParam(jobIdSchema, id, 'id');
  const { view, callbackUrl, outcome } = await callScript(ctx, scripts.getJob, { queue: tag }, [id]);
  const job = toJob(tag, view);
  if (callbackUrl !== null) job.callbackUrl = callbackUrl;
  if (outcome !== null) job.outcome = toOutcomeStatus(outcome);
  return job;
}

export async function getJob(ctx: EngineContext, { queue, id }: JobRef): Promise<Job> {
  checkQueueName(queue);
  parseParam(jobIdSchema, id, 'id');
  const read = (tag: string) => getJobAt(ctx, tag, id);
  return onJob(ctx, queue, id, read, read);
}

/** One page of `listing` from one queue or partition: its items, and where the next starts ([]: none). */
type PageOf<T> = (tag: string, limit: number, at: string[]) => Promise<{ items: T[]; next: (string | number)[] }>;

/**
 * A page of a listing: of the queue itself, or walking a partitioned queue's partitions from the
 * cursor's, until `limit` items or the last partition's end.
 */
async function pageAcross<T>(ctx: EngineContext, queue: string, listing: Listing, limit: number, cursor: string | undefined, page: PageOf<T>) {
  // A partitioned queue's cursor in an isolate that has not met the queue: learn its count first.
  if (isPartitionCursor(cursor) && partitionsOf(ctx, queue) === 1) await getStoredConfig(ctx, queue);
  return routed(ctx, queue, async (partitions) => {
    if (partitions === 1) {
      const { items, next } = await page(queue, limit, decodeCursor(listing, cursor));
      return { items, cursor: encodeCursor(listing, next) };
    }
    let { partition, at } = decodePartitionCursor(listing, cursor, partitions);
    const items: T[] = [];
    for (;;) {
      const got = await page(partitionTag(queue, partition, partitions), limit - items.length, at);
      items.push(...got.items);
      if (got.next.length > 0) return { items, cursor: encodePartitionCursor(listing, partition, got.next) };
      if (++partition === partitions) return { items, cursor: null };
      at = [];
      if (items.length === limit) return { items, cursor: encodePartitionCursor(listing, partition, []) };
    }
  });
}

export async function listJobs(ctx: EngineContext, { queue, query = {} }: QueueRef & Query) {
  checkQueueName(queue);
  const { state, group, limit, cursor } = parse(listJobsSchema, query);
  // With a group, waiting jobs are read from the group's zset (the script's optional last key).
  const inGroup = group !== undefined && state === 'waiting';
  const listing: Listing = inGroup ? 'group' : state;
  const page: PageOf<Job> = async (tag, count, at) => {
    const { next, views } = await callScript(ctx, scripts.listJobs, { queue: tag, group: inGroup ? group : undefined }, [state, count, group ?? '', ...at]);
    return { items: views.map((view) => toJob(tag, view)), next };
  };
  if (group !== undefined) {
    // All of a group's jobs are in its partition.
    return onGroup(ctx, queue, group, async (tag) => {
      const { items, next } = await page(tag, limit, decodeCursor(listing, cursor));
      return { jobs: items, cursor: encodeCursor(listing, next) };
    });
  }
  const { items, cursor: next } = await pageAcross(ctx, queue, listing, limit, cursor, page);
  return { jobs: items, cursor: next };
}

export type { GroupSummary } from '../../protocol/api/types';

export async function listGroups(ctx: EngineContext, { queue, query = {} }: QueueRef & Query) {
  checkQueueName(queue);
  const { limit, cursor } = parse(pageSchema, query);
  // Two reads: the names (list-groups walks meta's group counters), then their state, which
  // needs each group's key declared.
  const page: PageOf<GroupSummary> = async (tag, count, at) => {
    const { next, names } = await callScript(ctx, scripts.listGroups, { queue: tag }, [count, ...at]);
    const items = names.length > 0 ? await callScript(ctx, scripts.groupInfo, { queue: tag, groups: names }, [ctx.now(), ...names]) : [];
    return { items, next };
  };
  const { items, cursor: next } = await pageAcross(ctx, queue, 'groups', limit, cursor, page);
  return { groups: items, cursor: next };
}

export async function getGroup(ctx: EngineContext, { queue, group }: GroupRef) {
  checkQueueName(queue);
  parseParam(groupParamSchema, group, 'group');
  return onGroup(ctx, queue, group, async (tag) => {
    const { state, views, limits, active, concurrency } = await callScript(ctx, scripts.getGroup, { queue: tag, group }, [
      group, ctx.now(), GROUP_JOBS_LIMIT,
    ]);
    return { group, state, limits, active, concurrency, jobs: views.map((view) => toJob(tag, view)) };
  });
}
