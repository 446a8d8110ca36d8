// What a waiting read costs Redis: GET .../jobs/{id}?waitMs=N on a job that does not finish in
// time (the longest, so the dearest, wait), through the engine with the production client. The
// wait itself polls one HGET a second; its end is the one full read a plain GET makes, measured
// apart and subtracted, so `commandsPerSecond` is what waiting adds per second per request.
import type { BenchStack } from './stack';
import type { FetchCounter } from './fetch-counter';
import { type CommandCounts, commandStats, diffCounts, resetStats, round, totalCalls } from './redis-stats';

export interface WaitResult {
  waitMs: number;
  /** Every command of the waiting read, its final full read included. */
  commands: number;
  commandsByCommand: CommandCounts;
  /** A plain GET of the same job (no waitMs). */
  plainReadCommands: number;
  /** (commands - plainReadCommands) per second of waiting: the budget is 1. */
  commandsPerSecond: number;
  /** What waiting adds, per command (a plain read's commands taken out). */
  commandsPerSecondByCommand: CommandCounts;
  restRequests: number;
}

export async function runWait(stack: BenchStack, waitMs: number, fetches: FetchCounter, log: (line: string) => void): Promise<WaitResult> {
  const engine = stack.engine();
  const queue = 'bench-wait';
  await engine.putQueue(queue, { endpoint: 'http://127.0.0.1:9/jobs' });
  await engine.pauseQueue(queue);
  const { id } = await engine.enqueue(queue, { group: 'g', data: { n: 1 } });

  await resetStats(stack.admin);
  await engine.getJob(queue, id);
  const plain = await commandStats(stack.admin);

  log(`wait: GET job ?waitMs=${waitMs} on a job that stays waiting`);
  await resetStats(stack.admin);
  const fetchesBefore = fetches.count;
  const job = await engine.waitForJob(queue, id, { waitMs: String(waitMs) });
  const restRequests = fetches.count - fetchesBefore;
  const counts = await commandStats(stack.admin);
  if (job.state !== 'waiting') throw new Error(`wait: the job is ${job.state}, not waiting`);
  await engine.deleteQueue(queue);

  const seconds = waitMs / 1000;
  const added = diffCounts(plain, counts);
  return {
    waitMs,
    commands: totalCalls(counts),
    commandsByCommand: counts,
    plainReadCommands: totalCalls(plain),
    commandsPerSecond: round((totalCalls(counts) - totalCalls(plain)) / seconds, 3),
    commandsPerSecondByCommand: Object.fromEntries(Object.entries(added).map(([name, calls]) => [name, round(calls / seconds, 3)])),
    restRequests,
  };
}
