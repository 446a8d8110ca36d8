// Metric 5: what the cron's pass costs while a queue has nothing due: an empty queue, one holding
// only a future delayed job, one with only a long live lease. The pass reads the due index only
// (docs/delivery.md#how-jobs-get-delivered), so none of them adds a command to it.
import { Invocation } from '../../src/core/run/invocation';
import { DueTimes } from '../../src/core/run/due-times';
import { runDueQueues } from '../../src/core/run/runner';
import { createSigners } from '../../src/core/push/signing';
import type { BenchStack } from './stack';
import type { FetchCounter } from './fetch-counter';
import { type CommandCounts, commandStats, perUnit, resetStats, round, totalCalls } from './redis-stats';
import { fallbackLog } from '../../src/core/log';

export interface IdleCase {
  commandsPerTick: number;
  commandsPerTickByCommand: CommandCounts;
  restRequestsPerTick: number;
}

export type IdleResult = Record<'empty' | 'delayedJob' | 'activeLease', IdleCase>;

const HOUR_MS = 3_600_000;

export async function runIdle(stack: BenchStack, ticks: number, fetches: FetchCounter, log: (line: string) => void): Promise<IdleResult> {
  const engine = stack.engine();
  const admin = stack.admin;
  const prepare: Record<keyof IdleResult, (queue: string) => Promise<void>> = {
    empty: async () => {},
    delayedJob: async (queue) => {
      await engine.enqueue(queue, { group: 'g', data: { n: 1 }, delayMs: HOUR_MS });
    },
    activeLease: async (queue) => {
      await engine.enqueue(queue, { group: 'g', data: { n: 1 } });
      const { jobs } = await engine.reserve(queue, 1);
      if (jobs.length !== 1) throw new Error('idle: the job was not leased');
    },
  };

  const result = {} as IdleResult;
  for (const [name, setup] of Object.entries(prepare) as [keyof IdleResult, (queue: string) => Promise<void>][]) {
    const queue = `bench-idle-${name}`;
    await engine.putQueue(queue, { endpoint: 'http://127.0.0.1:9/jobs', timeoutMs: HOUR_MS });
    await setup(queue);
    // One tick first, as the cron would have run, so the measured ones see the steady state.
    await engine.tick(queue);
    log(`idle: ${ticks} ticks on a queue with ${name === 'empty' ? 'no jobs' : name === 'delayedJob' ? 'one delayed job (due in 1 h)' : 'one live lease (1 h)'}`);
    await resetStats(admin);
    const fetchesBefore = fetches.count;
    for (let i = 0; i < ticks; i++) {
      // One cron pass with nothing to wait for afterwards (its stay window ends now).
      const invocation = new Invocation(Date.now() + 1000, 1000);
      const delivery = { signers: createSigners(['whsec_MDEyMzQ1Njc4OWFiY2RlZg==']), publicUrl: 'http://127.0.0.1', now: Date.now };
      const results = await runDueQueues({ engine, invocation, delivery, log: fallbackLog }, new DueTimes(), Date.now());
      if (Object.keys(results).length > 0) throw new Error(`idle: the pass found work: ${JSON.stringify(results)}`);
    }
    const counts = await commandStats(admin);
    result[name] = {
      commandsPerTick: round(totalCalls(counts) / ticks, 3),
      commandsPerTickByCommand: perUnit(counts, ticks),
      restRequestsPerTick: round((fetches.count - fetchesBefore) / ticks, 3),
    };
    await engine.deleteQueue(queue);
  }
  return result;
}
