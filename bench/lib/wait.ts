// What a waiting read costs Redis: GET .../jobs/{id}?waitMs=N on a job that does not finish in
// time (the longest, so the dearest, wait), through the engine with the production client. The
// wait looks at the job with one HGET at 0, 100, 200, 400 and 800 ms, then once a second; its end
// is the one full read a plain GET makes, measured apart and subtracted. A wait of one second
// gives the fast start's cost, one of N ms the rest: `commandsPerSecond` is what waiting adds per
// second after the first, per request.
import type { BenchStack } from './stack';
import type { FetchCounter } from './fetch-counter';
import { type CommandCounts, commandStats, resetStats, round, totalCalls } from './redis-stats';

export interface WaitResult {
  waitMs: number;
  /** Every command of the waiting read, its final full read included. */
  commands: number;
  commandsByCommand: CommandCounts;
  /** A plain GET of the same job (no waitMs). */
  plainReadCommands: number;
  /** What a wait of one second adds to a plain GET: the fast start (the budget is 5). */
  firstSecondCommands: number;
  /** What waiting adds per second after the first: the budget is 1. */
  commandsPerSecond: number;
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
  const plain = totalCalls(await commandStats(stack.admin));

  const waitFor = async (ms: number) => {
    log(`wait: GET job ?waitMs=${ms} on a job that stays waiting`);
    await resetStats(stack.admin);
    const fetchesBefore = fetches.count;
    const job = await engine.waitForJob(queue, id, { waitMs: String(ms) });
    if (job.state !== 'waiting') throw new Error(`wait: the job is ${job.state}, not waiting`);
    return { counts: await commandStats(stack.admin), restRequests: fetches.count - fetchesBefore };
  };
  const first = totalCalls((await waitFor(1_000)).counts);
  const { counts, restRequests } = await waitFor(waitMs);
  await engine.deleteQueue(queue);

  return {
    waitMs,
    commands: totalCalls(counts),
    commandsByCommand: counts,
    plainReadCommands: plain,
    firstSecondCommands: first - plain,
    commandsPerSecond: round((totalCalls(counts) - first) / ((waitMs - 1_000) / 1000), 3),
    restRequests,
  };
}
