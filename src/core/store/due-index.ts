// The due index (`gq:due`): every queue with a timer, scored by when it next needs a tick, so the
// cron finds due queues with one command whatever the number of queues. Scripts cannot write it
// (it is outside every queue's hash slot): a script that lowers its queue's `timer` reports it
// (dueAt), and callScript (scripts.ts) lowers the entry here, right after. Only a tick raises an
// entry (setDue): it writes the exact next time, then reads the queue's timer again and lowers
// the entry to it (src/core/engine/scheduler.ts), so a timer another call lowered in between is
// never lost. In a pool of databases (pool.ts) each database holds the entries of its own
// queues: writes go where the queue lives, and reads ask every database, once each.
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
 * queues of the others still run (docs/scaling-out.md#when-a-database-is-down); only when every
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
  pairs.reduce<{ queue: string; at: number } | null>((best, [queue, at]) => {
    if (queue === undefined || (best !== null && best.at <= Number(at))) return best;
    return { queue, at: Number(at) };
  }, null);

/** The queue's timer is now `at`: lower the queue's entry to it (an entry already earlier stays). */
export async function noteDue(ctx: DueContext, queue: string, at: number): Promise<void> {
  await call(() => ctx.redis.zadd(DUE_KEY, { lt: true }, { score: at, member: queue }));
}

/** The earliest entry: the queue and when it is due, or null when no queue has a timer. */
export async function firstDue(ctx: DueContext): Promise<{ queue: string; at: number } | null> {
  return earliest(await onEach(ctx, (redis) => redis.zrange<string[]>(DUE_KEY, 0, 0, { withScores: true })));
}

/** When the earliest entry after `now` is due, or null. */
export async function nextDueAfter(ctx: DueContext, now: number): Promise<number | null> {
  const firsts = await onEach(ctx, (redis) =>
    redis.zrange<string[]>(DUE_KEY, `(${now}`, '+inf', { byScore: true, offset: 0, count: 1, withScores: true }),
  );
  return earliest(firsts)?.at ?? null;
}

/** Up to `limit` queues due by `now` on each database, earliest first on each. */
export async function dueQueues(ctx: DueContext, now: number, limit: number): Promise<string[]> {
  return (await onEach(ctx, (redis) => redis.zrange<string[]>(DUE_KEY, '-inf', now, { byScore: true, offset: 0, count: limit }))).flat();
}

/** A tick's word: the queue's entry becomes `next`, higher or lower (null: removed). */
export async function setDue(ctx: DueContext, queue: string, next: number | null): Promise<void> {
  await call(() => (next === null ? ctx.redis.zrem(DUE_KEY, queue) : ctx.redis.zadd(DUE_KEY, { score: next, member: queue })));
}

/** A deleted queue leaves the index. */
export async function dropDue(ctx: DueContext, queue: string): Promise<void> {
  await call(() => ctx.redis.zrem(DUE_KEY, queue));
}
