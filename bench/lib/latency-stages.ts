// Where a job's enqueue-to-delivery time goes (npm run bench -- --latency): the latency run
// alone on its own stack, each job's way cut into stages by this process' clock, which the
// producer, the REST bridge and the endpoint share:
//   toRedis      POST /jobs sent -> the bridge received the Worker's enqueue call (the request
//                into workerd, the Worker's code before its Redis call)
//   redis        that call at the bridge: received -> answered (bridge and redis-server)
//   toEndpoint   answered -> the push arrived at the endpoint (back into workerd, the push out)
//   answer       answered -> the 201 back at the producer (for comparison; not in the latency)
// and, for the median jobs and the slowest 1%, how long each process of the stack waited for a
// CPU while the job was under way (bench/lib/run-queue.ts) and how long this process' garbage
// collector paused it. Also each process' CPU per job.
import os from 'node:os';
import { PerformanceObserver } from 'node:perf_hooks';
import type { ObservedRequest } from '../../scripts/rest-bridge.mjs';
import { type E2eConfig, type Percentiles, pacedEnqueues, percentiles, warmUp } from './e2e';
import { startE2eStack, waitDelivered, waitQuiet } from './e2e-stack';
import { round } from './redis-stats';
import { type RunQueueTimeline, watchRunQueue } from './run-queue';

const STAGES = ['toRedis', 'redis', 'toEndpoint', 'total', 'answer'] as const;
type Stage = (typeof STAGES)[number];

/** Means over a set of jobs: their stages, and the CPU waits and GC pauses inside them. */
export interface StageMeans {
  jobs: number;
  stagesMs: Record<Stage, number>;
  /** Per process (bench, redis-server, workerd): ms waiting for a CPU while the job was under way. */
  cpuWaitMs: Record<string, number>;
  /** ms this process was paused by its garbage collector while the job was under way. */
  benchGcMs: number;
}

export interface LatencyStages {
  jobs: number;
  ratePerSecond: number;
  loadAverage1m: { before: number; after: number };
  stagesMs: Record<Stage, Percentiles>;
  /** Jobs p45-p55 by latency. */
  median: StageMeans;
  /** The slowest 1% by latency. */
  slowest: StageMeans;
  /** ms on the CPU per job, per process (from the first send until all is quiet). */
  cpuMsPerJob: Record<string, number>;
}

type Times = Record<Stage, number> & { sent: number; arrived: number };

/** Each job's stages, matching the bridge's requests to jobs by the id among their arguments. */
function stagesOf(ids: string[], sentAt: Map<string, number>, answeredAt: Map<string, number>, arrivedAt: (id: string) => number, calls: ObservedRequest[]): Times[] {
  const firstCall = new Map<string, ObservedRequest>();
  for (const call of calls) {
    for (const arg of (call.body as unknown[]).flat()) {
      if (typeof arg === 'string' && sentAt.has(arg) && !firstCall.has(arg)) firstCall.set(arg, call);
    }
  }
  return ids.map((id) => {
    const call = firstCall.get(id);
    if (!call) throw new Error(`latency stages: no Redis call carried job ${id}`);
    const sent = sentAt.get(id)!;
    const arrived = arrivedAt(id);
    return {
      sent,
      arrived,
      toRedis: call.receivedAt - sent,
      redis: call.answeredAt - call.receivedAt,
      toEndpoint: arrived - call.answeredAt,
      total: arrived - sent,
      answer: answeredAt.get(id)! - call.answeredAt,
    };
  });
}

function meansOf(jobs: Times[], timeline: RunQueueTimeline | null, gcPauses: { start: number; end: number }[]): StageMeans {
  const mean = (value: (job: Times) => number) => round(jobs.reduce((sum, job) => sum + value(job), 0) / jobs.length, 1);
  const gcInside = (job: Times) => gcPauses.reduce((sum, gc) => sum + Math.max(0, Math.min(job.arrived, gc.end) - Math.max(job.sent, gc.start)), 0);
  return {
    jobs: jobs.length,
    stagesMs: Object.fromEntries(STAGES.map((stage) => [stage, mean((job) => job[stage])])) as Record<Stage, number>,
    cpuWaitMs: Object.fromEntries((timeline?.names ?? []).map((name) => [name, mean((job) => timeline!.waitMs(name, job.sent, job.arrived))])),
    benchGcMs: mean(gcInside),
  };
}

export async function runLatencyStages(config: E2eConfig, log: (line: string) => void): Promise<LatencyStages> {
  let calls: ObservedRequest[] = [];
  const stack = await startE2eStack(log, { observeBridge: (call) => calls.push(call) });
  try {
    await warmUp(stack, config, log);
    await waitQuiet(stack);
    const n = Math.round(config.latencyRatePerSecond * config.latencySeconds);
    const ids = Array.from({ length: n }, (_, i) => `l${i}`);
    stack.endpoint.reset();
    calls = [];
    const gcPauses: { start: number; end: number }[] = [];
    const gc = new PerformanceObserver((list) => {
      for (const entry of list.getEntries()) gcPauses.push({ start: entry.startTime, end: entry.startTime + entry.duration });
    });
    gc.observe({ entryTypes: ['gc'] });
    const watch = watchRunQueue();
    const before = os.loadavg()[0]!;
    log(`latency stages: ${n} single POST /jobs at ${config.latencyRatePerSecond}/s, load ${before.toFixed(2)}`);
    const { sentAt, answeredAt } = await pacedEnqueues(stack, config, ids);
    await waitDelivered(stack, ids, log);
    await waitQuiet(stack);
    const timeline = (await watch?.stop()) ?? null;
    gc.disconnect();

    const jobs = stagesOf(ids, sentAt, answeredAt, (id) => stack.endpoint.arrivals.get(id)!.at, calls);
    const byTotal = [...jobs].sort((a, b) => a.total - b.total);
    return {
      jobs: n,
      ratePerSecond: config.latencyRatePerSecond,
      loadAverage1m: { before: round(before, 2), after: round(os.loadavg()[0]!, 2) },
      stagesMs: Object.fromEntries(STAGES.map((stage) => [stage, percentiles(jobs.map((job) => job[stage]))])) as Record<Stage, Percentiles>,
      median: meansOf(byTotal.slice(Math.floor(n * 0.45), Math.ceil(n * 0.55)), timeline, gcPauses),
      slowest: meansOf(byTotal.slice(n - Math.ceil(n / 100)), timeline, gcPauses),
      cpuMsPerJob: Object.fromEntries(Object.entries(timeline?.cpuMs ?? {}).map(([name, ms]) => [name, round(ms / n, 2)])),
    };
  } finally {
    await stack.close();
  }
}

const STAGE_LABELS: Record<Stage, string> = {
  toRedis: 'sent -> Worker calls Redis',
  redis: 'Redis call (bridge + redis)',
  toEndpoint: 'Redis answer -> endpoint',
  total: 'latency (sent -> endpoint)',
  answer: 'Redis answer -> 201 back',
};

export function formatLatencyStages(result: LatencyStages): string {
  const cell = (value: number) => value.toFixed(1).padStart(9);
  const label = (text: string) => text.padEnd(34);
  const { median, slowest } = result;
  return [
    `latency stages: ${result.jobs} single POST /jobs at ${result.ratePerSecond}/s, load ${result.loadAverage1m.before} -> ${result.loadAverage1m.after}`,
    `${label('ms')}${'p50'.padStart(9)}${'p95'.padStart(9)}${'p99'.padStart(9)}${'max'.padStart(9)}`,
    ...STAGES.map((stage) => {
      const { p50, p95, p99, max } = result.stagesMs[stage];
      return `${label(STAGE_LABELS[stage])}${cell(p50)}${cell(p95)}${cell(p99)}${cell(max)}`;
    }),
    '',
    `${label('means, ms')}${'median 10%'.padStart(12)}${'slowest 1%'.padStart(12)}`,
    ...STAGES.map((stage) => `${label(STAGE_LABELS[stage])}${cell(median.stagesMs[stage]).padStart(12)}${cell(slowest.stagesMs[stage]).padStart(12)}`),
    ...Object.keys(median.cpuWaitMs).map((name) => `${label(`waiting for a CPU: ${name}`)}${cell(median.cpuWaitMs[name]!).padStart(12)}${cell(slowest.cpuWaitMs[name]!).padStart(12)}`),
    `${label('GC pauses: bench')}${cell(median.benchGcMs).padStart(12)}${cell(slowest.benchGcMs).padStart(12)}`,
    '',
    `CPU per job, ms: ${Object.entries(result.cpuMsPerJob).map(([name, ms]) => `${name} ${ms}`).join(', ') || 'not measured (no /proc schedstat)'}`,
  ].join('\n');
}
