// The scheduler's pass over one queue: tick-scan.lua and tick.lua do the bounded work; repeats
// whose run has come back here for their next run time and are committed one by one with
// compare-and-set. Then the queue's due-index entry is set to its next tick. While the queue's
// meta says someone may listen, the result carries the job events of the pass (`events`,
// src/core/store/events.ts): the tick's (expired, promoted, lapsed leases), then each run's `added`.
import { scripts } from '../../lua/scripts.generated';
import type { EngineContext } from '../store/context';
import { QueueError } from '../../protocol/errors';
import { noteDue, setDue } from '../store/due-index';
import { randomSeed } from '../../protocol/ids';
import { type OutcomeToSend, toOutcomesToSend } from '../store/leased';
import { type RepeatSpec, runAfter } from './repeats';
import { partitionOfTag, partitionTags } from '../store/partitions';
import { callScript } from '../store/scripts';
import { routed, checkTag } from './partitions';
import { type ScriptEvent, joinEvents, toScriptEvents } from '../store/events';

/** Items per phase of one tick (delayed, held, lapsed leases, trims, repeats): bounded work. */
const TICK_LIMIT = 500;

export interface TickResult {
  /** When the queue next needs a tick (epoch ms), or null when nothing is scheduled. */
  nextDueAt: number | null;
  /** Jobs are ready to be reserved now: drain. */
  readyNow: boolean;
  /** A phase hit its limit: tick again soon. */
  more: boolean;
  /** Runs of repeatable jobs created by this tick. */
  repeatsCreated: number;
  /** An opportunistic tick found another one running: it did nothing. */
  locked: boolean;
  /** Outcome callbacks whose next attempt's time has come, leased to the caller to send. */
  outcomes: OutcomeToSend[];
  /** The job events of the pass, in order, while someone may listen (absent otherwise). */
  events?: ScriptEvent[];
}

/** How long a request's opportunistic tick keeps others out. */
const TICK_LOCK_MS = 1000;

/**
 * After a tick: the queue's due-index entry becomes `next` (null: removed), then the queue's
 * timer is read back, and a timer another call lowered meanwhile lowers the entry again.
 */
async function resetDue(ctx: EngineContext, queue: string, next: number | null): Promise<void> {
  await setDue(ctx, queue, next);
  const timer = await callScript(ctx, scripts.queueTimer, { queue }, []);
  if (timer !== null && (next === null || timer < next)) await noteDue(ctx, queue, timer);
}

/**
 * One bounded scheduler pass: tick-scan names the groups of the work whose time has come, tick
 * (with their keys declared) does it, then the queue's due-index entry is set to its next tick.
 * `opportunistic` (a request, not the cron) runs only under a short lock, so a burst of
 * requests makes one pass.
 */
export async function tick(ctx: EngineContext, queue: string, { opportunistic = false } = {}): Promise<TickResult> {
  checkTag(queue);
  const now = ctx.now();
  const scan = await callScript(ctx, scripts.tickScan, { queue }, [now, TICK_LIMIT, opportunistic ? TICK_LOCK_MS : 0]);
  const idle = { readyNow: false, more: false, repeatsCreated: 0, locked: false, outcomes: [] };
  if (scan.kind === 'locked') return { ...idle, nextDueAt: null, locked: true };
  if (scan.kind === 'idle') {
    // The cron came because the index said due: tell it the truth. A request's look changes nothing.
    if (!opportunistic) await resetDue(ctx, queue, scan.timer);
    return { ...idle, nextDueAt: scan.timer };
  }
  const { groups } = scan;
  const { nextDueAt, readyNow, more, repeatsToRun, outcomes, events: ticked } = await callScript(ctx, scripts.tick, { queue, groups }, [
    now, randomSeed(), TICK_LIMIT, ...groups,
  ]);
  const events = [ticked && toScriptEvents(queue, ticked)];
  let repeatsCreated = 0;
  let nextAt = nextDueAt;
  for (const [key, specJson] of repeatsToRun) {
    const spec = JSON.parse(specJson) as RepeatSpec;
    const runAt = spec.nextRunAt!;
    const next = runAfter(spec, runAt, now);
    try {
      const committed = await callScript(ctx, scripts.commitRepeat, { queue, group: spec.group }, [
        now, key, spec.v ?? 0, runAt, next ?? -1, spec.group,
      ]);
      if (committed !== null && !committed.duplicate) repeatsCreated++;
      if (committed?.events) events.push(toScriptEvents(queue, committed.events));
    } catch (error) {
      // The repeat or its queue was deleted between the tick and the commit: nothing to do.
      const gone = error instanceof QueueError && (error.code === 'REPEAT_NOT_FOUND' || error.code === 'QUEUE_NOT_FOUND');
      if (!gone) throw error;
    }
    if (next !== null && (nextAt === null || next < nextAt)) nextAt = next;
  }
  // The committed repeats' next runs are in the queue's timer: resetDue reads it back.
  await resetDue(ctx, queue, nextDueAt);
  const all = joinEvents(events);
  return {
    nextDueAt: nextAt,
    readyNow: readyNow || repeatsCreated > 0,
    more,
    repeatsCreated,
    locked: false,
    outcomes: toOutcomesToSend(queue, outcomes),
    ...(all && { events: all }),
  };
}

/**
 * tick on a queue or partition (a tag: the cron's, from the due index), or on every partition of
 * a partitioned queue at once, their results merged.
 */
export function tickAny(ctx: EngineContext, queue: string, options: { opportunistic?: boolean } = {}): Promise<TickResult> {
  if (partitionOfTag(queue) !== null) return tick(ctx, queue, options);
  return routed(ctx, queue, async (partitions) => {
    if (partitions === 1) return tick(ctx, queue, options);
    const all = await Promise.all(partitionTags(queue, partitions).map((tag) => tick(ctx, tag, options)));
    const times = all.flatMap(({ nextDueAt }) => (nextDueAt === null ? [] : [nextDueAt]));
    const events = joinEvents(all.map((result) => result.events));
    return {
      nextDueAt: times.length > 0 ? Math.min(...times) : null,
      readyNow: all.some((result) => result.readyNow),
      more: all.some((result) => result.more),
      repeatsCreated: all.reduce((sum, result) => sum + result.repeatsCreated, 0),
      locked: all.every((result) => result.locked),
      outcomes: all.flatMap((result) => result.outcomes),
      ...(events && { events }),
    };
  });
}
