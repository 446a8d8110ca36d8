// What a Worker invocation runs for a queue besides answering: the cron's loop (tick, drain,
// then sleep until the next due time within its window, without polling Redis in between), and
// a request's follow-up (drain what it leased; then the same loop if this isolate knows a timer
// of the queue is due, with the tick taken under a short Redis lock).
import { type Dispatcher, type DrainReport, type Leased, drain } from './dispatcher';
import type { TickResult } from './scheduler';

/** Tick passes in a row while a tick reports more work (500 items per phase each). */
const MAX_PASSES = 10;

/** Per isolate: when each queue next needs a tick, as last learned. Unknown means now. */
export class DueTimes {
  private readonly at = new Map<string, number | null>();
  private readonly sleeping = new Set<string>();

  isDue(queue: string, now: number): boolean {
    const at = this.at.get(queue);
    return at === undefined || (at !== null && at <= now);
  }

  set(queue: string, at: number | null): void {
    this.at.set(queue, at);
  }

  /** A timer at `at` exists (a delayed job, a retry): tick by then. */
  lower(queue: string, at: number): void {
    const current = this.at.get(queue);
    if (current === null || (current !== undefined && at < current)) this.at.set(queue, at);
  }

  /** One request follow-up per isolate and queue sleeps for the next due time; false if one does. */
  claimSleep(queue: string): boolean {
    if (this.sleeping.has(queue)) return false;
    this.sleeping.add(queue);
    return true;
  }

  releaseSleep(queue: string): void {
    this.sleeping.delete(queue);
  }
}

// Only the first pass competes for the lock: the passes after it would find their own lock.
async function tickFully(d: Dispatcher, queue: string, opportunistic: boolean): Promise<TickResult> {
  let result = await d.engine.tick(queue, { opportunistic });
  for (let pass = 1; result.more && !result.locked && pass < MAX_PASSES; pass++) result = await d.engine.tick(queue);
  return result;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Tick, drain what is ready, and while the next timer falls before `until`, sleep until it and
 * go again: second precision for delays and retries. `opportunistic` (a request, not the cron)
 * takes the tick lock and leaves the sleeping to one follow-up per isolate.
 */
export async function runQueue(d: Dispatcher, due: DueTimes, queue: string, until: number, opportunistic = false): Promise<TickResult> {
  const { invocation } = d;
  for (let round = 0; ; round++) {
    // A request competes for the tick lock once; having won it, its later rounds are its own.
    const ticked = await tickFully(d, queue, opportunistic && round === 0);
    if (ticked.locked) return ticked; // another request is ticking this queue right now
    due.set(queue, ticked.nextDueAt);
    let report: DrainReport | null = null;
    if (ticked.readyDue) report = await drain(d, queue);
    const now = invocation.now();
    if (now >= invocation.deadline || invocation.subrequestsLeft <= 2) return ticked;
    // Deliveries made or retries scheduled: new timers and maybe new ready jobs, tick again.
    if (report && (report.delivered > 0 || report.retrying > 0)) continue;
    if (ticked.nextDueAt === null || ticked.nextDueAt > until) return ticked;
    if (opportunistic && !due.claimSleep(queue)) return ticked; // another follow-up waits for it
    try {
      await sleep(Math.max(0, ticked.nextDueAt - now));
    } finally {
      if (opportunistic) due.releaseSleep(queue);
    }
  }
}

/**
 * After a request: drain (the jobs it leased, or from a fresh reservation when it made jobs
 * ready); then, if this isolate knows the queue's tick is due, run the queue until the
 * invocation's deadline. A retry the drain scheduled makes the tick due: only it knows when.
 */
export async function followUp(d: Dispatcher, due: DueTimes, queue: string, start: Leased | 'drain'): Promise<void> {
  try {
    let report: DrainReport | null = null;
    if (start === 'drain') report = await drain(d, queue);
    else if (start.jobs.length > 0 || start.more) report = await drain(d, queue, start);
    if (report && report.retrying > 0) due.lower(queue, d.invocation.now());
    if (due.isDue(queue, d.invocation.now())) await runQueue(d, due, queue, d.invocation.deadline, true);
  } catch (error) {
    console.error(`groupq: background work on queue ${queue} failed`, error);
  }
}

/** The cron's work for every queue at once; one queue failing does not stop the others. */
export async function runQueues(
  d: Dispatcher,
  due: DueTimes,
  queues: string[],
  until: number,
): Promise<Record<string, TickResult | { error: string }>> {
  const results: Record<string, TickResult | { error: string }> = {};
  await Promise.all(
    queues.map(async (queue) => {
      try {
        results[queue] = await runQueue(d, due, queue, until);
      } catch (error) {
        console.error(`groupq: scheduler pass over queue ${queue} failed`, error);
        results[queue] = { error: error instanceof Error ? error.message : String(error) };
      }
    }),
  );
  return results;
}
