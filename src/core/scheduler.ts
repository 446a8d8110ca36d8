// The scheduler's pass over one queue: tick.lua does the bounded work; due repeats come back
// here for their next run time and are committed one by one with compare-and-set.
import { scripts } from '../lua/scripts.generated';
import type { EngineContext } from './context';
import { QueueError } from './errors';
import { randomSeed } from './ids';
import { groupKey, queueKeys } from './keys';
import { checkQueueName } from './queues';
import { type RepeatSpec, runAfter } from './repeats';
import { runScript } from './scripts';

/** Items per phase of one tick (delayed, held, expired leases, trims, repeats): bounded work. */
const TICK_LIMIT = 500;

export interface TickResult {
  /** When the queue next needs a tick (epoch ms), or null when nothing is scheduled. */
  nextDueAt: number | null;
  /** Jobs are ready to be reserved now: drain. */
  readyDue: boolean;
  /** A phase hit its limit: tick again soon. */
  more: boolean;
  /** Runs of repeatable jobs created by this tick. */
  repeatsCreated: number;
  /** An opportunistic tick found another one running: it did nothing. */
  locked: boolean;
}

/** How long a request's opportunistic tick keeps others out. */
const TICK_LOCK_MS = 1000;

/**
 * One bounded scheduler pass. `opportunistic` (a request, not the cron) runs only under a short
 * lock, so a burst of requests makes one pass.
 */
export async function tick(ctx: EngineContext, queue: string, { opportunistic = false } = {}): Promise<TickResult> {
  const k = queueKeys(checkQueueName(queue));
  const now = ctx.now();
  const reply = await runScript(
    ctx.redis,
    scripts.tick,
    [k.meta, k.jobs, k.ready, k.active, k.held, k.delayed, k.completed, k.failed, k.repeatDue, k.repeats, k.tickLock, k.metrics],
    [now, randomSeed(), TICK_LIMIT, opportunistic ? TICK_LOCK_MS : 0],
  );
  const [, nextDueAt, readyDue, more, dueRepeats, locked] = reply as [number, number, number, number, [string, string][], number?];
  let repeatsCreated = 0;
  let nextAt = nextDueAt < 0 ? null : nextDueAt;
  for (const [key, specJson] of dueRepeats) {
    const spec = JSON.parse(specJson) as RepeatSpec;
    const runAt = spec.nextRunAt!;
    const next = runAfter(spec, runAt, now);
    try {
      const committed = await runScript(
        ctx.redis,
        scripts.commitRepeat,
        [k.meta, k.jobs, k.ready, k.delayed, k.active, k.repeats, k.repeatDue, groupKey(queue, spec.group)],
        [now, randomSeed(), key, spec.v ?? 0, runAt, next ?? -1],
      );
      if (committed[0] === 1 && committed[3] === 0) repeatsCreated++;
    } catch (error) {
      // The repeat or its queue was deleted between the tick and the commit: nothing to do.
      const gone = error instanceof QueueError && (error.code === 'REPEAT_NOT_FOUND' || error.code === 'QUEUE_NOT_FOUND');
      if (!gone) throw error;
    }
    if (next !== null && (nextAt === null || next < nextAt)) nextAt = next;
  }
  return {
    nextDueAt: nextAt,
    readyDue: readyDue === 1 || repeatsCreated > 0,
    more: more === 1,
    repeatsCreated,
    locked: locked === 1,
  };
}
