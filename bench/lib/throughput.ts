// Metric 1-3: enqueue `jobs` jobs with enqueueBatch from a few producers, then drain them with
// concurrent reservers that each loop settle(queue, outcomes of the previous batch, n), the way a
// dispatcher completes what it holds and reserves the next batch in one call. Redis commands
// (INFO commandstats, including those run inside scripts) and REST requests are counted over the
// whole run.
import type { Outcome } from '../../src/core/leases';
import type { BenchStack } from './stack';
import type { FetchCounter } from './fetch-counter';
import { type CommandCounts, commandStats, diffCounts, perUnit, redisCpuMs, resetStats, round, totalCalls } from './redis-stats';
import { chunk, inParallel, makeJobs, percentile } from './workload';

export interface ThroughputOptions {
  jobs: number;
  groups: number;
  payloadBytes: number;
  batchSize: number;
  producers: number;
  reservers: number;
  /** Jobs each settle call asks for. */
  reserveBatch: number;
}

export interface ThroughputResult {
  jobsPerSecond: number;
  enqueueJobsPerSecond: number;
  drainJobsPerSecond: number;
  totalMs: number;
  enqueueMs: number;
  drainMs: number;
  commandsPerJob: number;
  enqueueCommandsPerJob: number;
  drainCommandsPerJob: number;
  commandsPerJobByCommand: CommandCounts;
  enqueueCommandsPerJobByCommand: CommandCounts;
  drainCommandsPerJobByCommand: CommandCounts;
  restRequestsPerJob: number;
  restRequests: { enqueue: number; drain: number };
  settleCalls: number;
  /** Settle calls that got no job back (each reserver ends on one). */
  emptySettles: number;
  jobsPerSettle: number;
  settleLatencyMs: { p50: number; p95: number; p99: number; max: number };
  /**
   * CPU time per phase: this Node process (the clients and the in-process REST bridge) and
   * redis-server. On a small machine it shows which side bounds the rate.
   */
  cpuMs: { enqueue: { node: number; redis: number }; drain: { node: number; redis: number } };
  /** Jobs whose group's earlier job was leased after them (G2 check; must be 0). */
  orderViolations: number;
}

const QUEUE = 'bench-throughput';

export async function runThroughput(
  stack: BenchStack,
  options: ThroughputOptions,
  fetches: FetchCounter,
  log: (line: string) => void,
): Promise<ThroughputResult> {
  const { jobs, groups, payloadBytes, batchSize, producers, reservers, reserveBatch } = options;
  const admin = stack.admin;
  const setup = stack.engine();
  await setup.putQueue(QUEUE, { endpoint: 'http://127.0.0.1:9/jobs', concurrency: 1000, keepCompleted: 0 });
  const batches = chunk(makeJobs(jobs, groups, payloadBytes), batchSize);
  const producerEngines = Array.from({ length: producers }, () => stack.engine());
  const reserverEngines = Array.from({ length: reservers }, () => stack.engine());

  log(`throughput: enqueue ${jobs} jobs over ${groups} groups (${batches.length} batches of ${batchSize}, ${producers} producers)`);
  await resetStats(admin);
  const fetchesAtStart = fetches.count;
  const cpuAtStart = { node: process.cpuUsage(), redis: await redisCpuMs(admin) };
  const startedAt = performance.now();
  await inParallel(batches, producers, async (batch, lane) => {
    const results = await producerEngines[lane]!.enqueueBatch(QUEUE, batch);
    if (results.some((r) => r.state !== 'waiting' || r.duplicate)) throw new Error('enqueue: a job did not end up waiting');
  });
  const enqueuedAt = performance.now();
  const cpuAfterEnqueue = { node: process.cpuUsage(), redis: await redisCpuMs(admin) };
  const afterEnqueue = await commandStats(admin);
  const fetchesAfterEnqueue = fetches.count;

  log(`throughput: drain with ${reservers} reservers, settle(outcomes, ${reserveBatch}) per loop`);
  const drainStartedAt = performance.now();
  const latencies: number[] = [];
  const lastUserIdOfGroup = new Map<string, number>();
  let settleCalls = 0;
  let emptySettles = 0;
  let completed = 0;
  let lost = 0;
  let orderViolations = 0;
  let lastCompletionAt = drainStartedAt;
  await Promise.all(
    reserverEngines.map(async (engine) => {
      let outcomes: Outcome[] = [];
      // A drain ends when a settle finds nothing ready: whoever still holds a lease completes it
      // later and reserves that group's next job in the same call, so no job is left behind.
      for (;;) {
        const callStart = performance.now();
        const settled = await engine.settle(QUEUE, outcomes, reserveBatch);
        const callEnd = performance.now();
        settleCalls++;
        latencies.push(callEnd - callStart);
        for (const result of settled.results) {
          if (result.state === 'completed') completed++;
          else lost++;
        }
        if (outcomes.length > 0) lastCompletionAt = Math.max(lastCompletionAt, callEnd);
        for (const job of settled.jobs) {
          // Payload userIds grow with enqueue order inside a group: a lower one after a higher one
          // means a group ran out of order.
          const userId = (job.data as { userId: number }).userId;
          if ((lastUserIdOfGroup.get(job.group) ?? -1) >= userId) orderViolations++;
          lastUserIdOfGroup.set(job.group, userId);
        }
        if (settled.jobs.length === 0) {
          emptySettles++;
          return;
        }
        outcomes = settled.jobs.map((job) => ({ kind: 'complete', id: job.id, lease: job.lease.token }));
      }
    }),
  );
  const cpuAfterDrain = { node: process.cpuUsage(), redis: await redisCpuMs(admin) };
  const afterDrain = await commandStats(admin);
  const fetchesAfterDrain = fetches.count;
  const nodeCpuMs = (from: NodeJS.CpuUsage, to: NodeJS.CpuUsage) => Math.round((to.user - from.user + to.system - from.system) / 1000);

  // Outside the measured window: the queue must be empty and every job completed exactly once.
  const { counts } = await setup.getQueue(QUEUE);
  const leftOver = Object.entries(counts).filter(([, n]) => n !== 0);
  if (leftOver.length > 0 || completed !== jobs || lost !== 0) {
    throw new Error(`drain did not empty the queue: completed ${completed}/${jobs}, lost ${lost}, counts ${JSON.stringify(counts)}`);
  }
  await setup.deleteQueue(QUEUE);

  const enqueueCounts = afterEnqueue;
  const drainCounts = diffCounts(afterEnqueue, afterDrain);
  const sorted = latencies.sort((a, b) => a - b);
  // First enqueue to last completion; the drain-only rate leaves out the counter reads (~ms)
  // between the phases.
  const totalMs = lastCompletionAt - startedAt;
  const enqueueMs = enqueuedAt - startedAt;
  const drainMs = lastCompletionAt - drainStartedAt;
  const restEnqueue = fetchesAfterEnqueue - fetchesAtStart;
  const restDrain = fetchesAfterDrain - fetchesAfterEnqueue;
  return {
    jobsPerSecond: Math.round(jobs / (totalMs / 1000)),
    enqueueJobsPerSecond: Math.round(jobs / (enqueueMs / 1000)),
    drainJobsPerSecond: Math.round(jobs / (drainMs / 1000)),
    totalMs: Math.round(totalMs),
    enqueueMs: Math.round(enqueueMs),
    drainMs: Math.round(drainMs),
    commandsPerJob: round(totalCalls(afterDrain) / jobs, 3),
    enqueueCommandsPerJob: round(totalCalls(enqueueCounts) / jobs, 3),
    drainCommandsPerJob: round(totalCalls(drainCounts) / jobs, 3),
    commandsPerJobByCommand: perUnit(afterDrain, jobs),
    enqueueCommandsPerJobByCommand: perUnit(enqueueCounts, jobs),
    drainCommandsPerJobByCommand: perUnit(drainCounts, jobs),
    restRequestsPerJob: round((restEnqueue + restDrain) / jobs, 4),
    restRequests: { enqueue: restEnqueue, drain: restDrain },
    settleCalls,
    emptySettles,
    jobsPerSettle: round(jobs / settleCalls, 2),
    settleLatencyMs: {
      p50: round(percentile(sorted, 50), 2),
      p95: round(percentile(sorted, 95), 2),
      p99: round(percentile(sorted, 99), 2),
      max: round(sorted[sorted.length - 1] ?? 0, 2),
    },
    cpuMs: {
      enqueue: { node: nodeCpuMs(cpuAtStart.node, cpuAfterEnqueue.node), redis: Math.round(cpuAfterEnqueue.redis - cpuAtStart.redis) },
      drain: { node: nodeCpuMs(cpuAfterEnqueue.node, cpuAfterDrain.node), redis: Math.round(cpuAfterDrain.redis - cpuAfterEnqueue.redis) },
    },
    orderViolations,
  };
}
