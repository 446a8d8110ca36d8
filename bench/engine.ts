// groupq engine benchmark: throughput, Redis commands per job, REST requests per job, memory per
// waiting job, idle tick cost, the lone-job path, flow control's cost and accuracy, against a
// private redis-server + REST bridge with the production @upstash/redis client; then the same
// full path end to end through the Worker in bare Miniflare, pushing to a loopback endpoint
// (throughput, latency, costs per job), the same batch run through `groupq serve` on Redis over
// TCP (`nodeServer`), and the event streams' rows (issue 30: latency to a
// stream's reader on one Worker and across Workers, commands per job without and with a stream,
// 1,000 streams on one Worker).
//   npm run bench             readable report on stdout, progress on stderr
//   npm run bench -- --json   one JSON object on stdout, nothing else
//   npm run bench -- --scale  also the scale rows (bench/lib/scale.ts): ~7 minutes on 2 cores;
//                             --scale-quick for small sizes, GROUPQ_BENCH_SCALE='{"waitingJobs":[...]}'
//                             to override any size
//   npm run bench -- --latency  only the e2e latency run, cut into stages (bench/lib/latency-stages.ts);
//                             --rate=N sends N jobs/s instead of 200
//   npm run bench -- --bundle   only the Worker's bundle size and startup time (bench/lib/worker-bundle.ts)
//   npm run bench -- --events   only the event streams' rows (bench/lib/events.ts), ~2 minutes;
//                             GROUPQ_BENCH_EVENTS='{"subscribers":200,...}' to override any size
//   npm run bench -- --pool  only scale-out over a pool of 1, 2 and 3 databases, each capped at
//                             the same commands/s, one queue in 12 partitions, and a move of a
//                             partition of 100,000 jobs (bench/lib/pool.ts), ~4 minutes
//   npm run bench -- --worker-cpu  only workerd's CPU per job in the e2e batch run and the burst of
//                             GETs and cron runs while 1,000 jobs drain (bench/lib/burst.ts), ~1 minute
//   npm run bench -- --batch  only the ordered batches' rows (issue 31, bench/lib/batch.ts): a hot
//                             group's jobs/s by batch.maxSize, commands per job over 1,000 groups
//                             with and without batches, the order checker; ~2 minutes;
//                             GROUPQ_BENCH_BATCH='{"hotJobs":1000,...}' to override any size
//   npm run bench -- --node-server  only the e2e batch run through the Worker and then through
//                             `groupq serve` over TCP (bench/lib/node-server.ts), under a minute;
//                             GROUPQ_BENCH_NODE_SERVER='{"jobs":2000,...}' to override any size
// Either way the result is also written to bench/results/engine.json (engine-scale.json with
// --scale, engine-scale-quick.json with --scale-quick, engine-latency.json with --latency,
// engine-bundle.json with --bundle, engine-events.json with --events, engine-worker-cpu.json with --worker-cpu, engine-pool.json with --pool,
// engine-batch.json with --batch, engine-node-server.json with --node-server). The exit code is 1 when the bundle is over its budget.
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { E2E_CONFIG, E2E_DEFINITIONS, runE2e, runE2eThroughput, runNodeServer, runWorkerCpu } from './lib/e2e';
import { installFetchCounter } from './lib/fetch-counter';
import { type FlowResult, runFlow } from './lib/flow';
import { runIdle } from './lib/idle';
import { formatLatencyStages, runLatencyStages } from './lib/latency-stages';
import { runMemory } from './lib/memory';
import { formatPool, runPool } from './lib/pool';
import { serverInfo } from './lib/redis-stats';
import { formatNodeServer, formatReport, formatWorkerBundle, formatWorkerCpu } from './lib/report';
import { BUDGETS } from './lib/budgets';
import type { BenchConfig, BenchResult, MachineInfo } from './lib/result';
import { runScale, scaleSizes } from './lib/scale';
import { formatScale } from './lib/scale-report';
import { runSingleJob } from './lib/single-job';
import { startBenchStack, type BenchStack } from './lib/stack';
import { runThroughput } from './lib/throughput';
import { runHistoryBytes } from './lib/history';
import { runWait } from './lib/wait';
import { runScrape } from './lib/scrape';
import { type WorkerBundleResult, runWorkerBundle } from './lib/worker-bundle';
import { eventsConfig, runEvents } from './lib/events';
import { eventsHeadline } from './lib/events';
import { formatEvents } from './lib/events-report';
import { batchConfig, runBatch } from './lib/batch';
import { formatBatch } from './lib/batch-report';
import { sizesFrom } from './lib/workload';

const CONFIG: BenchConfig = {
  jobs: 20_000,
  groups: 1_000,
  payloadBytes: 100,
  batchSize: 500,
  producers: 4,
  reservers: 16,
  reserveBatch: 16,
  concurrency: 1_000,
  idleTicks: 100,
  singleJobIterations: 200,
  waitMs: 3_000,
  e2e: E2E_CONFIG,
  flow: {
    // 10 jobs per group: a batch of 500 adds one job to each group, as the throughput run's do.
    jobs: 5_000,
    groups: 500,
    // Multiples of max: the fastest drain meets the limit window after window.
    queueRate: { limit: { max: 20, periodMs: 1000 }, jobs: 160, groups: 80 },
    groupRate: { limit: { max: 5, periodMs: 1000 }, jobs: 100, groups: 4 },
    rateReservers: 4,
    dedupIds: 10_000,
  },
  events: eventsConfig(),
};
const args = process.argv.slice(2);
const json = args.includes('--json');
const quick = args.includes('--scale-quick');
const scale = quick || args.includes('--scale');
const latency = args.includes('--latency');
const bundleOnly = args.includes('--bundle');
const workerCpuOnly = args.includes('--worker-cpu');
const poolOnly = args.includes('--pool');
const eventsOnly = args.includes('--events');
const batchOnly = args.includes('--batch');
const nodeServerOnly = args.includes('--node-server');
const RESULT_FILE = path.join(
  'bench',
  'results',
  `engine${nodeServerOnly ? '-node-server' : batchOnly ? '-batch' : eventsOnly ? '-events' : poolOnly ? '-pool' : workerCpuOnly ? '-worker-cpu' : bundleOnly ? '-bundle' : latency ? '-latency' : scale ? (quick ? '-scale-quick' : '-scale') : ''}.json`,
);
const log = (line: string) => process.stderr.write(`bench: ${line}\n`);

async function upstashVersion(): Promise<string> {
  try {
    const pkg = JSON.parse(await readFile(path.join('node_modules', '@upstash', 'redis', 'package.json'), 'utf8')) as { version: string };
    return pkg.version;
  } catch {
    return 'unknown';
  }
}

async function machineInfo(stack: BenchStack): Promise<MachineInfo> {
  const server = await serverInfo(stack.admin);
  return {
    cpus: os.cpus().length,
    cpuModel: os.cpus()[0]?.model.trim() ?? 'unknown',
    totalMemoryMb: Math.round(os.totalmem() / 1024 / 1024),
    loadAverage1m: Math.round(os.loadavg()[0]! * 100) / 100,
    platform: `${os.platform()} ${os.release()} ${os.arch()}`,
    node: process.version,
    redis: server.version,
    redisAllocator: server.allocator,
    redisAppendonly: server.appendonly,
    upstashRedis: await upstashVersion(),
  };
}

/** The flow rows' headline figures (the rows themselves are under `flow`). */
function flowHeadline(flow: FlowResult): Pick<BenchResult, 'flowExtraCommandsPerJob' | 'rateLimitMaxStartsInWindow' | 'bytesPerRememberedId'> {
  const window = (run: FlowResult['queueRateLimit']) => ({ starts: run.maxStartsInWindow, max: run.limit.max });
  return {
    flowExtraCommandsPerJob: Object.fromEntries(
      flow.costs.slice(1).map((row) => [row.key, row.notMeasured ? null : row.extraCommandsPerJob]),
    ),
    rateLimitMaxStartsInWindow: { queue: window(flow.queueRateLimit), group: window(flow.groupRateLimit) },
    bytesPerRememberedId: flow.dedupMemory.measured ? flow.dedupMemory.bytesPerId : null,
  };
}

async function run(stack: BenchStack): Promise<BenchResult> {
  const startedAt = new Date();
  const t0 = performance.now();
  const fetches = installFetchCounter();
  try {
    const machine = await machineInfo(stack);
    // Memory first, on a server that has held nothing yet.
    const memory = await runMemory(stack, CONFIG, log);
    const throughput = await runThroughput(stack, CONFIG, fetches, log);
    const idle = await runIdle(stack, CONFIG.idleTicks, fetches, log);
    const singleJob = await runSingleJob(stack, CONFIG.singleJobIterations, CONFIG.reserveBatch, CONFIG.payloadBytes, fetches, log);
    const wait = await runWait(stack, CONFIG.waitMs, fetches, log);
    const scrape = await runScrape(stack, log);
    const history = await runHistoryBytes(stack, log);
    const flow = await runFlow(stack, { ...CONFIG, ...CONFIG.flow }, fetches, log);
    // Its own redis-server, bridge and Worker: nothing above is counted there.
    const { burst, ...e2e } = await runE2e(CONFIG.e2e, log);
    // The same warm-up and batch run through `groupq serve` over TCP, on a stack of its own.
    const nodeServer = await runNodeServer(CONFIG.e2e, log);
    // Stacks of their own too: the e2e run above never opened a stream.
    const events = await runEvents(CONFIG.events, log);
    const workerBundle = await runWorkerBundle(log);
    const { p50, p95, p99 } = e2e.latency.latencyMs;
    // Fresh queues on the same Redis (each deleted once drained), then stacks of their own.
    const scaled = scale ? await runScale(stack, scaleSizes(quick), CONFIG, CONFIG.e2e, fetches, log) : undefined;
    const idleRows = scaled?.idle.rows;
    return {
      benchmark: 'groupq-engine',
      startedAt: startedAt.toISOString(),
      elapsedMs: Math.round(performance.now() - t0),
      jobsPerSecond: throughput.jobsPerSecond,
      commandsPerJob: throughput.commandsPerJob,
      restRequestsPerJob: throughput.restRequestsPerJob,
      bytesPerWaitingJob: memory.bytesPerWaitingJob,
      idleCommandsPerTick: idle.empty.commandsPerTick,
      singleJobCommands: singleJob.api.commandsPerJob,
      waitCommandsPerSecond: wait.commandsPerSecond,
      waitFirstSecondCommands: wait.firstSecondCommands,
      historyBytes: history,
      ...flowHeadline(flow),
      e2eJobsPerSecond: e2e.throughput.jobsPerSecond,
      e2eLatencyMs: { p50, p95, p99 },
      e2eCommandsPerJob: e2e.throughput.commandsPerJob,
      e2eRestRequestsPerJob: e2e.throughput.restRequestsPerJob,
      singleJobE2eCommands: e2e.lone.commandsPerJob,
      singleJobWithCallbackE2eCommands: e2e.loneWithCallback.commandsPerJob,
      workerCpuMsPerJob: e2e.throughput.workerCpu.msPerJob,
      burst,
      ...eventsHeadline(events),
      ...(idleRows ? { idleCommandsPerPass: idleRows[idleRows.length - 1]!.commandsPerPass } : {}),
      workerBundleBytes: workerBundle.bytes,
      workerStartupMs: workerBundle.startup.medianMs,
      budgets: BUDGETS,
      config: CONFIG,
      machine,
      throughput,
      memory,
      idle,
      singleJob,
      wait,
      scrape,
      e2e,
      nodeServer,
      flow,
      events,
      workerBundle,
      ...(scaled ? { scale: scaled } : {}),
    };
  } finally {
    fetches.restore();
  }
}

async function writeResult(result: object, report: () => string) {
  const text = JSON.stringify(result, null, 2);
  await mkdir(path.dirname(RESULT_FILE), { recursive: true });
  await writeFile(RESULT_FILE, `${text}\n`);
  process.stdout.write(json ? `${JSON.stringify(result)}\n` : `${report()}\n`);
  log(`result written to ${RESULT_FILE}`);
}

/** The budget check that fails the run: a Worker bundle past its budget. */
function checkBundle(bundle: WorkerBundleResult) {
  if (bundle.bytes.minified <= BUDGETS.workerBundleMinifiedBytes) return;
  log(`OVER BUDGET: the Worker bundle is ${bundle.bytes.minified} bytes minified, the budget ${BUDGETS.workerBundleMinifiedBytes}`);
  process.exitCode = 1;
}

async function main() {
  // stdout carries the report (or the one JSON object) only: anything else that logs goes to stderr.
  console.log = console.error;
  console.info = console.error;
  if (nodeServerOnly) {
    const config = sizesFrom('GROUPQ_BENCH_NODE_SERVER', CONFIG.e2e);
    const startedAt = new Date().toISOString();
    const worker = await runE2eThroughput(config, 1, log);
    const nodeServer = await runNodeServer(config, log);
    const result = { benchmark: 'groupq-node-server', startedAt, config, worker: { runtime: E2E_DEFINITIONS.runtime, throughput: worker }, nodeServer };
    await writeResult(result, () => formatNodeServer(worker, nodeServer, config));
    return;
  }
  if (batchOnly) {
    const result = await runBatch(batchConfig(), log);
    await writeResult(result, () => formatBatch(result));
    return;
  }
  if (latency) {
    const rate = Number(args.find((arg) => arg.startsWith('--rate='))?.slice('--rate='.length) ?? CONFIG.e2e.latencyRatePerSecond);
    if (!(rate > 0)) throw new Error('--rate= takes the jobs per second, a number above 0');
    const result = await runLatencyStages({ ...CONFIG.e2e, latencyRatePerSecond: rate }, log);
    await writeResult(result, () => formatLatencyStages(result));
    return;
  }
  if (eventsOnly) {
    const startedAt = new Date().toISOString();
    const events = await runEvents(CONFIG.events, log);
    const result = { benchmark: 'groupq-events', startedAt, ...eventsHeadline(events), budgets: BUDGETS, ...events };
    await writeResult(result, () => formatEvents(events, BUDGETS));
    return;
  }
  if (poolOnly) {
    const result = await runPool(log);
    await writeResult(result, () => formatPool(result));
    return;
  }
  if (workerCpuOnly) {
    const startedAt = new Date().toISOString();
    const run = await runWorkerCpu(CONFIG.e2e, log);
    const result = { benchmark: 'groupq-worker-cpu', startedAt, workerCpuMsPerJob: run.throughput.workerCpu.msPerJob, ...run, budgets: BUDGETS, config: CONFIG.e2e };
    await writeResult(result, () => formatWorkerCpu(run, BUDGETS));
    return;
  }
  if (bundleOnly) {
    const result = { benchmark: 'groupq-worker-bundle', startedAt: new Date().toISOString(), budgets: BUDGETS, ...(await runWorkerBundle(log)) };
    await writeResult(result, () => formatWorkerBundle(result, BUDGETS));
    checkBundle(result);
    return;
  }
  const stack = await startBenchStack(log);
  const stop = (signal: NodeJS.Signals) => {
    log(`${signal}: stopping redis`);
    void stack.close().finally(() => process.exit(130));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  let result: BenchResult;
  try {
    result = await run(stack);
  } finally {
    await stack.close();
    process.removeListener('SIGINT', stop);
    process.removeListener('SIGTERM', stop);
  }
  await writeResult(result, () => [formatReport(result), formatEvents(result.events, result.budgets, result.e2eCommandsPerJob), ...(result.scale ? [formatScale(result.scale)] : [])].join('\n\n'));
  checkBundle(result.workerBundle);
}

main().catch((error: unknown) => {
  process.stderr.write(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 1;
});
