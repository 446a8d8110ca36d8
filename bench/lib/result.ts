// The benchmark's result object: what `--json` prints and bench/results/engine.json holds.
import type { BUDGETS } from './budgets';
import type { BurstResult } from './burst';
import type { E2eConfig, E2eResult, NodeServerResult } from './e2e';
import type { EventsConfig, EventsResult } from './events';
import type { eventsHeadline } from './events';
import type { FlowConfig, FlowResult } from './flow';
import type { HistoryBytesResult } from './history';
import type { IdleResult } from './idle';
import type { MemoryResult } from './memory';
import type { ScaleResult } from './scale';
import type { ScrapeResult } from './scrape';
import type { SingleJobResult } from './single-job';
import type { ThroughputOptions, ThroughputResult } from './throughput';
import type { WaitResult } from './wait';
import type { WorkerBundleBytes, WorkerBundleResult } from './worker-bundle';

export interface BenchConfig extends ThroughputOptions {
  concurrency: number;
  idleTicks: number;
  singleJobIterations: number;
  /** How long the measured GET ?waitMs= waits (bench/lib/wait.ts). */
  waitMs: number;
  /** The end-to-end runs through the Worker (bench/lib/e2e.ts). */
  e2e: E2eConfig;
  /** Flow control's rows (bench/lib/flow.ts). */
  flow: FlowConfig;
  /** The event streams' rows (bench/lib/events.ts). */
  events: EventsConfig;
}

export interface MachineInfo {
  cpus: number;
  cpuModel: string;
  totalMemoryMb: number;
  /** Other work on the machine skews the rates (not the counts): the 1-minute load at start. */
  loadAverage1m: number;
  platform: string;
  node: string;
  redis: string;
  redisAllocator: string;
  redisAppendonly: boolean;
  upstashRedis: string;
}

export interface BenchResult {
  benchmark: 'groupq-engine';
  startedAt: string;
  elapsedMs: number;
  jobsPerSecond: number;
  commandsPerJob: number;
  restRequestsPerJob: number;
  bytesPerWaitingJob: number;
  /** The queue with no jobs; the other idle cases are under `idle`. */
  idleCommandsPerTick: number;
  /** The lone-job path with the plain API (enqueue, reserve(q, 1), complete). */
  singleJobCommands: number;
  /** GET job ?waitMs=: Redis commands per second of waiting per request after the first, beyond a plain GET's. */
  waitCommandsPerSecond: number;
  /** The same, in the wait's first second (it looks at the job 5 times). */
  waitFirstSecondCommands: number;
  /** Bytes the attempt history adds to a job's record: never run, failed after 1 and 10 attempts. */
  historyBytes: HistoryBytesResult;
  /** Through the Worker: jobs enqueued by batches, first request sent to last arrival at the endpoint. */
  e2eJobsPerSecond: number;
  /** Through the Worker: single enqueues at a steady rate, request sent to arrival at the endpoint. */
  e2eLatencyMs: { p50: number; p95: number; p99: number };
  /** Through the Worker, the batch run: Redis commands per job on the full path. */
  e2eCommandsPerJob: number;
  /** Through the Worker, the batch run: requests at the REST bridge per job. */
  e2eRestRequestsPerJob: number;
  /**
   * Through the Worker, a lone job: single enqueues to an idle queue, each completed by its
   * endpoint (the latency run's commands per job: at its pace every job is alone).
   */
  singleJobE2eCommands: number;
  /** The same lone job with a callbackUrl: its outcome callback recorded, sent and settled. */
  singleJobWithCallbackE2eCommands: number;
  /** Through the Worker, the batch run: CPU ms of every workerd process per job (bench/lib/workerd-cpu.ts). */
  workerCpuMsPerJob: number;
  /** Issue 20's burst: GETs and cron runs while 1,000 jobs drain (bench/lib/burst.ts). */
  burst: BurstResult;
  /** Issue 30: a job's `completed` from its change to a queue stream's reader, one Worker (ms). */
  eventLatencyMs: ReturnType<typeof eventsHeadline>['eventLatencyMs'];
  /** The same with the jobs on one Worker and the stream read from another (one hub for all). */
  eventCrossWorkerLatencyMs: ReturnType<typeof eventsHeadline>['eventCrossWorkerLatencyMs'];
  /** The e2e batch run's commands per job with no stream, and with one queue stream open. */
  eventCommandsPerJob: ReturnType<typeof eventsHeadline>['eventCommandsPerJob'];
  /** N queue streams on one Worker: workerd memory per stream, commands while idle, one event to the last. */
  eventSubscribers: ReturnType<typeof eventsHeadline>['eventSubscribers'];
  /** Flow control: each feature's extra commands per job against a default queue (null: not measured). */
  flowExtraCommandsPerJob: Record<string, number | null>;
  /** The most starts in any window of a rate limit's periodMs, against its max. */
  rateLimitMaxStartsInWindow: { queue: { starts: number; max: number }; group: { starts: number; max: number } };
  /** used_memory per id the dedup window remembers, or null when not measured. */
  bytesPerRememberedId: number | null;
  /** With --scale: Redis commands of one whole cron invocation over the largest idle row's queues (1,000). */
  idleCommandsPerPass?: number;
  /** The Worker as `wrangler deploy --minify` uploads it, and gzipped (bench/lib/worker-bundle.ts). */
  workerBundleBytes: WorkerBundleBytes;
  /** A new workerd loading the Worker and answering its first GET / (median, ms; bench/lib/worker-bundle.ts). */
  workerStartupMs: number;
  budgets: typeof BUDGETS;
  config: BenchConfig;
  machine: MachineInfo;
  throughput: ThroughputResult;
  memory: MemoryResult;
  idle: IdleResult;
  singleJob: SingleJobResult;
  wait: WaitResult;
  /** GET /metrics' cost per scrape by the number of queues (bench/lib/scrape.ts). */
  scrape: ScrapeResult;
  /** The burst is `burst` above. */
  e2e: Omit<E2eResult, 'burst'>;
  /** The e2e batch run again through `groupq serve` on Redis over TCP, on a stack of its own (bench/lib/node-server.ts). */
  nodeServer: NodeServerResult;
  flow: FlowResult;
  /** The event streams' rows (bench/lib/events.ts). */
  events: EventsResult;
  workerBundle: WorkerBundleResult;
  /** With --scale (bench/lib/scale.ts). */
  scale?: ScaleResult;
}
