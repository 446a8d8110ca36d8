// The scale rows measured through the Worker in Miniflare, each on a private redis-server:
//   idle     the cron trigger's whole scheduled() invocation over 1, 100, 1,000 idle queues
//            (queues created over the HTTP API, cumulatively on one stack; after a first pass,
//            as the cron would have run, so the measured passes see the steady state)
//   workers  the end-to-end batch run on 1 and 3 Worker instances (bench/lib/e2e.ts), a fresh
//            stack per row
import { type E2eConfig, runE2eThroughput } from './e2e';
import { measured, startE2eStack, type E2eStack } from './e2e-stack';
import { perUnit, round, totalCalls, type CommandCounts } from './redis-stats';
import { inParallel } from './workload';

export interface IdleRow {
  queues: number;
  /** Passes measured and averaged. */
  passes: number;
  commandsPerPass: number;
  restRequestsPerPass: number;
  commandsPerQueue: number;
  restRequestsPerQueue: number;
  commandsPerPassByCommand: CommandCounts;
  /** scheduled() fired to its end (waitUntil included), per pass. */
  passMs: number;
}

export interface WorkersRow {
  workers: number;
  jobs: number;
  producers: number;
  jobsPerSecond: number;
  enqueueJobsPerSecond: number;
  commandsPerJob: number;
  restRequestsPerJob: number;
  /** Cron runs fired because deliveries stalled (0 when the request drains did it all). */
  scheduledRuns: number;
  duplicates: number;
  orderViolations: number;
}

/** Creates queues idle-<from> .. idle-<to - 1> over the HTTP API, pushing to the stack's endpoint. */
async function createQueues(stack: E2eStack, from: number, to: number): Promise<void> {
  const names = Array.from({ length: to - from }, (_, i) => `idle-${from + i}`);
  await inParallel(names, 8, async (name) => {
    const res = await stack.api(`/v1/queues/${name}`, { method: 'PUT', json: { endpoint: stack.endpoint.url } });
    if (res.status !== 200) throw new Error(`scale, idle: PUT ${name} answered ${res.status}: ${await res.text()}`);
  });
}

export async function runIdleRows(sizes: { idleQueues: number[]; idlePasses: number }, log: (line: string) => void): Promise<IdleRow[]> {
  const rows: IdleRow[] = [];
  const passes = sizes.idlePasses;
  const stack = await startE2eStack(log);
  try {
    let created = 0;
    for (const queues of sizes.idleQueues) {
      await createQueues(stack, created, queues);
      created = queues;
      await stack.scheduled();
      log(`scale, idle: ${passes} cron passes over ${queues} idle queue(s)`);
      const { value: passMs, cost } = await measured(stack, async () => {
        const startedAt = performance.now();
        for (let i = 0; i < passes; i++) await stack.scheduled();
        return (performance.now() - startedAt) / passes;
      });
      if (stack.endpoint.order.length > 0) throw new Error('scale, idle: an idle queue delivered a job');
      const commandsPerPass = totalCalls(cost.commands) / passes;
      const restRequestsPerPass = cost.restRequests / passes;
      rows.push({
        queues,
        passes,
        commandsPerPass: round(commandsPerPass, 2),
        restRequestsPerPass: round(restRequestsPerPass, 2),
        commandsPerQueue: round(commandsPerPass / queues, 3),
        restRequestsPerQueue: round(restRequestsPerPass / queues, 3),
        commandsPerPassByCommand: perUnit(cost.commands, passes),
        passMs: round(passMs, 1),
      });
    }
  } finally {
    await stack.close();
  }
  return rows;
}

export async function runWorkersRows(
  sizes: { workers: number[]; workersJobs: number; workersProducers: number },
  e2e: E2eConfig,
  log: (line: string) => void,
): Promise<WorkersRow[]> {
  const rows: WorkersRow[] = [];
  const config = { ...e2e, jobs: sizes.workersJobs, producers: sizes.workersProducers };
  for (const workers of sizes.workers) {
    log(`scale, workers: the end-to-end batch run on ${workers} Worker instance(s)`);
    const t = await runE2eThroughput(config, workers, log);
    const left = Object.entries(t.countsAfter).filter(([, n]) => n !== 0);
    if (left.length > 0) throw new Error(`scale, workers: the queue was not empty afterwards: ${JSON.stringify(t.countsAfter)}`);
    rows.push({
      workers,
      jobs: t.jobs,
      producers: config.producers,
      jobsPerSecond: t.jobsPerSecond,
      enqueueJobsPerSecond: t.enqueueJobsPerSecond,
      commandsPerJob: t.commandsPerJob,
      restRequestsPerJob: t.restRequestsPerJob,
      scheduledRuns: t.scheduledRuns,
      duplicates: t.duplicates,
      orderViolations: t.orderViolations,
    });
  }
  return rows;
}
