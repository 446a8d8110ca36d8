// Ordered batches (issue 31, docs/batches.md), measured through the Worker in bare Miniflare
// against a private redis-server + REST bridge, pushing to a loopback endpoint of this process
// (batch-endpoint.ts) that records every delivery:
//   hot group   ONE group, its jobs enqueued in order by POST /jobs/batch from one producer, an
//               endpoint that answers 200 after 50 ms: jobs/s at batch.maxSize 1, 10 and 100
//   commands    Redis commands per job (INFO commandstats, script-internal commands included,
//               enqueue included) at maxSize 10 over 1,000 groups of 10 jobs, the endpoint
//               answering at once; the same jobs on a queue without `batch` beside it, and
//               again with `batch` at a concurrency never reached (at 100, the e2e rows', a
//               reservation cuts a group's batch to the slots left: fewer jobs per delivery)
//   order       the order checker (batch-order.ts) over every delivery of the runs above
// One stack for all rows, a fresh queue per row, each warmed (scripts loaded, its first tick
// done) before it is measured. `npm run bench -- --batch`; GROUPQ_BENCH_BATCH='{"hotJobs":...}'
// overrides a size (see BATCH_CONFIG).
import os from 'node:os';
import { type BatchEndpoint, startBatchEndpoint } from './batch-endpoint';
import { type JobPlace, type OrderCheck, checkOrder, sizesOf, stalledOf, sumChecks } from './batch-order';
import { scriptCounter } from './batch-script-calls';
import { type E2eStack, measured, startE2eStack, waitDelivered, waitQuiet } from './e2e-stack';
import { type CommandCounts, perUnit, round, totalCalls } from './redis-stats';
import { inParallel, makePayload, sizesFrom } from './workload';

export const BATCH_ENV = 'GROUPQ_BENCH_BATCH';

export interface BatchConfig {
  payloadBytes: number;
  /**
   * The queues' concurrency (jobs in flight; at least the largest maxSize, which a batch's jobs
   * take), the e2e rows' (bench/lib/e2e.ts), against which "5.7 commands per job today" was measured.
   */
  concurrency: number;
  /**
   * Commands row, once more with this concurrency: never reached, so no batch is cut to the
   * slots left (at `concurrency` many are, and the figure moves with how many).
   */
  wideConcurrency: number;
  /** How long a batch's head waits for more: 0, each goes with what is ready. */
  maxWaitMs: number;
  /** Hot group: the endpoint's answer waits this long (ms). */
  hotDelayMs: number;
  /** Hot group: jobs at maxSize 10 and 100. */
  hotJobs: number;
  /** Hot group: jobs at maxSize 1 (one job per round trip: ~20 jobs/s at 50 ms). */
  hotJobsAtOne: number;
  /** Hot group: jobs per POST /jobs/batch (one producer: the group's order is the enqueue order). */
  hotEnqueueBatch: number;
  /** Commands row: batch.maxSize. */
  costMaxSize: number;
  costGroups: number;
  costJobsPerGroup: number;
  /** Commands row: each POST /jobs/batch holds this many groups' jobs, each group's all in one request. */
  costGroupsPerRequest: number;
  /** Commands row: concurrent producers. */
  costProducers: number;
  /** Jobs delivered on each queue before it is measured. */
  warmupJobs: number;
}

export const BATCH_CONFIG: BatchConfig = {
  payloadBytes: 100,
  concurrency: 100,
  wideConcurrency: 1_000,
  maxWaitMs: 0,
  hotDelayMs: 50,
  hotJobs: 5_000,
  hotJobsAtOne: 500,
  hotEnqueueBatch: 500,
  costMaxSize: 10,
  costGroups: 1_000,
  costJobsPerGroup: 10,
  costGroupsPerRequest: 10,
  costProducers: 4,
  warmupJobs: 20,
};

/** The hot group's rows, by batch.maxSize. */
export const HOT_MAX_SIZES = [100, 10, 1] as const;

/** Issue 31's goals. */
export const BATCH_GOALS = {
  hotJobsPerSecond: { 100: 1_000, 10: 150 } as Record<number, number>,
  commandsPerJob: 1.5,
  inversions: 0,
} as const;

export const BATCH_DEFINITIONS = {
  runtime:
    'the Worker bundle in bare Miniflare (workerd) on 127.0.0.1, private redis-server (AOF on) + REST bridge, ' +
    'an endpoint in the bench process answering 200 with an empty body (which completes every job of a batch)',
  jobsPerSecond: 'hot group: jobs / (the last delivery answered - the first POST /jobs/batch sent)',
  stalledMs:
    'gaps of 1 s or more with no delivery out: a drain reached its invocation\'s deadline (a request\'s drain reserves for 25 s) or budget and ' +
    'the rest waited for the cron, which the bench fires after 2 s without a delivery; counted in jobsPerSecond',
  commandsPerJob: 'INFO commandstats calls (script-internal commands included, INFO/CONFIG excluded) from reset until quiet, enqueue included, / jobs',
  callsPerJobByScript: 'EVALSHA/EVAL calls per job by script, as the REST bridge received them (the client\'s SHA-1 named by src/lua/scripts.generated.ts)',
  inversions:
    'a job delivered for the first time while a job ahead of it in its group had not completed (been answered) and was not ahead of it in the same batch',
  overlaps: 'a delivery of a group that arrived before the group\'s previous delivery was answered',
} as const;

export function batchConfig(): BatchConfig {
  return sizesFrom(BATCH_ENV, BATCH_CONFIG, 0);
}

/** What one measured run of a queue saw. */
export interface BatchRun {
  queue: string;
  /** The queue's batch setting (null: one job per delivery). */
  batch: { maxSize: number; maxWaitMs: number } | null;
  concurrency: number;
  jobs: number;
  groups: number;
  /** The endpoint's answer waited this long (ms). */
  endpointDelayMs: number;
  jobsPerSecond: number;
  /** First POST /jobs/batch sent to the last delivery answered. */
  totalMs: number;
  /**
   * Of totalMs, the gaps of STALL_GAP_MS or more with no delivery out: a drain that reached its
   * invocation's deadline (a request's reserves for 25 s) or budget left the rest to the cron,
   * which the bench fires after 2 s of nothing (waitDelivered; on Cloudflare, the next cron run
   * or enqueue).
   */
  stalledMs: number;
  /** jobs / (totalMs - stalledMs). */
  jobsPerSecondWithoutStalls: number;
  /** First POST /jobs/batch sent to the last one answered. */
  enqueueMs: number;
  deliveries: number;
  meanBatchSize: number;
  /** Deliveries of maxSize jobs (of 1 without batch). */
  fullBatches: number;
  /** Deliveries by their number of jobs. */
  batchSizes: Record<string, number>;
  commandsPerJob: number;
  commandsPerJobByCommand: CommandCounts;
  /** Script calls (EVALSHA/EVAL) per job by script; other REST commands under their own name. */
  callsPerJobByScript: CommandCounts;
  restRequestsPerJob: number;
  /** Cron runs fired because deliveries stalled with jobs left (counted in). */
  scheduledRuns: number;
  /** The queue's counts after the run (read outside the measured window). */
  countsAfter: Record<string, number>;
  order: OrderCheck;
  /** What a reader should know about the row (e.g. fewer jobs). */
  note?: string;
}

export interface BatchResult {
  benchmark: 'groupq-batch';
  startedAt: string;
  elapsedMs: number;
  definitions: typeof BATCH_DEFINITIONS;
  /** Rates depend on what else the machine runs: the 1-minute load when the rows began. */
  loadAverage1m: number;
  goals: typeof BATCH_GOALS;
  /** Hot group jobs/s by batch.maxSize. */
  batchHotGroupJobsPerSecond: Record<string, number>;
  /** Commands per job over 1,000 groups: with batch.maxSize 10, the same jobs without batch, and with batch at wideConcurrency. */
  batchCommandsPerJob: { batch: number; noBatch: number; wide: number };
  /** Inversions + overlaps over every run (must be 0). */
  batchOrderInversions: number;
  config: BatchConfig;
  hotGroup: BatchRun[];
  /** `wide`: the batch run again at wideConcurrency. */
  commands: { batch: BatchRun; noBatch: BatchRun; wide: BatchRun };
  /** The order checker over all the runs above. */
  order: OrderCheck;
}

interface BenchJob {
  id: string;
  group: string;
  data: unknown;
}

/** The group order of the jobs as the requests enqueue them: each group's index, request by request. */
function placesOf(requests: BenchJob[][]): Map<string, JobPlace> {
  const next = new Map<string, number>();
  const places = new Map<string, JobPlace>();
  for (const job of requests.flat()) {
    const index = next.get(job.group) ?? 0;
    next.set(job.group, index + 1);
    places.set(job.id, { group: job.group, index });
  }
  return places;
}

async function putQueue(stack: E2eStack, queue: string, concurrency: number, batch: BatchRun['batch']): Promise<void> {
  // keepCompleted 0 and no dedup window, as the e2e rows: the bench names its jobs to match
  // deliveries, and the dedup window's cost is the flow rows'.
  const json = { endpoint: stack.endpoint.url, concurrency, keepCompleted: 0, dedupWindowMs: 0, ...(batch && { batch }) };
  const res = await stack.api(`/v1/queues/${queue}`, { method: 'PUT', json });
  if (res.status !== 200) throw new Error(`batch: PUT queue answered ${res.status}: ${await res.text()}`);
}

async function enqueue(stack: E2eStack, queue: string, jobs: BenchJob[]): Promise<void> {
  const res = await stack.api(`/v1/queues/${queue}/jobs/batch`, { method: 'POST', json: { jobs } });
  const body = await res.text();
  if (res.status !== 201) throw new Error(`batch: POST /jobs/batch answered ${res.status}: ${body.slice(0, 300)}`);
  const results = (JSON.parse(body) as { jobs: { duplicate?: true }[] }).jobs;
  if (results.length !== jobs.length || results.some((r) => r.duplicate)) throw new Error('batch: a job was not created');
}

async function queueCounts(stack: E2eStack, queue: string): Promise<Record<string, number>> {
  const res = await stack.api(`/v1/queues/${queue}`);
  if (res.status !== 200) throw new Error(`batch: GET queue answered ${res.status}: ${await res.text()}`);
  return ((await res.json()) as { counts: Record<string, number> }).counts;
}

interface Bench {
  stack: E2eStack & { endpoint: BatchEndpoint };
  scriptCalls: ReturnType<typeof scriptCounter>;
  config: BatchConfig;
  log: (line: string) => void;
}

interface RunSpec {
  queue: string;
  batch: BatchRun['batch'];
  concurrency: number;
  requests: BenchJob[][];
  producers: number;
  delayMs: number;
  note?: string;
}

/** Creates and warms `spec.queue`, then enqueues its requests and waits until every job was answered and all is quiet. */
async function measureRun(b: Bench, spec: RunSpec): Promise<BatchRun> {
  const { stack, config, log } = b;
  const endpoint = stack.endpoint;
  await putQueue(stack, spec.queue, spec.concurrency, spec.batch);
  // Warm: scripts loaded, the isolate's paths and the queue's first drain done; not measured.
  endpoint.delayMs = 0;
  const warm = Array.from({ length: config.warmupJobs }, (_, i) => ({ id: `warm${i}`, group: `warm:${i % 10}`, data: makePayload(i, config.payloadBytes) }));
  if (warm.length > 0) {
    await enqueue(stack, spec.queue, warm);
    await waitDelivered(stack, warm.map((job) => job.id), log);
  }
  await waitQuiet(stack);
  endpoint.reset();
  endpoint.delayMs = spec.delayMs;

  const jobs = spec.requests.flat();
  const ids = jobs.map((job) => job.id);
  let startedAt = 0;
  let enqueuedAt = 0;
  const { value: scheduledRuns, cost } = await measured(stack, async () => {
    b.scriptCalls.reset();
    startedAt = performance.now();
    await inParallel(spec.requests, spec.producers, (request) => enqueue(stack, spec.queue, request));
    enqueuedAt = performance.now();
    return (await waitDelivered(stack, ids, log)).scheduledRuns;
  });
  const scriptCalls = { ...b.scriptCalls.counts };
  const places = placesOf(spec.requests);
  const records = endpoint.records.filter((record) => record.ids.some((id) => places.has(id)));
  const lastAnswer = Math.max(...records.map((record) => record.answeredAt ?? Number.NaN));
  const totalMs = lastAnswer - startedAt;
  const stalledMs = stalledOf(records);
  const n = jobs.length;
  const maxSize = spec.batch?.maxSize ?? 1;
  return {
    queue: spec.queue,
    batch: spec.batch,
    concurrency: spec.concurrency,
    jobs: n,
    groups: new Set(jobs.map((job) => job.group)).size,
    endpointDelayMs: spec.delayMs,
    jobsPerSecond: Math.round(n / (totalMs / 1000)),
    totalMs: Math.round(totalMs),
    stalledMs: Math.round(stalledMs),
    jobsPerSecondWithoutStalls: Math.round(n / ((totalMs - stalledMs) / 1000)),
    enqueueMs: Math.round(enqueuedAt - startedAt),
    deliveries: records.length,
    meanBatchSize: round(records.reduce((sum, record) => sum + record.ids.length, 0) / Math.max(1, records.length), 2),
    fullBatches: records.filter((record) => record.ids.length === maxSize).length,
    batchSizes: sizesOf(records),
    commandsPerJob: round(totalCalls(cost.commands) / n, 3),
    commandsPerJobByCommand: perUnit(cost.commands, n),
    callsPerJobByScript: perUnit(scriptCalls, n),
    restRequestsPerJob: round(cost.restRequests / n, 4),
    scheduledRuns,
    countsAfter: await queueCounts(stack, spec.queue),
    order: checkOrder(records, places),
    ...(spec.note !== undefined && { note: spec.note }),
  };
}

/** One group, `n` jobs in order, `perRequest` to a POST. */
function hotRequests(tag: string, n: number, perRequest: number, payloadBytes: number): BenchJob[][] {
  const requests: BenchJob[][] = [];
  for (let i = 0; i < n; i += perRequest) {
    requests.push(
      Array.from({ length: Math.min(perRequest, n - i) }, (_, k) => ({ id: `${tag}-${i + k}`, group: 'hot', data: makePayload(i + k, payloadBytes) })),
    );
  }
  return requests;
}

/** `groups` groups of `perGroup` jobs, `groupsPerRequest` whole groups to a POST, each group's jobs in order. */
function spreadRequests(tag: string, c: BatchConfig): BenchJob[][] {
  const requests: BenchJob[][] = [];
  for (let g = 0; g < c.costGroups; g += c.costGroupsPerRequest) {
    const request: BenchJob[] = [];
    for (let h = g; h < Math.min(c.costGroups, g + c.costGroupsPerRequest); h++) {
      for (let k = 0; k < c.costJobsPerGroup; k++) request.push({ id: `${tag}-${h}-${k}`, group: `user:${h}`, data: makePayload(h * c.costJobsPerGroup + k, c.payloadBytes) });
    }
    requests.push(request);
  }
  return requests;
}

async function hotGroupRow(b: Bench, maxSize: number): Promise<BatchRun> {
  const c = b.config;
  const n = maxSize === 1 ? c.hotJobsAtOne : c.hotJobs;
  const note = n === c.hotJobs ? undefined : `${n} jobs, not ${c.hotJobs}: at one job per round trip they take ~${Math.round(n / 20)} s`;
  b.log(`batch: hot group, maxSize ${maxSize}, ${n} jobs, the endpoint answering after ${c.hotDelayMs} ms`);
  return measureRun(b, {
    queue: `bench-batch-hot-${maxSize}`,
    batch: { maxSize, maxWaitMs: c.maxWaitMs },
    concurrency: c.concurrency,
    requests: hotRequests(`h${maxSize}`, n, c.hotEnqueueBatch, c.payloadBytes),
    producers: 1,
    delayMs: c.hotDelayMs,
    note,
  });
}

async function commandsRow(b: Bench, batch: BatchRun['batch'], concurrency: number): Promise<BatchRun> {
  const c = b.config;
  const tag = `${batch ? `c${batch.maxSize}` : 'c0'}-${concurrency}`;
  b.log(`batch: commands per job, ${batch ? `maxSize ${batch.maxSize}` : 'no batch'}, concurrency ${concurrency}, ${c.costGroups} groups x ${c.costJobsPerGroup} jobs`);
  return measureRun(b, { queue: `bench-batch-cost-${tag}`, batch, concurrency, requests: spreadRequests(tag, c), producers: c.costProducers, delayMs: 0 });
}

export async function runBatch(config: BatchConfig, log: (line: string) => void): Promise<BatchResult> {
  const startedAt = new Date();
  const t0 = performance.now();
  const loadAverage1m = round(os.loadavg()[0]!, 2);
  const scriptCalls = scriptCounter();
  const stack = await startE2eStack(log, { observeBridge: (request) => scriptCalls.observe(request) });
  const endpoint = await startBatchEndpoint();
  try {
    const b: Bench = { stack: { ...stack, endpoint }, scriptCalls, config, log };
    const noBatch = await commandsRow(b, null, config.concurrency);
    const costBatch = { maxSize: config.costMaxSize, maxWaitMs: config.maxWaitMs };
    const batch = await commandsRow(b, costBatch, config.concurrency);
    const wide = await commandsRow(b, costBatch, config.wideConcurrency);
    const hotGroup: BatchRun[] = [];
    for (const maxSize of HOT_MAX_SIZES) hotGroup.push(await hotGroupRow(b, maxSize));
    const order = sumChecks([noBatch, batch, wide, ...hotGroup].map((run) => run.order));
    return {
      benchmark: 'groupq-batch',
      startedAt: startedAt.toISOString(),
      elapsedMs: Math.round(performance.now() - t0),
      definitions: BATCH_DEFINITIONS,
      loadAverage1m,
      goals: BATCH_GOALS,
      batchHotGroupJobsPerSecond: Object.fromEntries(hotGroup.map((run) => [String(run.batch!.maxSize), run.jobsPerSecond])),
      batchCommandsPerJob: { batch: batch.commandsPerJob, noBatch: noBatch.commandsPerJob, wide: wide.commandsPerJob },
      batchOrderInversions: order.inversions + order.overlaps,
      config,
      hotGroup,
      commands: { batch, noBatch, wide },
      order,
    };
  } finally {
    await endpoint.close();
    await stack.close();
  }
}
