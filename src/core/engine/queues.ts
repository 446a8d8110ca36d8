// Queue administration: create/replace, read, list, delete in bounded steps, pause and resume
// the queue or one group. A partitioned queue's config lives at its root and, with its shares
// of the queue-wide limits, in each partition; its counts are the sum of its partitions'.
import { forgetTotals } from './scrape';
import { checkQueueName, parse, parseParam } from '../../protocol/parse';
import { scripts } from '../../lua/scripts.generated';
import type { OldestReady, QueueInfo, QueueSummary } from '../../protocol/api/types';
import { type StoredConfig, queueConfigSchema, queuePatchSchema, toPublicConfig, toStoredConfig } from '../../protocol/config';
import type { Body, EngineContext, GroupRef, QueueRef } from '../store/context';
import { QueueError } from '../../protocol/errors';
import { mergePatch } from '../../protocol/merge-patch';
import { LuaStatus, isRefusal, luaError } from '../store/refusals';
import { groupParamSchema } from '../../protocol/job-input';
import { dropDue } from '../store/due-index';
import { randomSeed } from '../../protocol/ids';
import { partitionOfTag, partitionTags, shareOf } from '../store/partitions';
import { callScript } from '../store/scripts';
import { learnPartitions, onEachPartition, onGroup } from './partitions';

import type { PartitionInfo, QueueCounts } from '../../protocol/api/types';

export type { GroupState, QueueCounts, QueueInfo } from '../../protocol/api/types';

const DELETE_STEP = 200;

/** Partition `p`'s config: the queue's, with its index and its shares of the queue-wide limits. */
function partitionConfig(stored: StoredConfig, p: number): StoredConfig {
  const { partitions } = stored;
  const share = (total: number) => shareOf(total, p, partitions);
  const rateLimit = stored.rateLimit && { ...stored.rateLimit, max: share(stored.rateLimit.max) };
  const { concurrency, maxJobs, publishMaxJobs, maxBytes } = stored;
  const shares = { concurrency: share(concurrency), maxJobs: share(maxJobs), publishMaxJobs: share(publishMaxJobs), maxBytes: maxBytes && share(maxBytes) };
  return { ...stored, partition: p, ...shares, rateLimit };
}

export async function putQueue(ctx: EngineContext, { queue: name, body: input }: QueueRef & Body): Promise<QueueInfo> {
  checkQueueName(name);
  const stored = await toStoredConfig(parse(queueConfigSchema(ctx.options), input));
  return storeQueue(ctx, name, async () => ({ ...stored }));
}

/**
 * Changes the fields a JSON merge patch names (null: back to the default) and keeps the others,
 * the write-only ones included: the publish tokens' hashes stay unless the patch names
 * `publishTokens`, the signing secrets unless it names them. Checked as a whole config, as PUT is.
 * Merged into the config as stored when it is written: of two concurrent PATCHes, each takes effect.
 */
export async function patchQueue(ctx: EngineContext, { queue: name, body: patch }: QueueRef & Body): Promise<QueueInfo> {
  checkQueueName(name);
  parse(queuePatchSchema(ctx.options), patch);
  return storeQueue(ctx, name, async (found) => {
    if (!found) throw luaError([LuaStatus.QUEUE_NOT_FOUND]);
    const { publishTokenHashes, partition: _partition, revision: _revision, ...current } = found;
    const stored = await toStoredConfig(parse(queueConfigSchema(ctx.options), mergePatch({ ...current, publishTokens: [] }, patch)));
    if (!('publishTokens' in (patch as object))) stored.publishTokenHashes = publishTokenHashes;
    return stored;
  });
}

/** Writes a config over one that changed meanwhile this many times at most, then gives up (409). */
const MAX_CONFIG_WRITES = 10;

/**
 * Places (in a pool), registers and writes a queue's config: its root and partitions, if any.
 * `build` makes the new config from the stored one (null: no queue yet); it is written only over
 * the revision it was built from (put-queue.lua), else built again from the newer one.
 */
async function storeQueue(ctx: EngineContext, name: string, build: (found: StoredConfig | null) => Promise<StoredConfig>): Promise<QueueInfo> {
  for (let write = 1; ; write++) {
    const found = await findStoredConfig(ctx, name);
    const stored = await build(found);
    stored.revision = (found?.revision ?? 0) + 1;
    try {
      await writeQueue(ctx, name, stored, found);
      return getQueue(ctx, { queue: name });
    } catch (error) {
      if (isRefusal(error, 'CONFIG_CHANGED') && write < MAX_CONFIG_WRITES) continue;
      // A deletion that was cut off still holds the name: finish it, then create.
      if (isRefusal(error, 'QUEUE_DELETING') && write < MAX_CONFIG_WRITES) {
        await deleteQueue(ctx, { queue: name });
        continue;
      }
      throw error;
    }
  }
}

async function writeQueue(ctx: EngineContext, name: string, stored: StoredConfig, found: StoredConfig | null): Promise<void> {
  const { partitions } = stored;
  // Refused before anything is placed or written: a count the queue does not have.
  if (found && found.partitions !== partitions) throw luaError([LuaStatus.PARTITIONS_FIXED, found.partitions]);
  // In a pool, placed before anything is written, and before it is registered (a registered
  // queue without a placement is one from before the pool: database 0).
  await ctx.pool?.place(name, partitions);
  // Registered first: a registered name without a queue is skipped by GET /v1/queues, while a
  // queue missing from the list would be invisible.
  await callScript(ctx, scripts.registry, {}, ['add', name]);
  const read = found ? String(found.revision ?? 0) : 'none';
  const putOne = (tag: string, config: StoredConfig, role: '' | 'root', revision: string) =>
    callScript(ctx, scripts.putQueue, { queue: tag }, [ctx.now(), JSON.stringify(config), randomSeed(), role, revision]);
  if (partitions === 1) {
    await putOne(name, stored, '', read);
  } else {
    // The root first: it takes the new revision or refuses; its partitions' copies follow.
    await putOne(name, stored, 'root', read);
    await Promise.all(partitionTags(name, partitions).map((tag, p) => putOne(tag, partitionConfig(stored, p), '', '')));
  }
  learnPartitions(ctx, name, partitions);
}

/** Queue `name`'s stored config, or null when there is no such queue. */
async function findStoredConfig(ctx: EngineContext, name: string): Promise<StoredConfig | null> {
  return getStoredConfig(ctx, name).catch((error: unknown) => {
    if (isRefusal(error, 'QUEUE_NOT_FOUND')) return null;
    throw error;
  });
}

/**
 * The stored config (publish token hashes included): what auth and CORS checks read, through
 * the Worker's per-isolate cache (src/core/store/config-cache.ts).
 */
export async function getStoredConfig(ctx: EngineContext, name: string): Promise<StoredConfig> {
  const config = await callScript(ctx, scripts.queueConfig, { queue: checkQueueName(name) }, []);
  learnPartitions(ctx, name, config.partitions);
  return config;
}

/** The sum of each count over a partitioned queue's partitions. */
function sumCounts(all: readonly QueueCounts[]): QueueCounts {
  const sum = { ...all[0]! };
  for (const counts of all.slice(1)) for (const state of Object.keys(sum) as (keyof QueueCounts)[]) sum[state] += counts[state];
  return sum;
}

/** The partitions' oldest ready job: the one with the lowest orderMs (absent: none is ready). */
function oldestOf(all: readonly (OldestReady | null)[]): { oldestReady?: OldestReady } {
  let oldest: OldestReady | null = null;
  for (const one of all) if (one && (!oldest || one.orderMs < oldest.orderMs)) oldest = one;
  return oldest ? { oldestReady: oldest } : {};
}

export async function getQueue(ctx: EngineContext, { queue: name }: QueueRef): Promise<QueueInfo> {
  checkQueueName(name);
  const infos = await onEachPartition(ctx, name, (tag) => callScript(ctx, scripts.queueInfo, { queue: tag }, []));
  const { config, paused } = infos[0]!;
  const oldest = oldestOf(infos.map((info) => info.oldestReady));
  if (infos.length === 1) return { name, config: toPublicConfig(config), paused, counts: infos[0]!.counts, ...oldest };
  // The partitions' configs hold their shares: the queue's own is its root's.
  const root = await getStoredConfig(ctx, name);
  return { name, config: toPublicConfig(root), paused, counts: sumCounts(infos.map((info) => info.counts)), ...oldest };
}

/** Each partition of the queue (the queue itself when it has one): where it lives and its counts. */
export async function listPartitions(ctx: EngineContext, { queue: name }: QueueRef): Promise<PartitionInfo[]> {
  checkQueueName(name);
  return onEachPartition(ctx, name, async (tag) => {
    const [{ counts }, database] = await Promise.all([callScript(ctx, scripts.queueInfo, { queue: tag }, []), ctx.pool?.databaseOf(tag) ?? 0]);
    return { partition: partitionOfTag(tag) ?? 0, database, counts };
  });
}

/** How many queues exist: a cheap call that proves Redis answers. */
export async function countQueues(ctx: EngineContext): Promise<number> {
  return callScript(ctx, scripts.registry, {}, ['count']);
}

export async function listQueueNames(ctx: EngineContext): Promise<string[]> {
  return (await callScript(ctx, scripts.registry, {}, ['list'])).sort();
}

export async function listQueues(ctx: EngineContext): Promise<QueueSummary[]> {
  const names = await listQueueNames(ctx);
  const infos = await Promise.all(
    names.map((name) =>
      getQueue(ctx, { queue: name }).catch((error: unknown) => {
        if (error instanceof QueueError && error.code === 'QUEUE_NOT_FOUND') return null;
        throw error;
      }),
    ),
  );
  return infos.filter((info) => info !== null).map(({ config: _, ...summary }) => summary);
}

/** Removes every key of one queue or partition (`tag`), in bounded script steps. */
export async function deleteKeys(ctx: EngineContext, tag: string): Promise<void> {
  // Each step removes the groups the previous one named (their keys declared) and names more.
  let cursor = '0';
  let groups: string[] = [];
  for (;;) {
    const step = await callScript(ctx, scripts.deleteQueue, { queue: tag, groups }, [DELETE_STEP, cursor, ...groups]);
    if (step.finished) break;
    ({ cursor, groups } = step);
  }
  await dropDue(ctx, tag);
}

/** Removes every key of the queue: a partitioned queue's partitions first, its root (its count) last. */
export async function deleteQueue(ctx: EngineContext, { queue: name }: QueueRef): Promise<void> {
  checkQueueName(name);
  await callScript(ctx, scripts.registry, {}, ['remove', name]);
  const config = await getStoredConfig(ctx, name).catch((error: unknown) => {
    if (error instanceof QueueError && error.code === 'QUEUE_NOT_FOUND') return null; // or a deletion under way
    throw error;
  });
  const partitions = config?.partitions ?? 1;
  if (partitions > 1) await Promise.all(partitionTags(name, partitions).map((tag) => deleteKeys(ctx, tag)));
  await deleteKeys(ctx, name);
  await forgetTotals(ctx, [name, ...(partitions > 1 ? partitionTags(name, partitions) : [])]);
  learnPartitions(ctx, name, 1);
}

async function setQueuePaused(ctx: EngineContext, name: string, paused: boolean) {
  checkQueueName(name);
  const pausedNow = await onEachPartition(ctx, name, (tag) => callScript(ctx, scripts.pauseQueue, { queue: tag }, [paused ? '1' : '0', ctx.now()]));
  return { name, paused: pausedNow[0]! };
}

export const pauseQueue = (ctx: EngineContext, { queue }: QueueRef) => setQueuePaused(ctx, queue, true);
export const resumeQueue = (ctx: EngineContext, { queue }: QueueRef) => setQueuePaused(ctx, queue, false);

async function setGroupPaused(ctx: EngineContext, name: string, group: string, paused: boolean) {
  checkQueueName(name);
  parseParam(groupParamSchema, group, 'group');
  const state = await onGroup(ctx, name, group, (tag) => callScript(ctx, scripts.pauseGroup, { queue: tag, group }, [group, paused ? '1' : '0', ctx.now()]));
  // A paused group without jobs is still paused (its next job will wait): say so.
  return { group, state: state ?? (paused ? 'paused' : 'ready') };
}

export const pauseGroup = (ctx: EngineContext, { queue, group }: GroupRef) => setGroupPaused(ctx, queue, group, true);
export const resumeGroup = (ctx: EngineContext, { queue, group }: GroupRef) => setGroupPaused(ctx, queue, group, false);
