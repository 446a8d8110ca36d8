// Flow control's cost and accuracy (issue 10; docs/cost.md):
// - Redis commands per job of each feature: the throughput run's enqueue + drain (producers
//   enqueueBatch, reservers loop settle(outcomes, n)) on a queue with the feature on, against a
//   default queue measured the same way in the same run. Rate limits high enough never to throttle
//   show what each start pays.
// - Rate limit accuracy: jobs drained under a queue rate limit, then a group rate limit, with the
//   real clock; the most starts in any window of periodMs against `max`, and the rate achieved.
// - Memory of the dedup window: used_memory once 10,000 jobs with ids have completed (keepCompleted
//   0: only their remembered ids are left), and again after the window, with an engine whose clock
//   runs past it.
import { LEASE_GRACE_MS } from '../../src/protocol/delivery-body';
import { queueKeys } from '../../src/core/store/keys';
import type { Settlement } from '../../src/core/engine/leases';
import type { BenchStack } from './stack';
import type { FetchCounter } from './fetch-counter';
import { BUDGETS } from './budgets';
import { type CommandCounts, addCounts, keyBytes, perUnit, quietUsedMemory, round, totalCalls } from './redis-stats';
import { THROUGHPUT_QUEUE_CONFIG, type ThroughputOptions, drainPhase, enqueuePhase } from './throughput';
import { type BenchJob, makeJobs, sleep } from './workload';

export interface RateLimit {
  max: number;
  periodMs: number;
}

/** The flow rows' sizes (BenchConfig.flow); the drains otherwise run as the throughput run's. */
export interface FlowConfig {
  /** Jobs and groups of each commands-per-job row. */
  jobs: number;
  groups: number;
  queueRate: { limit: RateLimit; jobs: number; groups: number };
  groupRate: { limit: RateLimit; jobs: number; groups: number };
  /** Concurrent reservers of the accuracy runs. */
  rateReservers: number;
  /** Jobs with ids whose remembered ids the dedup memory row measures. */
  dedupIds: number;
}

export interface FlowOptions extends ThroughputOptions, FlowConfig {}

/** What a feature's run cost: commands per job, and the extra against the default queue's. */
export interface FlowCostRow {
  /** Short name: the row's key in the headline and its column in the breakdown. */
  key: string;
  name: string;
  queueConfig: object;
  jobs: string;
  commandsPerJob: number;
  enqueueCommandsPerJob: number;
  drainCommandsPerJob: number;
  /** commandsPerJob minus the default queue's (each job starts once: also per start). */
  extraCommandsPerJob: number;
  /** The budget for the extra, or null (the reference rows). */
  budget: number | null;
  jobsPerSecond: number;
  commandsPerJobByCommand: CommandCounts;
  /** Why the row's figures do not measure the feature (it is not in this build), or absent. */
  notMeasured?: string;
}

export interface RateAccuracy {
  limit: RateLimit;
  jobs: number;
  groups: number;
  /** Per queue, or per group (the worst group): the most starts in any window of periodMs. */
  maxStartsInWindow: number;
  /**
   * Starts per periodMs achieved: jobs * periodMs / (last start - first start + periodMs), which
   * is `max` exactly when the limit is met window after window (jobs a multiple of max).
   * For a group limit, the slowest group's.
   */
  achievedPerPeriod: number;
  spanMs: number;
  emptyReserves: number;
  ticks: number;
}

export type DedupMemory =
  | {
      measured: true;
      ids: number;
      idLength: number;
      /** used_memory added per remembered id once their jobs completed (nothing else of them kept). */
      bytesPerId: number;
      /** MEMORY USAGE of the dedup zset per id. */
      dedupKeyBytesPerId: number;
      /** MEMORY USAGE of the dedup zset once the window passed. */
      dedupKeyBytesAfterWindow: number;
      encoding: string;
      usedMemory: { before: number; remembered: number; afterWindow: number };
      /** Ids still remembered after the window (what ended the window's trim left). */
      rememberedAfterWindow: number;
      /** What trimmed them once the window passed: a tick, or the next job's end. */
      trimmedBy: string;
    }
  | { measured: false; reason: string };

export interface FlowResult {
  /** How often the accuracy runs' reservers retry after an empty reserve, and their ticker looks at the due index. */
  pollMs: number;
  jobs: number;
  groups: number;
  costs: FlowCostRow[];
  queueRateLimit: RateAccuracy;
  groupRateLimit: RateAccuracy;
  dedupMemory: DedupMemory;
}

const PRIORITIES = [-5, 0, 5];
/** Ids as long as the ones groupq draws (16 characters). */
const idOf = (i: number) => `order-${String(i).padStart(10, '0')}`;
const withId = (job: BenchJob, i: number) => ({ ...job, id: idOf(i) });
const NO_THROTTLE: RateLimit = { max: 1_000_000, periodMs: 1000 };
/** A group's rate limit is capped at 1000 starts a window; no group of the run starts that fast. */
const GROUP_NO_THROTTLE: RateLimit = { max: 1000, periodMs: 1000 };
/** How often the accuracy runs' reservers retry after an empty reserve, and their ticker looks at the due index. */
const POLL_MS = 20;
/** Ids the dedup window's row remembers before it is measured. */
const WARM_IDS = 100;
const NOT_IN_BUILD = 'the dedup window is not in this build: no id was remembered';

interface CostSpec {
  key: string;
  name: string;
  config: object;
  jobs: string;
  budget: number | null;
  shape?: (job: BenchJob, i: number) => object;
  /**
   * The dedup window's row: it must remember every id, and it already holds some before the
   * measured enqueue (as a queue in use does), so that the enqueue pays its lookup of known ids.
   */
  remembers?: boolean;
}

/** Enqueues `count` jobs with ids of their own and completes them (outside any measured window). */
async function rememberIds(stack: BenchStack, queue: string, count: number): Promise<void> {
  const engine = stack.engine();
  await engine.enqueueBatch(queue, Array.from({ length: count }, (_, i) => ({ group: `warm:${i}`, id: `warm-${i}` })));
  for (;;) {
    const { jobs } = await engine.reserve(queue, count);
    if (jobs.length === 0) return;
    await engine.settle(queue, jobs.map((job) => ({ kind: 'complete', id: job.id, lease: job.lease.token })), 0);
  }
}

const COST_SPECS: CostSpec[] = [
  { key: 'default', name: 'default queue', config: {}, jobs: 'no id, priority 0', budget: null },
  {
    key: 'groupConcurrency',
    name: 'groupConcurrency 4',
    config: { groupConcurrency: 4 },
    jobs: 'no id',
    budget: BUDGETS.groupConcurrencyExtraCommandsPerJob,
  },
  {
    key: 'priority',
    name: 'priority',
    config: {},
    jobs: 'priority -5, 0, 5 (a third each)',
    budget: BUDGETS.priorityExtraCommandsPerJob,
    shape: (job, i) => ({ ...job, priority: PRIORITIES[i % 3] }),
  },
  {
    key: 'rateLimit',
    name: 'rateLimit 1,000,000/s',
    config: { rateLimit: NO_THROTTLE },
    jobs: 'no id',
    budget: BUDGETS.rateLimitExtraCommandsPerStart,
  },
  {
    key: 'groupRateLimit',
    name: 'groupRateLimit 1,000/s',
    config: { groupRateLimit: GROUP_NO_THROTTLE },
    jobs: 'no id',
    budget: BUDGETS.rateLimitExtraCommandsPerStart,
  },
  // Ids without the window: what the window itself adds is the difference with the next row.
  { key: 'idsWithoutWindow', name: 'dedupWindowMs 0', config: { dedupWindowMs: 0 }, jobs: 'each with an id', budget: null, shape: withId },
  {
    key: 'dedupWindow',
    name: 'dedup window (default)',
    config: {},
    jobs: 'each with an id',
    budget: BUDGETS.dedupWindowExtraCommandsPerJob,
    shape: withId,
    remembers: true,
  },
];

/** One row, its extra left at 0 (runFlow sets it once the default row is known). */
async function costRow(stack: BenchStack, fetches: FetchCounter, options: ThroughputOptions, spec: CostSpec): Promise<FlowCostRow> {
  const queue = 'bench-flow-cost';
  const engine = stack.engine();
  await engine.putQueue(queue, { ...THROUGHPUT_QUEUE_CONFIG, ...spec.config });
  if (spec.remembers) await rememberIds(stack, queue, WARM_IDS);
  const enqueue = await enqueuePhase(stack, queue, options, fetches, spec.shape);
  const drain = await drainPhase(stack, queue, options, fetches);
  const remembered = Number(await stack.admin.call(['ZCARD', queueKeys(queue).dedup]));
  await engine.deleteQueue(queue);
  const total = addCounts(addCounts({}, enqueue.counts), drain.counts);
  const perJob = round(totalCalls(total) / options.jobs, 3);
  const row: FlowCostRow = {
    key: spec.key,
    name: spec.name,
    queueConfig: spec.config,
    jobs: spec.jobs,
    commandsPerJob: perJob,
    enqueueCommandsPerJob: round(totalCalls(enqueue.counts) / options.jobs, 3),
    drainCommandsPerJob: round(totalCalls(drain.counts) / options.jobs, 3),
    extraCommandsPerJob: 0,
    budget: spec.budget,
    jobsPerSecond: Math.round(options.jobs / ((enqueue.ms + drain.ms) / 1000)),
    commandsPerJobByCommand: perUnit(total, options.jobs),
  };
  return spec.remembers && remembered < options.jobs + WARM_IDS ? { ...row, notMeasured: NOT_IN_BUILD } : row;
}

/** The most of `times` (sorted) in any window [t, t + periodMs). */
function maxInWindow(times: number[], periodMs: number): number {
  let most = 0;
  for (let i = 0, j = 0; i < times.length; i++) {
    while (j < times.length && times[j]! < times[i]! + periodMs) j++;
    most = Math.max(most, j - i);
  }
  return most;
}

/**
 * A job's start by the engine's clock (the one the limits count with): its lease deadline less
 * the lease's length. (When its reservation came back is no measure: starts come in bursts of
 * `max` a window apart, and any jitter on the way back puts two bursts inside one window.)
 */
interface Start {
  group: string;
  at: number;
}

/**
 * Drains `jobs` with the real clock and `reservers` loops of settle(outcomes, n), each retrying
 * every POLL_MS after an empty reserve, while a ticker ticks the queue as soon as the due index
 * says it is due (looked at every POLL_MS), as the cron does: a group held by its rate limit
 * waits for a tick. Every job is completed by the reserver's next call.
 */
async function drainRateLimited(stack: BenchStack, queue: string, jobs: number, reservers: number, reserveBatch: number) {
  const engine = stack.engine();
  const starts: Start[] = [];
  let completed = 0;
  let emptyReserves = 0;
  let ticks = 0;
  const ticker = (async () => {
    while (completed < jobs) {
      if ((await engine.dueTags(Date.now(), 1000)).includes(queue)) {
        await engine.tick(queue);
        ticks++;
      }
      await sleep(POLL_MS);
    }
  })();
  await Promise.all(
    Array.from({ length: reservers }, async () => {
      const reserver = stack.engine();
      let outcomes: Settlement[] = [];
      while (completed < jobs) {
        const settled = await reserver.settle(queue, outcomes, reserveBatch);
        completed += settled.results.filter((result) => result.state === 'completed').length;
        for (const job of settled.jobs) starts.push({ group: job.group, at: job.lease.expiresAt - job.timeoutMs - LEASE_GRACE_MS });
        outcomes = settled.jobs.map((job) => ({ kind: 'complete', id: job.id, lease: job.lease.token }));
        if (settled.jobs.length === 0) {
          emptyReserves++;
          await sleep(POLL_MS);
        }
      }
    }),
  );
  await ticker;
  return { starts, emptyReserves, ticks };
}

async function rateAccuracy(stack: BenchStack, options: FlowOptions, scope: 'queue' | 'group', log: (line: string) => void): Promise<RateAccuracy> {
  const { limit, jobs, groups } = scope === 'queue' ? options.queueRate : options.groupRate;
  const queue = `bench-flow-${scope}-rate`;
  log(`flow: ${scope} rate limit ${limit.max} per ${limit.periodMs} ms, ${jobs} jobs over ${groups} groups, ${options.rateReservers} reservers, real clock`);
  const engine = stack.engine();
  await engine.putQueue(queue, { ...THROUGHPUT_QUEUE_CONFIG, [scope === 'queue' ? 'rateLimit' : 'groupRateLimit']: limit });
  await engine.enqueueBatch(queue, makeJobs(jobs, groups, options.payloadBytes));
  const { starts, emptyReserves, ticks } = await drainRateLimited(stack, queue, jobs, options.rateReservers, options.reserveBatch);
  await engine.deleteQueue(queue);

  // One run of starts per limited scope: the queue's, or each group's.
  const scopes = new Map<string, Start[]>();
  for (const start of starts) {
    const key = scope === 'queue' ? queue : start.group;
    if (!scopes.has(key)) scopes.set(key, []);
    scopes.get(key)!.push(start);
  }
  const runs = [...scopes.values()].map((list) => {
    const at = list.map((start) => start.at).sort((a, b) => a - b);
    const spanMs = at[at.length - 1]! - at[0]!;
    return {
      most: maxInWindow(at, limit.periodMs),
      spanMs,
      achieved: (list.length * limit.periodMs) / (spanMs + limit.periodMs),
    };
  });
  const slowest = runs.reduce((a, b) => (b.achieved < a.achieved ? b : a));
  return {
    limit,
    jobs,
    groups,
    maxStartsInWindow: Math.max(...runs.map((run) => run.most)),
    achievedPerPeriod: round(slowest.achieved, 2),
    spanMs: Math.round(slowest.spanMs),
    emptyReserves,
    ticks,
  };
}

async function dedupMemory(stack: BenchStack, options: FlowOptions, fetches: FetchCounter, log: (line: string) => void): Promise<DedupMemory> {
  const queue = 'bench-flow-dedup';
  const ids = options.dedupIds;
  const { admin } = stack;
  const key = queueKeys(queue).dedup;
  const run = { ...options, jobs: ids };
  log(`flow: dedup memory, ${ids} jobs with ids completed (keepCompleted 0), used_memory before, after and past the window`);
  const engine = stack.engine();
  await engine.putQueue(queue, THROUGHPUT_QUEUE_CONFIG); // dedupWindowMs: the default
  const before = await quietUsedMemory(admin);
  await enqueuePhase(stack, queue, run, fetches, withId);
  await drainPhase(stack, queue, run, fetches);
  const remembered = Number(await admin.call(['ZCARD', key]));
  if (remembered < ids) {
    await engine.deleteQueue(queue);
    return { measured: false, reason: NOT_IN_BUILD };
  }
  const held = await quietUsedMemory(admin);
  const dedupKeyBytes = await keyBytes(admin, key);
  const encoding = String(await admin.call(['OBJECT', 'ENCODING', key]));

  // Past the window (and any trim interval) by the engine's clock: a tick, else a job's end, trims.
  const { dedupWindowMs } = (await engine.getQueue(queue)).config;
  const later = stack.engine(() => Date.now() + dedupWindowMs + 3_600_000);
  await later.tick(queue);
  let trimmedBy = 'a tick';
  if (Number(await admin.call(['ZCARD', key])) > 0) {
    trimmedBy = "the next job's end";
    await later.enqueue(queue, { group: 'trim', id: 'trim' });
    const [job] = (await later.reserve(queue, 1)).jobs;
    await later.settle(queue, [{ kind: 'complete', id: job!.id, lease: job!.lease.token }], 0);
  }
  const rememberedAfterWindow = Number(await admin.call(['ZCARD', key]));
  const dedupKeyBytesAfterWindow = await keyBytes(admin, key);
  const afterWindow = await quietUsedMemory(admin);
  await engine.deleteQueue(queue);
  return {
    measured: true,
    ids,
    idLength: idOf(0).length,
    bytesPerId: Math.round((held.usedMemory - before.usedMemory) / ids),
    dedupKeyBytesPerId: round(dedupKeyBytes / ids, 1),
    dedupKeyBytesAfterWindow,
    encoding,
    usedMemory: { before: before.usedMemory, remembered: held.usedMemory, afterWindow: afterWindow.usedMemory },
    rememberedAfterWindow,
    trimmedBy,
  };
}

export async function runFlow(stack: BenchStack, options: FlowOptions, fetches: FetchCounter, log: (line: string) => void): Promise<FlowResult> {
  log(`flow: commands per job of each feature, ${options.jobs} jobs over ${options.groups} groups each, against a default queue`);
  const costs: FlowCostRow[] = [];
  for (const spec of COST_SPECS) {
    const row = await costRow(stack, fetches, options, spec);
    log(`flow: ${spec.name}: ${row.commandsPerJob} commands per job`);
    costs.push(row);
  }
  for (const row of costs) row.extraCommandsPerJob = round(row.commandsPerJob - costs[0]!.commandsPerJob, 3);
  return {
    pollMs: POLL_MS,
    jobs: options.jobs,
    groups: options.groups,
    costs,
    queueRateLimit: await rateAccuracy(stack, options, 'queue', log),
    groupRateLimit: await rateAccuracy(stack, options, 'group', log),
    dedupMemory: await dedupMemory(stack, options, fetches, log),
  };
}
