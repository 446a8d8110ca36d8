// What a Worker invocation runs besides answering: the cron's loop (read the due index, tick and
// drain the partitions it names, then sleep until its next entry within the window, without
// polling Redis in between), and a request's follow-up (drain what it leased; then tick and drain
// the partition if this isolate knows a timer of it is due, under a short Redis lock). A
// partition is named by its tag: its queue's name when the queue has one partition.
import { type RunContext, type DrainReport, type Leased, drain, sendOutcomes } from './dispatcher';
import type { TickResult } from '../engine/scheduler';
import type { DueTimes } from './due-times';
import { nextTurn } from './invocation';
import { sleep } from '../../protocol/sleep';

/** Tick passes in a row while a tick reports more work (500 items per phase each). */
const MAX_PASSES = 10;

// Only the first pass competes for the lock: the passes after it would find their own lock.
// Every pass's outcome callbacks are leased to us: all of them are returned, to be sent.
// Passes are rounds of their own: the isolate's requests go between them (nextTurn).
async function tickFully(d: RunContext, tag: string, opportunistic: boolean): Promise<TickResult> {
  let result = await d.engine.tick(tag, { opportunistic });
  const outcomes = [...result.outcomes];
  for (let pass = 1; result.more && !result.locked && pass < MAX_PASSES; pass++) {
    await nextTurn();
    result = await d.engine.tick(tag);
    outcomes.push(...result.outcomes);
  }
  return { ...result, outcomes };
}

/**
 * Tick, drain what is ready, and while the next timer falls before `until`, sleep until it and
 * go again: second precision for delays and retries. `opportunistic` (a request, not the cron)
 * takes the tick lock and leaves the sleeping to one follow-up per isolate.
 */
export async function runPartition(d: RunContext, due: DueTimes, tag: string, until: number, opportunistic = false): Promise<TickResult> {
  const { invocation } = d;
  for (let round = 0; ; round++) {
    // A request competes for the tick lock once; having won it, its later rounds are its own.
    const ticked = await tickFully(d, tag, opportunistic && round === 0);
    if (ticked.locked) return ticked; // another request is ticking this partition right now
    due.set(tag, ticked.nextDueAt);
    const sent = sendOutcomes(d, tag, ticked.outcomes); // while the drain runs
    let report: DrainReport | null = null;
    if (ticked.readyNow) report = await drain(d, tag);
    await sent;
    const now = invocation.now();
    if (report?.cut) await d.engine.noteDue(tag, now); // out of budget: the next trigger drains the rest
    if (invocation.spent()) return ticked;
    // A request's follow-up: deliveries made or retries scheduled mean new timers and maybe new
    // ready jobs, tick again. (The cron needs not: the due index names the partition when due.)
    if (opportunistic && report && (report.delivered > 0 || report.retrying > 0)) {
      await nextTurn();
      continue;
    }
    if (ticked.nextDueAt === null || ticked.nextDueAt > until) return ticked;
    if (opportunistic && !due.claimSleep(tag)) return ticked; // another follow-up waits for it
    try {
      await sleep(Math.max(0, ticked.nextDueAt - now));
    } finally {
      if (opportunistic) due.releaseSleep(tag);
    }
  }
}

/**
 * After a request: drain partition `tag` (the jobs it leased, or from a fresh reservation when it
 * made jobs ready); then, if this isolate knows the partition's tick is due, run it until the
 * invocation's deadline. A retry the drain scheduled makes the tick due: only it knows when.
 */
export async function followUp(d: RunContext, due: DueTimes, tag: string, start: Leased | 'drain'): Promise<void> {
  try {
    let report: DrainReport | null = null;
    if (start === 'drain') report = await drain(d, tag);
    else if (start.jobs.length > 0 || start.more || start.outcomes?.length) report = await drain(d, tag, start);
    if (report && report.retrying > 0) due.lower(tag, d.invocation.now());
    if (report?.cut) {
      await d.engine.noteDue(tag, d.invocation.now()); // out of budget: the next trigger drains the rest
      return;
    }
    if (due.isDue(tag, d.invocation.now())) await runPartition(d, due, tag, d.invocation.deadline, true);
  } catch (error) {
    d.log.error('follow_up_failed', `background work on queue ${tag} failed`, { queue: tag, error });
  }
}

/** Due partitions the cron takes at once. */
const DUE_BATCH = 100;

type QueueResult = TickResult | { error: string };

/**
 * The cron's work: every partition the due index names as due, ticked and drained, again
 * whenever the index's next entry falls before `until`. An idle pass is one command, whatever the
 * number of queues. One partition failing does not stop the others (it is left for the next
 * invocation). The results are by tag.
 */
export async function runDueQueues(d: RunContext, due: DueTimes, until: number): Promise<Record<string, QueueResult>> {
  const { engine, invocation } = d;
  const results: Record<string, QueueResult> = {};
  const failed = new Set<string>();
  for (;;) {
    if (invocation.spent()) return results;
    const now = invocation.now();
    const first = await engine.firstDue();
    let nextAt = first?.at ?? null;
    if (first && first.at <= now) {
      const tags = (await engine.dueTags(now, DUE_BATCH)).filter((tag) => !failed.has(tag));
      await Promise.all(
        tags.map(async (tag) => {
          try {
            results[tag] = await runPartition(d, due, tag, now);
          } catch (error) {
            d.log.error('scheduler_failed', `scheduler pass over queue ${tag} failed`, { queue: tag, error });
            failed.add(tag);
            results[tag] = { error: error instanceof Error ? error.message : String(error) };
          }
        }),
      );
      if (tags.length > 0) {
        await nextTurn();
        continue;
      }
      nextAt = await engine.nextDueAfter(now); // only failed partitions are due: wait for the others
    }
    if (nextAt === null || nextAt > until) return results;
    await sleep(Math.max(0, nextAt - invocation.now()));
  }
}
