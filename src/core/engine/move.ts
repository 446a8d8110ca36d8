// Moving a partition (or a queue of one partition) to another database of the pool while the
// queue runs (docs/scaling-out.md#moving-a-partition). The move takes the partition's lease
// (move-lease.ts: one move of it at a time), fences it on the database it is on (move-fence:
// every script of it refuses, PARTITION_MOVING, so nothing changes under the copy), copies its
// keys page by page to the new database (move-copy.ts; meta first, fenced there too), switches
// the placement record (if it still holds the lease), unfences the new copy and deletes the old
// one, leaving in its meta only `move`, 'at <d>': an isolate that still sends it there is told
// (PARTITION_MOVED) and reads the record again (pool.ts). Leases, timers and the dedup window
// travel with the keys, so no job is lost or runs twice at once; calls made during the move
// answer 503 and retry.
//
// A move cut off (its Worker died) leaves fenced copies: the one it left (after the switch) or
// the one it was writing (before). Any copy of the partition fenced on a database other than
// the one the record names is such a leftover, since no other move can run meanwhile: the next
// move, the same call made again included, deletes them before anything else. So the same
// call finishes a move cut off after the switch (the record already names the new database: it
// unfences the copy there and deletes the old one), and starts over one cut off before it.
import { scripts } from '../../lua/scripts.generated';
import { checkQueueName, parse, parseParam } from '../../protocol/parse';
import type { PartitionInfo } from '../../protocol/api/types';
import { QueueError } from '../../protocol/errors';
import { moveInputSchema, partitionParamSchema } from '../../protocol/job-input';
import type { Body, EngineContext, QueueRef } from '../store/context';
import { DUE_KEY, queueKey } from '../store/keys';
import { partitionTag } from '../store/partitions';
import type { Pool } from '../store/pool';
import { isRefusal } from '../store/refusals';
import { callScript, type ScriptContext } from '../store/scripts';
import { COPIED, copyGroups, copyKey, dropCopy, groupsOf, PAGE, readMeta } from './move-copy';
import { MoveLease } from './move-lease';
import { deleteKeys, getStoredConfig } from './queues';

/** The steps of a move, in order: what a test may stop a move after (MoveOptions). */
export type MoveStep = 'fence' | 'copy' | 'switch' | 'unfence' | 'drop';

export interface MoveOptions {
  /**
   * Tests only: called after each step. What it throws ends the move there, as if its Worker
   * had died (the lease is ended: a Worker that died would leave it to run out).
   */
  afterStep?: (step: MoveStep) => Promise<void> | void;
}

/**
 * Moves partition `partition` of `queue` to database `input.database` of the pool, and answers
 * its entry there once it is done.
 */
export async function movePartition(ctx: EngineContext, { queue, partition, body: input }: QueueRef & Body & { partition: string }, options: MoveOptions = {}): Promise<PartitionInfo> {
  checkQueueName(queue);
  const p = parseParam(partitionParamSchema, partition, 'partition');
  const { database } = parse(moveInputSchema, input);
  const { pool } = ctx;
  if (!pool || database >= pool.databases.length) {
    const message = pool ? `the pool has databases 0 to ${pool.databases.length - 1}` : 'a move needs a pool of databases (GROUPQ_REDIS_POOL)';
    throw new QueueError('VALIDATION_FAILED', `database: ${message}`, [{ path: 'database', message }]);
  }
  const { partitions } = await getStoredConfig(ctx, queue);
  if (p >= partitions) throw new QueueError('VALIDATION_FAILED', `path parameter partition: the queue has partitions 0 to ${partitions - 1}`, [{ in: 'path', path: 'partition', message: 'no such partition' }]);
  const tag = partitionTag(queue, p, partitions);
  const on = (index: number): ScriptContext => ({ redis: pool.databases[index]!, keyLocking: ctx.keyLocking });
  const lease = await MoveLease.take(on(0), tag, database, ctx.now);
  try {
    return await move(ctx, pool, lease, p, database, on, options);
  } finally {
    await lease.end().catch(() => {});
  }
}

async function move(
  ctx: EngineContext,
  pool: Pool,
  lease: MoveLease,
  p: number,
  database: number,
  on: (index: number) => ScriptContext,
  { afterStep = () => {} }: MoveOptions,
): Promise<PartitionInfo> {
  const { tag } = lease;
  const keep = () => lease.keep();
  pool.forget(tag);
  const source = await pool.databaseOf(tag);
  const from = on(source);
  const to = on(database);
  const cleared = await dropLeftovers(pool, tag, source, on, keep);
  if (source === database) {
    // Already there: lift the fence a move cut off may have left. One cut off after the switch
    // left its copy here fenced since: its leases and timers may be due.
    await keep();
    await callScript(from, scripts.moveFence, { queue: tag }, ['']);
    if (cleared) await pool.databases[database]!.zadd(DUE_KEY, { score: ctx.now(), member: tag });
    return infoOf(from, tag, p, database);
  }

  await callScript(from, scripts.moveFence, { queue: tag }, [String(database)]);
  await afterStep('fence');
  // What is on the new database under this tag goes first (a stub left by a move away from it
  // holds no config: the copy of meta replaces it).
  await keep();
  await deleteKeys({ ...ctx, redis: pool.databases[database]! }, tag).catch((error: unknown) => {
    if (!isRefusal(error, 'QUEUE_NOT_FOUND')) throw error;
  });
  // Meta first, fenced as it is, its `move` in the first page: its fields name the groups whose
  // zsets follow, with their sizes.
  const meta = await copyKey(from, to, queueKey(tag, 'meta'), 'hash', keep, ['move', `to ${database}`]);
  const groups = groupsOf(tag, meta);
  for (const { name, type } of COPIED) await copyKey(from, to, queueKey(tag, name), type, keep);
  for (const { key } of groups.filter(({ jobs }) => jobs > PAGE)) await copyKey(from, to, key, 'zset', keep);
  await copyGroups(from, to, groups.filter(({ jobs }) => jobs <= PAGE), keep);
  await afterStep('copy');

  await keep();
  const placed = await callScript(on(0), scripts.movePlace, {}, [tag, source, database, lease.owner]);
  if (!placed.held) throw new QueueError('MOVE_IN_PROGRESS', `another move of partition ${tag} took it over: this one stopped before the switch`);
  if (placed.database !== database) throw new QueueError('INTERNAL', `partition ${tag} is recorded on database ${placed.database}: it was not on ${source} when the move began`);
  pool.forget(tag);
  await afterStep('switch');
  await keep();
  await callScript(to, scripts.moveFence, { queue: tag }, ['']);
  await pool.databases[database]!.zadd(DUE_KEY, { score: ctx.now(), member: tag });
  await afterStep('unfence');
  // The old copy goes; its meta keeps only where the partition went (PARTITION_MOVED).
  await dropCopy(from, tag, groups, database, keep);
  await pool.databases[source]!.zrem(DUE_KEY, tag);
  await afterStep('drop');
  return infoOf(to, tag, p, database);
}

/**
 * Deletes the copies of `tag` that moves cut off left fenced on databases other than `source`
 * (where the record places it), each but for a meta naming `source`; answers whether there
 * were any. One HGET per database of the pool.
 */
async function dropLeftovers(pool: Pool, tag: string, source: number, on: (index: number) => ScriptContext, keep: () => Promise<void>): Promise<boolean> {
  const meta = queueKey(tag, 'meta');
  // A database that does not answer keeps its leftover (harmless: fenced, it refuses every call
  // and isolates that send one there read the record again) until a later move.
  const moves = await Promise.allSettled(pool.databases.map((database, i) => (i === source ? null : database.hget<string>(meta, 'move'))));
  let cleared = false;
  for (const [i, answer] of moves.entries()) {
    const move = answer.status === 'fulfilled' ? answer.value : null;
    if (typeof move !== 'string' || !move.startsWith('to ')) continue;
    await dropCopy(on(i), tag, groupsOf(tag, await readMeta(on(i), tag)), source, keep);
    await pool.databases[i]!.zrem(DUE_KEY, tag);
    cleared = true;
  }
  return cleared;
}

async function infoOf(on: ScriptContext, tag: string, partition: number, database: number): Promise<PartitionInfo> {
  const { counts } = await callScript(on, scripts.queueInfo, { queue: tag }, []);
  return { partition, database, counts };
}
