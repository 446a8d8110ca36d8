// What a Worker invocation runs for a queue besides answering: the cron's loop (tick, drain,
// then wait for the next due time within its window, without polling Redis in between), and a
// request's follow-up (drain what it leased; tick first if this isolate knows a timer is due).
import { type Dispatcher, type DrainReport, type Leased, drain } from './dispatcher';
import type { TickResult } from './scheduler';

/** Tick passes in a row while a tick reports more work (500 items per phase each). */
const MAX_PASSES = 10;

/** Per isolate: when each queue next needs a tick, as last learned. Unknown means now. */
export class DueTimes {
  private readonly at = new Map<string, number | null>();

  isDue(queue: string, now: number): boolean {
    const at = this.at.get(queue);
    return at === undefined || (at !== null && at <= now);
  }

  set(queue: string, at: number | null): void {
    this.at.set(queue, at);
  }

  /** A timer at `at` exists (a delayed job, a retry, a lease): tick by then. */
  lower(queue: string, at: number): void {
    const current = this.at.get(queue);
    if (current === null || (current !== undefined && at < current)) this.at.set(queue, at);
  }
}

async function tickFully(d: Dispatcher, queue: string, opportunistic: boolean): Promise<TickResult> {
  let result = await d.engine.tick(queue, { opportunistic });
  for (let pass = 1; result.more && pass < MAX_PASSES; pass++) result = await d.engine.tick(queue, { opportunistic });
  return result;
}

function learn(due: DueTimes, queue: string, report: DrainReport | null, now: number): void {
  // A retry put the group on hold until a time only the tick knows: ask it soon.
  if (report && report.retrying > 0) due.lower(queue, now);
}

/**
 * After a request: drain (the jobs it leased, or from a fresh reservation when it made jobs
 * ready), then run the queue's tick if this isolate knows it is due, under the tick lock.
 */
export async function followUp(d: Dispatcher, due: DueTimes, queue: string, start: Leased | 'drain' | 'tick'): Promise<void> {
  try {
    if (start === 'drain') learn(due, queue, await drain(d, queue), d.delivery.now());
    else if (start !== 'tick' && (start.jobs.length > 0 || start.more)) learn(due, queue, await drain(d, queue, start), d.delivery.now());
    if (!due.isDue(queue, d.delivery.now())) return;
    const ticked = await tickFully(d, queue, true);
    if (ticked.locked) return;
    due.set(queue, ticked.nextDueAt);
    if (ticked.readyDue) learn(due, queue, await drain(d, queue), d.delivery.now());
  } catch (error) {
    console.error(`groupq: background work on queue ${queue} failed`, error);
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The cron's work for one queue: tick, drain what is ready, and while the next timer falls
 * before `until`, sleep until it and go again (second precision for delays and retries).
 */
export async function runQueue(d: Dispatcher, due: DueTimes, queue: string, until: number): Promise<TickResult> {
  const { invocation } = d;
  for (;;) {
    const ticked = await tickFully(d, queue, false);
    due.set(queue, ticked.nextDueAt);
    let report: DrainReport | null = null;
    if (ticked.readyDue) report = await drain(d, queue);
    const now = invocation.now();
    if (now >= invocation.deadline || invocation.subrequestsLeft <= 2) return ticked;
    // Deliveries made or retries scheduled: new timers and maybe new ready jobs, tick again.
    if (report && (report.delivered > 0 || report.retrying > 0)) continue;
    if (ticked.nextDueAt === null || ticked.nextDueAt > until) return ticked;
    await sleep(Math.max(0, ticked.nextDueAt - now));
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
