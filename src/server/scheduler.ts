// The Node server's cron trigger: runs the scheduler (src/handlers/scheduled.ts, the same code a
// Worker's cron runs) at each time of its schedule, by default wrangler.toml's `* * * * *` (every
// minute; with GROUPQ_SCHEDULER_STAY_MS it keeps waking for due times until the next one).
// GROUPQ_CRON takes any cron-parser schedule, seconds too (`* * * * * *`: every second, as
// `npm run dev` runs it). A run still going when the next time comes is not doubled: that time
// is skipped, as no work would be lost (the running one ticks the same queues).
import { CronExpressionParser } from 'cron-parser';

/** wrangler.toml's [triggers] crons: the schedule a Worker's cron runs on. */
export const WORKER_CRON = '* * * * *';

export interface Scheduler {
  /** Stops the timer; resolves when a run under way has ended. */
  stop(): Promise<void>;
}

/** Whether `schedule` is one cron-parser reads; the error's words otherwise. */
export function checkCron(schedule: string): string | null {
  try {
    CronExpressionParser.parse(schedule);
    return null;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

/** Calls `run` at each time of `schedule` (UTC) until stopped; a failed run is `onError`'s, and the next time comes as usual. */
export function startScheduler(schedule: string, run: () => Promise<unknown>, onError: (error: unknown) => void): Scheduler {
  const times = CronExpressionParser.parse(schedule, { tz: 'UTC' });
  let timer: ReturnType<typeof setTimeout> | undefined;
  let running: Promise<void> | null = null;
  let stopped = false;
  const next = () => {
    if (stopped) return;
    // From now, not from the last time: a process that slept (a laptop's lid) does not run the missed ones.
    times.reset(new Date());
    const at = times.next().getTime();
    timer = setTimeout(fire, Math.max(0, at - Date.now()));
  };
  const fire = () => {
    if (running === null) {
      running = run()
        .then(() => {}, onError)
        .finally(() => {
          running = null;
        });
    }
    next();
  };
  next();
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
