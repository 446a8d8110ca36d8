// The due index (`gq:due`): every queue with a timer, scored by when it next needs a tick, so the
// cron finds due queues with one command whatever the number of queues. Scripts cannot write it
// (it is outside every queue's hash slot): a script that lowers its queue's `timer` reports it
// (dueAt), and the caller lowers the entry here, right after. Only a tick raises an entry: it
// writes the exact next time, then reads the queue's timer again, so a timer another call lowered
// in between is never lost.
import { scripts } from '../../lua/scripts.generated';
import type { EngineContext } from './context';
import { DUE_KEY } from './keys';
import { asQueueError, callScript } from './scripts';

async function call<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    throw asQueueError(error);
  }
}

/** A script lowered the queue's timer to `dueAt` (null: it did not): lower the queue's entry. */
export async function noteDue(ctx: EngineContext, queue: string, dueAt: number | null): Promise<void> {
  if (dueAt === null) return;
  await call(() => ctx.redis.zadd(DUE_KEY, { lt: true }, { score: dueAt, member: queue }));
}

/** The earliest entry: the queue and when it is due, or null when no queue has a timer. */
export async function firstDue(ctx: EngineContext): Promise<{ queue: string; at: number } | null> {
  const [queue, at] = await call(() => ctx.redis.zrange<string[]>(DUE_KEY, 0, 0, { withScores: true }));
  return queue === undefined ? null : { queue, at: Number(at) };
}

/** When the earliest entry after `now` is due, or null. */
export async function nextDueAfter(ctx: EngineContext, now: number): Promise<number | null> {
  const [, at] = await call(() =>
    ctx.redis.zrange<string[]>(DUE_KEY, `(${now}`, '+inf', { byScore: true, offset: 0, count: 1, withScores: true }),
  );
  return at === undefined ? null : Number(at);
}

/** Up to `limit` queues due by `now`, earliest first. */
export function dueQueues(ctx: EngineContext, now: number, limit: number): Promise<string[]> {
  return call(() => ctx.redis.zrange<string[]>(DUE_KEY, '-inf', now, { byScore: true, offset: 0, count: limit }));
}

/** After a tick: the queue's entry becomes `next` (null: removed), then any timer lowered meanwhile wins. */
export async function resetDue(ctx: EngineContext, queue: string, next: number | null): Promise<void> {
  await call(() => (next === null ? ctx.redis.zrem(DUE_KEY, queue) : ctx.redis.zadd(DUE_KEY, { score: next, member: queue })));
  const timer = await callScript(ctx, scripts.queueTimer, { queue }, []);
  if (timer !== null && (next === null || timer < next)) await noteDue(ctx, queue, timer);
}

/** A deleted queue leaves the index. */
export async function dropDue(ctx: EngineContext, queue: string): Promise<void> {
  await call(() => ctx.redis.zrem(DUE_KEY, queue));
}
