// The due index (`gq:due`): every queue with a timer, scored by when it next needs a tick, so the
// cron finds due queues with one command whatever the number of queues. Scripts cannot write it
// (it is outside every queue's hash slot): a script that lowers its queue's `timer` reports it
// (dueAt), and callScript (scripts.ts) lowers the entry here, right after. Only a tick raises an
// entry (setDue): it writes the exact next time, then reads the queue's timer again and lowers
// the entry to it (src/core/engine/scheduler.ts), so a timer another call lowered in between is
// never lost.
import type { Redis } from '@upstash/redis';
import { DUE_KEY } from './keys';
import { asQueueError } from './redis';

/** What the due index needs of a Redis client. */
export interface DueContext {
  redis: Pick<Redis, 'zadd' | 'zrange' | 'zrem'>;
}

async function call<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    throw asQueueError(error);
  }
}

/** The queue's timer is now `at`: lower the queue's entry to it (an entry already earlier stays). */
export async function noteDue(ctx: DueContext, queue: string, at: number): Promise<void> {
  await call(() => ctx.redis.zadd(DUE_KEY, { lt: true }, { score: at, member: queue }));
}

/** The earliest entry: the queue and when it is due, or null when no queue has a timer. */
export async function firstDue(ctx: DueContext): Promise<{ queue: string; at: number } | null> {
  const [queue, at] = await call(() => ctx.redis.zrange<string[]>(DUE_KEY, 0, 0, { withScores: true }));
  return queue === undefined ? null : { queue, at: Number(at) };
}

/** When the earliest entry after `now` is due, or null. */
export async function nextDueAfter(ctx: DueContext, now: number): Promise<number | null> {
  const [, at] = await call(() =>
    ctx.redis.zrange<string[]>(DUE_KEY, `(${now}`, '+inf', { byScore: true, offset: 0, count: 1, withScores: true }),
  );
  return at === undefined ? null : Number(at);
}

/** Up to `limit` queues due by `now`, earliest first. */
export function dueQueues(ctx: DueContext, now: number, limit: number): Promise<string[]> {
  return call(() => ctx.redis.zrange<string[]>(DUE_KEY, '-inf', now, { byScore: true, offset: 0, count: limit }));
}

/** A tick's word: the queue's entry becomes `next`, higher or lower (null: removed). */
export async function setDue(ctx: DueContext, queue: string, next: number | null): Promise<void> {
  await call(() => (next === null ? ctx.redis.zrem(DUE_KEY, queue) : ctx.redis.zadd(DUE_KEY, { score: next, member: queue })));
}

/** A deleted queue leaves the index. */
export async function dropDue(ctx: DueContext, queue: string): Promise<void> {
  await call(() => ctx.redis.zrem(DUE_KEY, queue));
}
