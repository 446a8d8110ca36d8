// Metric 1-3: enqueue `jobs` jobs with enqueueBatch from a few producers, then drain them with
// concurrent reservers that each loop settle(queue, outcomes of the previous batch, n), the way a
// dispatcher completes what it holds and reserves the next batch in one call. Redis commands
// (INFO commandstats, including those run inside scripts) and REST requests are counted per
// phase. The two phases are exported on their own for the scale rows (bench/lib/scale-engine.ts),
// which measure memory between them.
import { type Settlement, spotOf } from '../../src/core/engine/leases';
import type { BenchStack } from './stack';
import type { FetchCounter } from './fetch-counter';
import { type CommandCounts, addCounts, commandStats, perUnit, redisCpuMs, resetStats, round, totalCalls } from './redis-stats';
import { type BenchJob, inParallel, makeJobs, percentile } from './workload';

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
/** The queue the throughput runs use: no delivery (the reservers are the consumers), nothing kept. */
export const THROUGHPUT_QUEUE_CONFIG = { endpoint: 'http://127.0.0.1:9/jobs', concurrency: 1000, keepCompleted: 0 };

/** What one phase cost: its own window of Redis commands, REST requests and CPU. */
export interface PhaseCounters {
  ms: number;
  counts: CommandCounts;
  restRequests: number;
  cpuMs: { node: number; redis: number };
}

export interface DrainPhase extends PhaseCounters {
  settleCalls: number;
  emptySettles: number;
  /** Each settle call's round trip, sorted. */
  settleLatenciesMs: number[];
  orderViolations: number;
}

/** Runs `body` between CONFIG RESETSTAT and a read of the counters; `body` returns its own duration. */
async function counted<T extends { ms: number }>(stack: BenchStack, fetches: FetchCounter, body: () => Promise<T>): Promise<T & PhaseCounters> {
  await resetStats(stack.admin);
  const fetchesBefore = fetches.count;
  const nodeBefore = process.cpuUsage();
  const redisBefore = await redisCpuMs(stack.admin);
  const value = await body();
  const redisAfter = await redisCpuMs(stack.admin);
  const node = process.cpuUsage(nodeBefore);
  const restRequests = fetches.count - fetchesBefore;
  const counts = await commandStats(stack.admin);
  const cpuMs = { node: Math.round((node.user + node.system) / 1000), redis: Math.round(redisAfter - redisBefore) };
  return { ...value, counts, restRequests, cpuMs };
}

/**
 * Enqueues jobs 0 .. jobs-1 by batches from `producers` clients; each batch is built when sent.
 * `shape` adds fields to job i (an id, a priority: bench/lib/flow.ts).
 */
export async function enqueuePhase(
  stack: BenchStack,
  queue: string,
  options: ThroughputOptions,
  fetches: FetchCounter,
  shape: (job: BenchJob, i: number) => object = (job) => job,
): Promise<PhaseCounters> {
  const { jobs, groups, payloadBytes, batchSize, producers } = options;
  const firsts = Array.from({ length: Math.ceil(jobs / batchSize) }, (_, b) => b * batchSize);
  const engines = Array.from({ length: producers }, () => stack.engine());
  return counted(stack, fetches, async () => {
    const startedAt = performance.now();
    await inParallel(firsts, producers, async (first, lane) => {
      const batch = makeJobs(Math.min(batchSize, jobs - first), groups, payloadBytes, first).map((job, k) => shape(job, first + k));
      const results = await engines[lane]!.enqueueBatch(queue, batch);
      if (results.some((r) => r.state !== 'waiting' || r.duplicate)) throw new Error('enqueue: a job did not end up waiting');
    });
    return { ms: performance.now() - startedAt };
  });
}

/** Drains the queue with `reservers` clients looping settle(outcomes, reserveBatch); checks G2 and that `jobs` completed. */
export async function drainPhase(stack: BenchStack, queue: string, options: ThroughputOptions, fetches: FetchCounter): Promise<DrainPhase> {
  const { jobs, reservers, reserveBatch } = options;
  const engines = Array.from({ length: reservers }, () => stack.engine());
  const phase = await counted(stack, fetches, async () => {
    const startedAt = performance.now();
    const latencies: number[] = [];
    const lastUserIdOfGroup = new Map<string, number>();
    let settleCalls = 0;
    let emptySettles = 0;
    let completed = 0;
    let lost = 0;
    let orderViolations = 0;
    let lastCompletionAt = startedAt;
    await Promise.all(
      engines.map(async (engine) => {
        let outcomes: Settlement[] = [];
        // A drain ends when a settle finds nothing ready: whoever still holds a lease completes it
        // later and reserves that group's next job in the same call, so no job is left behind.
        for (;;) {
          const callStart = performance.now();
          const settled = await engine.settle(queue, outcomes, reserveBatch);
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
          outcomes = settled.jobs.map((job) => ({ kind: 'complete', id: job.id, lease: job.lease.token, spot: spotOf(job) }));
        }
      }),
    );
    if (completed !== jobs || lost !== 0) throw new Error(`drain: completed ${completed}/${jobs}, lost ${lost}`);
    // To the last completion: the final empty settles are not part of the work.
    const ms = lastCompletionAt - startedAt;
    return { ms, settleCalls, emptySettles, settleLatenciesMs: latencies.sort((a, b) => a - b), orderViolations };
  });
  // Outside the measured window: the queue must be empty.
  const { counts } = await stack.engine().getQueue(queue);
  if (Object.values(counts).some((n) => n !== 0)) throw new Error(`drain did not empty the queue: counts ${JSON.stringify(counts)}`);
  return phase;
}

export async function runThroughput(
  stack: BenchStack,
  options: ThroughputOptions,
  fetches: FetchCounter,
  log: (line: string) => void,
  queue = QUEUE,
): Promise<ThroughputResult> {
  const { jobs, groups, batchSize, producers, reservers, reserveBatch } = options;
  const setup = stack.engine();
  await setup.putQueue(queue, THROUGHPUT_QUEUE_CONFIG);
  log(`throughput: enqueue ${jobs} jobs over ${groups} groups (${Math.ceil(jobs / batchSize)} batches of ${batchSize}, ${producers} producers)`);
  const enqueue = await enqueuePhase(stack, queue, options, fetches);
  log(`throughput: drain with ${reservers} reservers, settle(outcomes, ${reserveBatch}) per loop`);
  const drain = await drainPhase(stack, queue, options, fetches);
  await setup.deleteQueue(queue);

  const total = addCounts(addCounts({}, enqueue.counts), drain.counts);
  const sorted = drain.settleLatenciesMs;
  // Enqueue start to enqueue end, then drain start to last completion: the counter reads between
  // the phases (~ms) are left out.
  const totalMs = enqueue.ms + drain.ms;
  return {
    jobsPerSecond: Math.round(jobs / (totalMs / 1000)),
    enqueueJobsPerSecond: Math.round(jobs / (enqueue.ms / 1000)),
    drainJobsPerSecond: Math.round(jobs / (drain.ms / 1000)),
    totalMs: Math.round(totalMs),
    enqueueMs: Math.round(enqueue.ms),
    drainMs: Math.round(drain.ms),
    commandsPerJob: round(totalCalls(total) / jobs, 3),
    enqueueCommandsPerJob: round(totalCalls(enqueue.counts) / jobs, 3),
    drainCommandsPerJob: round(totalCalls(drain.counts) / jobs, 3),
    commandsPerJobByCommand: perUnit(total, jobs),
    enqueueCommandsPerJobByCommand: perUnit(enqueue.counts, jobs),
    drainCommandsPerJobByCommand: perUnit(drain.counts, jobs),
    restRequestsPerJob: round((enqueue.restRequests + drain.restRequests) / jobs, 4),
    restRequests: { enqueue: enqueue.restRequests, drain: drain.restRequests },
    settleCalls: drain.settleCalls,
    emptySettles: drain.emptySettles,
    jobsPerSettle: round(jobs / drain.settleCalls, 2),
    settleLatencyMs: {
      p50: round(percentile(sorted, 50), 2),
      p95: round(percentile(sorted, 95), 2),
      p99: round(percentile(sorted, 99), 2),
      max: round(sorted[sorted.length - 1] ?? 0, 2),
    },
    cpuMs: { enqueue: enqueue.cpuMs, drain: drain.cpuMs },
    orderViolations: drain.orderViolations,
  };
}
