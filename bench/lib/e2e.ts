// End-to-end figures through the Worker (bare Miniflare): producers enqueue over HTTP, the drains
// those requests start push every job to a loopback endpoint that answers 200 at once, and each
// completion goes back with settle. Two runs on one queue:
//   throughput  N jobs by POST /jobs/batch from a few producers; jobs/s from the first request
//               sent to the last job's arrival at the endpoint
//   latency     single POST /jobs at a steady rate (paced by a timer, not a closed loop);
//               latency = the job's arrival at the endpoint - when its enqueue request was sent
// Each run counts Redis commands (INFO commandstats, script-internal commands included) and REST
// requests at the bridge, from CONFIG RESETSTAT until nothing has moved for 500 ms.
// Bindings are the production defaults. That bounds the batch run's size: each request's drain
// stops after GROUPQ_MAX_SUBREQUESTS (1000: ~700 pushes and their settles), drains that find the
// queue at its concurrency end at once, so a burst delivers about concurrency / 6 drains x ~700
// jobs (~12,000 here) and the rest waits for the cron. The bench fires the cron when deliveries
// stall and reports how often it had to (scheduledRuns).
// runNodeServer: the same warm-up and batch run through `groupq serve` on Redis over TCP
// (node-server.ts), the `nodeServer` row beside the Worker's; its cron cannot be fired, only
// waited for (scheduledRuns then counts the minutes waited).
import { type BurstResult, runBurst } from './burst';
import { type E2eLone, type E2eLoneCost, loneRun, loneWithCallbackRun } from './e2e-lone';
import os from 'node:os';
import { type E2eStack, measured, startE2eStack, waitDelivered, waitQuiet, type PhaseCost } from './e2e-stack';
import { type CommandCounts, perUnit, round, totalCalls } from './redis-stats';
import type { WorkerdCpu } from './workerd-cpu';
import { chunk, inParallel, makePayload, percentile, sleep } from './workload';

export interface E2eConfig {
  jobs: number;
  groups: number;
  payloadBytes: number;
  /** Jobs per POST /jobs/batch. */
  batchSize: number;
  /** Concurrent batch producers (each waits for its answer before sending the next). */
  producers: number;
  /** The queue's concurrency (jobs in flight across groups). */
  concurrency: number;
  latencyRatePerSecond: number;
  latencySeconds: number;
  /** Jobs delivered before measuring: scripts loaded, the queue's first tick done, the isolate warm. */
  warmupJobs: number;
}

/** The bench's end-to-end runs (also the profiler's, bench/profile-worker.ts). */
export const E2E_CONFIG: E2eConfig = {
  // 10 jobs per group; 20,000 outgrow what the enqueue requests' drains can deliver within
  // their subrequest budgets (see the top of this file) and the rest waits for the cron.
  jobs: 10_000,
  groups: 1_000,
  payloadBytes: 100,
  batchSize: 100,
  producers: 4,
  concurrency: 100,
  latencyRatePerSecond: 200,
  latencySeconds: 10,
  warmupJobs: 200,
};

export const E2E_DEFINITIONS = {
  runtime: 'the Worker bundle in bare Miniflare (workerd) on 127.0.0.1, private redis-server (AOF on) + REST bridge, endpoint in the bench process answering 200 with an empty body',
  jobsPerSecond: 'jobs / (last job arrived at the endpoint - first batch request sent)',
  latencyMs: 'job arrived at the endpoint - its POST /jobs request was sent, at a steady rate',
  commandsPerJob: 'INFO commandstats calls (script-internal commands included, INFO/CONFIG excluded) from reset until quiet, / jobs',
  restRequestsPerJob: 'HTTP requests received by the REST bridge in the same window, / jobs',
} as const;

export interface Percentiles {
  p50: number;
  p95: number;
  p99: number;
  max: number;
}

export interface E2eCost {
  commandsPerJob: number;
  commandsPerJobByCommand: CommandCounts;
  restRequestsPerJob: number;
  restRequests: number;
  /** Cron runs fired because deliveries stalled with jobs left (0 when the drains did it all). */
  scheduledRuns: number;
  /** Deliveries of a job that had already arrived (retries, duplicates). */
  duplicates: number;
  /** Queue counts after the run, read outside the measured window: all 0 when nothing is left. */
  countsAfter: Record<string, number>;
}

export interface E2eThroughput extends E2eCost {
  jobs: number;
  jobsPerSecond: number;
  /** First request sent to last arrival. */
  totalMs: number;
  /** First request sent to last batch answered. */
  enqueueMs: number;
  enqueueJobsPerSecond: number;
  batchRequestMs: Percentiles;
  /** First arrivals of a group out of enqueue order (G2; must be 0). */
  orderViolations: number;
  /** Every workerd process's CPU from the first request until quiet (bench/lib/workerd-cpu.ts); with `groupq serve`, its process'. */
  workerCpu: WorkerdCpu;
}

export interface E2eLatency extends E2eCost {
  jobs: number;
  targetRatePerSecond: number;
  /** Jobs / (last send - first send). */
  achievedRatePerSecond: number;
  latencyMs: Percentiles;
  /** Sent to 201 received, for comparison: the delivery starts after the answer. */
  enqueueResponseMs: Percentiles;
  /** How late the timer sent its most late request (the pacing's own error). */
  maxSendLagMs: number;
}

export interface E2eResult {
  definitions: typeof E2E_DEFINITIONS;
  /** Rates depend on what else the machine runs: the 1-minute load when the e2e runs began. */
  loadAverage1m: number;
  throughput: E2eThroughput;
  latency: E2eLatency;
  lone: E2eLone;
  /** The same lone jobs, each with a callbackUrl: the outcome callback's cost per job. */
  loneWithCallback: E2eLoneCost;
  /** Issue 20's burst, with GETs and cron runs while it drains (bench/lib/burst.ts). */
  burst: BurstResult;
}

/** `npm run bench -- --worker-cpu`: the batch run's workerd CPU and the burst, on a stack of their own. */
export interface WorkerCpuResult {
  loadAverage1m: number;
  throughput: E2eThroughput;
  burst: BurstResult;
}

/** The same batch run through `groupq serve` on Redis over TCP, beside the Worker's (`nodeServer`). */
export interface NodeServerResult {
  runtime: string;
  loadAverage1m: number;
  /** The Worker's E2eThroughput, with the server process' CPU in place of workerd's. */
  throughput: Omit<E2eThroughput, 'workerCpu'> & { serverCpu: WorkerdCpu };
}

export const NODE_SERVER_RUNTIME =
  'one groupq serve process (node dist/server.js, @hono/node-server) on 127.0.0.1, the private redis-server (AOF on) over TCP (REDIS_URL), no REST bridge; its in-process cron on * * * * *; the same endpoint';

/** The runs' queue (bench/lib/events.ts opens its stream around the same runs). */
export const QUEUE = 'bench-e2e';
/** Lone jobs measured one after the other. */
const LONE_JOBS = 20;

export function percentiles(values: number[]): Percentiles {
  const sorted = [...values].sort((a, b) => a - b);
  return {
    p50: round(percentile(sorted, 50), 1),
    p95: round(percentile(sorted, 95), 1),
    p99: round(percentile(sorted, 99), 1),
    max: round(sorted[sorted.length - 1] ?? 0, 1),
  };
}

async function queueCounts(stack: E2eStack): Promise<Record<string, number>> {
  const res = await stack.api(`/v1/queues/${QUEUE}`);
  if (res.status !== 200) throw new Error(`e2e: GET queue answered ${res.status}: ${await res.text()}`);
  return ((await res.json()) as { counts: Record<string, number> }).counts;
}

async function costOf(stack: E2eStack, jobs: number, cost: PhaseCost, scheduledRuns: number): Promise<E2eCost> {
  return {
    commandsPerJob: round(totalCalls(cost.commands) / jobs, 3),
    commandsPerJobByCommand: perUnit(cost.commands, jobs),
    restRequestsPerJob: round(cost.restRequests / jobs, 4),
    restRequests: cost.restRequests,
    scheduledRuns,
    duplicates: stack.endpoint.duplicates,
    countsAfter: await queueCounts(stack),
  };
}

async function enqueueBatch(stack: E2eStack, jobs: unknown[]): Promise<void> {
  const res = await stack.api(`/v1/queues/${QUEUE}/jobs/batch`, { method: 'POST', json: { jobs } });
  const body = await res.text();
  if (res.status !== 201) throw new Error(`e2e: POST /jobs/batch answered ${res.status}: ${body.slice(0, 300)}`);
  const results = (JSON.parse(body) as { jobs: { state: string; duplicate?: true }[] }).jobs;
  if (results.length !== jobs.length || results.some((r) => r.duplicate)) throw new Error('e2e: a batch job was not created');
}

export async function warmUp(stack: E2eStack, config: E2eConfig, log: (line: string) => void): Promise<void> {
  const res = await stack.api(`/v1/queues/${QUEUE}`, {
    method: 'PUT',
    // The bench names its jobs to match arrivals; a producer's ids are also remembered for the
    // dedup window (the flow rows measure that), which these rows leave out.
    json: { endpoint: stack.endpoint.url, concurrency: config.concurrency, keepCompleted: 0, dedupWindowMs: 0 },
  });
  if (res.status !== 200) throw new Error(`e2e: PUT queue answered ${res.status}: ${await res.text()}`);
  log(`e2e: warm-up, ${config.warmupJobs} jobs`);
  const jobs = Array.from({ length: config.warmupJobs }, (_, i) => ({ id: `w${i}`, group: `warm:${i % 50}`, data: makePayload(i, config.payloadBytes) }));
  await enqueueBatch(stack, jobs.slice(0, jobs.length / 2));
  for (const job of jobs.slice(jobs.length / 2, jobs.length / 2 + 20)) {
    const one = await stack.api(`/v1/queues/${QUEUE}/jobs`, { method: 'POST', json: job });
    if (one.status !== 201) throw new Error(`e2e: POST /jobs answered ${one.status}: ${await one.text()}`);
  }
  await enqueueBatch(stack, jobs.slice(jobs.length / 2 + 20));
  await waitDelivered(stack, jobs.map((j) => j.id), log);
  await waitQuiet(stack);
}

export async function throughputRun(stack: E2eStack, config: E2eConfig, log: (line: string) => void): Promise<E2eThroughput> {
  const { jobs: n, groups, batchSize, producers, payloadBytes } = config;
  const jobs = Array.from({ length: n }, (_, i) => ({ id: `t${i}`, group: `user:${i % groups}`, data: makePayload(i, payloadBytes) }));
  const ids = jobs.map((job) => job.id);
  stack.endpoint.reset();
  log(`e2e throughput: ${n} jobs over ${groups} groups, POST /jobs/batch of ${batchSize} from ${producers} producers`);
  const batchMs: number[] = [];
  let startedAt = 0;
  let enqueuedAt = 0;
  let cpu: ReturnType<E2eStack['meterCpu']> | undefined;
  const { value: scheduledRuns, cost } = await measured(stack, async () => {
    cpu = stack.meterCpu();
    startedAt = performance.now();
    await inParallel(chunk(jobs, batchSize), producers, async (batch) => {
      const sent = performance.now();
      await enqueueBatch(stack, batch);
      batchMs.push(performance.now() - sent);
    });
    enqueuedAt = performance.now();
    return (await waitDelivered(stack, ids, log)).scheduledRuns;
  });
  // Read once measured() saw the stack quiet: the settles after the last arrival count too.
  const workerCpu = cpu!.stop(n);
  const lastArrival = Math.max(...ids.map((id) => stack.endpoint.arrivals.get(id)!.at));

  // G2 as the endpoint saw it: within a group, first arrivals in enqueue order (ids grow with it).
  const lastOfGroup = new Map<number, number>();
  const seen = new Set<string>();
  let orderViolations = 0;
  for (const id of stack.endpoint.order) {
    if (seen.has(id) || !id.startsWith('t')) continue;
    seen.add(id);
    const i = Number(id.slice(1));
    if ((lastOfGroup.get(i % groups) ?? -1) > i) orderViolations++;
    lastOfGroup.set(i % groups, i);
  }

  const totalMs = lastArrival - startedAt;
  const enqueueMs = enqueuedAt - startedAt;
  return {
    jobs: n,
    jobsPerSecond: Math.round(n / (totalMs / 1000)),
    totalMs: Math.round(totalMs),
    enqueueMs: Math.round(enqueueMs),
    enqueueJobsPerSecond: Math.round(n / (enqueueMs / 1000)),
    batchRequestMs: percentiles(batchMs),
    orderViolations,
    workerCpu,
    ...(await costOf(stack, n, cost, scheduledRuns)),
  };
}

/** What the paced single enqueues of the latency run saw, per job id (performance.now()). */
export interface PacedSends {
  sentAt: Map<string, number>;
  /** When the 201 came back. */
  answeredAt: Map<string, number>;
  maxSendLagMs: number;
  /** Jobs / (last send - first send). */
  achievedRatePerSecond: number;
}

/** Sends one POST /jobs per id at the configured rate (paced by a timer, not a closed loop). */
export async function pacedEnqueues(stack: E2eStack, config: E2eConfig, ids: string[]): Promise<PacedSends> {
  const intervalMs = 1000 / config.latencyRatePerSecond;
  const sentAt = new Map<string, number>();
  const answeredAt = new Map<string, number>();
  let maxSendLagMs = 0;
  const sends: Promise<void>[] = [];
  const t0 = performance.now() + 10;
  for (let i = 0; i < ids.length; i++) {
    const due = t0 + i * intervalMs;
    const wait = due - performance.now();
    if (wait > 0.5) await sleep(wait);
    const id = ids[i]!;
    const sent = performance.now();
    maxSendLagMs = Math.max(maxSendLagMs, sent - due);
    sentAt.set(id, sent);
    const job = { id, group: `lat:${i % config.groups}`, data: makePayload(i, config.payloadBytes) };
    sends.push(
      stack.api(`/v1/queues/${QUEUE}/jobs`, { method: 'POST', json: job }).then(async (res) => {
        const text = await res.text();
        if (res.status !== 201) throw new Error(`e2e: POST /jobs answered ${res.status}: ${text.slice(0, 300)}`);
        answeredAt.set(id, performance.now());
      }),
    );
  }
  await Promise.all(sends);
  const first = sentAt.get(ids[0]!)!;
  const last = sentAt.get(ids[ids.length - 1]!)!;
  return { sentAt, answeredAt, maxSendLagMs, achievedRatePerSecond: (ids.length - 1) / ((last - first) / 1000) };
}

async function latencyRun(stack: E2eStack, config: E2eConfig, log: (line: string) => void): Promise<E2eLatency> {
  const rate = config.latencyRatePerSecond;
  const n = Math.round(rate * config.latencySeconds);
  const ids = Array.from({ length: n }, (_, i) => `l${i}`);
  stack.endpoint.reset();
  log(`e2e latency: ${n} single POST /jobs at ${rate}/s over ${config.groups} groups`);
  const { value, cost } = await measured(stack, async () => {
    const sends = await pacedEnqueues(stack, config, ids);
    return { sends, scheduledRuns: (await waitDelivered(stack, ids, log)).scheduledRuns };
  });
  const { sentAt, answeredAt } = value.sends;
  const latencies = ids.map((id) => stack.endpoint.arrivals.get(id)!.at - sentAt.get(id)!);
  return {
    jobs: n,
    targetRatePerSecond: rate,
    achievedRatePerSecond: round(value.sends.achievedRatePerSecond, 1),
    latencyMs: percentiles(latencies),
    enqueueResponseMs: percentiles(ids.map((id) => answeredAt.get(id)! - sentAt.get(id)!)),
    maxSendLagMs: round(value.sends.maxSendLagMs, 1),
    ...(await costOf(stack, n, cost, value.scheduledRuns)),
  };
}

export async function runE2e(config: E2eConfig, log: (line: string) => void): Promise<E2eResult> {
  const loadAverage1m = round(os.loadavg()[0]!, 2);
  const stack = await startE2eStack(log);
  try {
    await warmUp(stack, config, log);
    const throughput = await throughputRun(stack, config, log);
    const latency = await latencyRun(stack, config, log);
    const lone = await loneRun(stack, LONE_JOBS, config.payloadBytes, log);
    const loneWithCallback = await loneWithCallbackRun(stack, LONE_JOBS, config.payloadBytes, log);
    const burst = await runBurst(stack, log);
    return { definitions: E2E_DEFINITIONS, loadAverage1m, throughput, latency, lone, loneWithCallback, burst };
  } finally {
    await stack.close();
  }
}

/** The batch run alone on a stack of `workers` Worker instances (separate workerd processes) sharing one Redis. */
export async function runE2eThroughput(config: E2eConfig, workers: number, log: (line: string) => void): Promise<E2eThroughput> {
  const stack = await startE2eStack(log, { workers });
  try {
    await warmUp(stack, config, log);
    return await throughputRun(stack, config, log);
  } finally {
    await stack.close();
  }
}

/** The warm-up and the batch run through one `groupq serve` over TCP, on a stack of its own. */
export async function runNodeServer(config: E2eConfig, log: (line: string) => void): Promise<NodeServerResult> {
  const loadAverage1m = round(os.loadavg()[0]!, 2);
  const stack = await startE2eStack(log, { runtime: 'node' });
  try {
    await warmUp(stack, config, log);
    const { workerCpu: serverCpu, ...throughput } = await throughputRun(stack, config, log);
    return { runtime: NODE_SERVER_RUNTIME, loadAverage1m, throughput: { ...throughput, serverCpu } };
  } finally {
    await stack.close();
  }
}

/** The batch run (its workerd CPU per job) and then the burst, on one stack: `--worker-cpu`. */
export async function runWorkerCpu(config: E2eConfig, log: (line: string) => void): Promise<WorkerCpuResult> {
  const loadAverage1m = round(os.loadavg()[0]!, 2);
  const stack = await startE2eStack(log);
  try {
    await warmUp(stack, config, log);
    const throughput = await throughputRun(stack, config, log);
    return { loadAverage1m, throughput, burst: await runBurst(stack, log) };
  } finally {
    await stack.close();
  }
}
