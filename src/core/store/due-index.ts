// The due index (`gq:due`): every partition with a timer, by its tag (its queue's name when the
// queue has one partition), scored by when it next needs a tick, so the cron finds due
// partitions with one command whatever the number of queues. Scripts cannot write it (it is
// outside every queue's hash slot): a script that lowers its partition's `timer` reports it
// (dueAt), and callScript (scripts.ts) lowers the entry here, right after. Only a tick raises an
// entry (setDue): it writes the exact next time, then reads the partition's timer again and
// lowers the entry to it (src/core/engine/scheduler.ts), so a timer another call lowered in
// between is never lost. In a pool of databases (pool.ts) each database holds the entries of
// its own partitions: writes go where the partition lives, and reads ask every database, once
// each.
import type { Redis } from '@upstash/redis';
import { DUE_KEY } from './keys';
import { asQueueError } from './redis';

type DueRedis = Pick<Redis, 'zadd' | 'zrange' | 'zrem'>;

/** What the due index needs: a Redis client (one, or a pool's runner), and the pool's databases (pool.ts). */
export interface DueContext {
  redis: DueRedis;
  pool?: { readonly databases: readonly DueRedis[] };
}

async function call<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    throw asQueueError(error);
  }
}

/**
 * `read` on each database's due index, in parallel. A database that fails is left out, so the
 * partitions of the others still run (docs/scaling-out.md#when-a-database-is-down); only when every
 * database failed does the read fail.
 */
async function onEach<T>(ctx: DueContext, read: (redis: DueRedis) => Promise<T>): Promise<T[]> {
  if (!ctx.pool) return [await call(() => read(ctx.redis))];
  const settled = await Promise.allSettled(ctx.pool.databases.map((redis) => read(redis)));
  const answered = settled.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
  const failure = settled.find((result) => result.status === 'rejected');
  if (answered.length === 0 && failure) throw asQueueError(failure.reason);
  return answered;
}

/** The earliest of several [member, score] pairs' scores, or null. */
const earliest = (pairs: string[][]) =>
  pairs.reduce<{ tag: string; at: number } | null>((best, [tag, at]) => {
    if (tag === undefined || (best !== null && best.at <= Number(at))) return best;
    return { tag, at: Number(at) };
  }, null);

/** The partition's timer is now `at`: lower its entry to it (an entry already earlier stays). */
export async function noteDue(ctx: DueContext, tag: string, at: number): Promise<void> {
  await call(() => ctx.redis.zadd(DUE_KEY, { lt: true }, { score: at, member: tag }));
}

/** The earliest entry: the partition and when it is due, or null when none has a timer. */
export async function firstDue(ctx: DueContext): Promise<{ tag: string; at: number } | null> {
  return earliest(await onEach(ctx, (redis) => redis.zrange<string[]>(DUE_KEY, 0, 0, { withScores: true })));
}

/** When the earliest entry after `now` is due, or null. */
export async function nextDueAfter(ctx: DueContext, now: number): Promise<number | null> {
  const firsts = await onEach(ctx, (redis) =>
    redis.zrange<string[]>(DUE_KEY, `(${now}`, '+inf', { byScore: true, offset: 0, count: 1, withScores: true }),
  );
  return earliest(firsts)?.at ?? null;
}

/** The tags of up to `limit` partitions due by `now` on each database, earliest first on each. */
export async function dueTags(ctx: DueContext, now: number, limit: number): Promise<string[]> {
  return (await onEach(ctx, (redis) => redis.zrange<string[]>(DUE_KEY, '-inf', now, { byScore: true, offset: 0, count: limit }))).flat();
}

/** A tick's word: the partition's entry becomes `next`, higher or lower (null: removed). */
export async function setDue(ctx: DueContext, tag: string, next: number | null): Promise<void> {
  await call(() => (next === null ? ctx.redis.zrem(DUE_KEY, tag) : ctx.redis.zadd(DUE_KEY, { score: next, member: tag })));
}

/** A deleted queue's partitions leave the index, one `tag` a call. */
export async function dropDue(ctx: DueContext, tag: string): Promise<void> {
  await call(() => ctx.redis.zrem(DUE_KEY, tag));
}
