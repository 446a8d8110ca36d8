// Moving a partition (or a queue of one partition) to another database of the pool while the
// queue runs (docs/scaling-out.md#moving-a-partition). The partition is fenced on the database it
// is on (move-fence: every script of it refuses, PARTITION_MOVING, so nothing changes under the
// copy), its keys are copied page by page to the new database (meta first, fenced there too),
// the placement record is switched, the new copy unfenced and the old one deleted, leaving in
// its meta only `move`, 'at <d>': an isolate that still sends it there is told (PARTITION_MOVED) and
// reads the record again (pool.ts). Leases, timers and the dedup window travel with the keys,
// so no job is lost or runs twice at once; calls made during the move answer 503 and retry.
// A move cut off half way leaves the partition fenced: moving it again (to either database)
// finishes or undoes it.
import { scripts } from '../../lua/scripts.generated';
import type { PartitionInfo } from '../../protocol/api-types';
import { QueueError } from '../../protocol/errors';
import { moveInputSchema, partitionParamSchema } from '../../protocol/job-input';
import { type EngineContext, parse, parseParam } from '../store/context';
import { DUE_KEY, KEY_CATALOGUE, groupKey, queueKey, isQueueKeyName } from '../store/keys';
import { partitionTag } from '../store/partitions';
import type { PoolRunner } from '../store/pool';
import { isRefusal } from '../store/refusals';
import { callScript, type ScriptContext } from '../store/scripts';
import { checkQueueName, deleteKeys, getStoredConfig } from './queues';

/** Entries per page of a copied key, and the most small keys (groups) copied in one call. */
const PAGE = 1000;
const KEYS_PER_CALL = 100;

/** The keys of a partition the move copies, with their types: every fixed key but the transient strings. */
const COPIED = KEY_CATALOGUE.flatMap(({ key, type }) => {
  const name = key.slice('gq:{q}:'.length);
  return key.startsWith('gq:{q}:') && isQueueKeyName(name) && name !== 'meta' && type !== 'string' ? [{ name, type: type as Kind }] : [];
});

type Kind = 'hash' | 'zset' | 'set';

/** Copies one key from `from` to `to` in pages; returns its entries when it is a hash (meta's fields and values). */
async function copyKey(from: ScriptContext, to: ScriptContext, key: string, kind: Kind): Promise<string[]> {
  const hash: string[] = [];
  let at: string | null = '0';
  for (let first = true; at !== null; first = false) {
    const { next, pages }: { next: string | null; pages: string[][] } = await callScript(from, scripts.moveRead, { keys: [key] }, [kind, at, PAGE]);
    const entries = pages[0] ?? [];
    if (kind === 'hash') hash.push(...entries);
    if (first || entries.length > 0) await callScript(to, scripts.moveWrite, { keys: [key] }, [kind, first ? '1' : '', entries.length, ...entries]);
    at = next;
  }
  return hash;
}

/** Copies small zsets (groups of at most PAGE jobs: copyKey pages larger ones) whole, up to KEYS_PER_CALL or PAGE jobs a call. */
async function copyGroups(from: ScriptContext, to: ScriptContext, keys: { key: string; jobs: number }[]): Promise<void> {
  for (let i = 0; i < keys.length; ) {
    const batch: string[] = [];
    for (let jobs = 0; i < keys.length && batch.length < KEYS_PER_CALL && jobs + keys[i]!.jobs <= PAGE; i++) {
      batch.push(keys[i]!.key);
      jobs += keys[i]!.jobs;
    }
    const { pages } = await callScript(from, scripts.moveRead, { keys: batch }, ['zset', '', PAGE]);
    const args = pages.flatMap((entries) => [entries.length, ...entries]);
    await callScript(to, scripts.moveWrite, { keys: batch }, ['zset', '1', ...args]);
  }
}

/** Deletes `keys` on `from`, KEYS_PER_CALL a call. */
async function dropKeys(from: ScriptContext, keys: string[]): Promise<void> {
  for (let i = 0; i < keys.length; i += KEYS_PER_CALL) {
    const batch = keys.slice(i, i + KEYS_PER_CALL);
    await callScript(from, scripts.moveWrite, { keys: batch }, ['zset', '1', ...batch.map(() => 0)]);
  }
}

/**
 * Moves partition `partition` of `queue` to database `input.database` of the pool, and answers
 * its entry there once it is done.
 */
export async function movePartition(ctx: EngineContext, queue: string, partition: string, input: unknown): Promise<PartitionInfo> {
  checkQueueName(queue);
  const p = parseParam(partitionParamSchema, partition, 'partition');
  const { database } = parse(moveInputSchema, input);
  const pool = 'databaseOf' in ctx.redis ? (ctx.redis as PoolRunner) : null;
  if (!pool || database >= pool.databases.length) {
    const message = pool ? `the pool has databases 0 to ${pool.databases.length - 1}` : 'a move needs a pool of databases (GROUPQ_REDIS_POOL)';
    throw new QueueError('VALIDATION_FAILED', `database: ${message}`, [{ path: 'database', message }]);
  }
  const { partitions } = await getStoredConfig(ctx, queue);
  if (p >= partitions) throw new QueueError('VALIDATION_FAILED', `path parameter partition: the queue has partitions 0 to ${partitions - 1}`, [{ in: 'path', path: 'partition', message: 'no such partition' }]);
  const tag = partitionTag(queue, p, partitions);
  pool.forget(tag);
  const source = await pool.databaseOf(tag);
  const on = (index: number): ScriptContext => ({ redis: pool.databases[index]!, keyLocking: ctx.keyLocking });
  const from = on(source);
  const to = on(database);
  if (source === database) {
    // Already there: lift the fence a move cut off half way may have left.
    await callScript(from, scripts.moveFence, { queue: tag }, ['']);
    return infoOf(ctx, from, tag, p, database);
  }

  await callScript(from, scripts.moveFence, { queue: tag }, [String(database)]);
  // What an earlier move cut off half way left on the new database goes first (a meta left by a
  // move away from it holds no config: the copy of meta replaces it).
  await deleteKeys({ ...ctx, redis: pool.databases[database]! }, tag).catch((error: unknown) => {
    if (!isRefusal(error, 'QUEUE_NOT_FOUND')) throw error;
  });
  // Meta first, fenced as it is: its fields name the groups whose zsets follow, with their sizes.
  const meta = await copyKey(from, to, queueKey(tag, 'meta'), 'hash');
  const groups: { key: string; jobs: number }[] = [];
  for (let i = 0; i < meta.length; i += 2) {
    if (meta[i]!.startsWith('g:')) groups.push({ key: groupKey(tag, meta[i]!.slice(2)), jobs: Number(meta[i + 1]) });
  }
  for (const { name, type } of COPIED) await copyKey(from, to, queueKey(tag, name), type);
  const big = groups.filter(({ jobs }) => jobs > PAGE);
  for (const { key } of big) await copyKey(from, to, key, 'zset');
  await copyGroups(from, to, groups.filter(({ jobs }) => jobs <= PAGE));

  const recorded = await callScript({ redis: pool.databases[0]!, keyLocking: ctx.keyLocking }, scripts.movePlace, {}, [tag, source, database]);
  if (recorded !== database) throw new QueueError('INTERNAL', `partition ${tag} was moved to database ${recorded} by another move meanwhile`);
  pool.forget(tag);
  await callScript(to, scripts.moveFence, { queue: tag }, ['']);
  await pool.databases[database]!.zadd(DUE_KEY, { score: ctx.now(), member: tag });
  // The old copy goes; its meta keeps only where the partition went (PARTITION_MOVED).
  await dropKeys(from, [...COPIED.map(({ name }) => queueKey(tag, name)), ...groups.map(({ key }) => key)]);
  await callScript(from, scripts.moveWrite, { keys: [queueKey(tag, 'meta')] }, ['hash', '1', 2, 'move', `at ${database}`]);
  await pool.databases[source]!.zrem(DUE_KEY, tag);
  return infoOf(ctx, to, tag, p, database);
}

async function infoOf(ctx: EngineContext, on: ScriptContext, tag: string, partition: number, database: number): Promise<PartitionInfo> {
  const { counts } = await callScript(on, scripts.queueInfo, { queue: tag }, []);
  return { partition, database, counts };
}
