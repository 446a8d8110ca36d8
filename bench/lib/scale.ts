// `npm run bench -- --scale`: how the figures move as the work grows. Four groups of rows, each
// measured on this machine: groups (same jobs over more groups), waiting jobs (enqueue, then
// drain, a bigger backlog each row), idle cron passes (more idle queues), Worker instances (the
// end-to-end batch run on one or several workerd processes). Each group says whether it is flat.
// Only the engine's public API and the Worker's HTTP API and cron trigger are used.
import os from 'node:os';
import type { E2eConfig } from './e2e';
import type { FetchCounter } from './fetch-counter';
import { round } from './redis-stats';
import { type GroupsRow, type WaitingRow, runGroupsRows, runWaitingRows } from './scale-engine';
import { type IdleRow, type WorkersRow, runIdleRows, runWorkersRows } from './scale-worker';
import type { BenchStack } from './stack';
import type { ThroughputOptions } from './throughput';

export interface ScaleSizes {
  /** Jobs of each groups row (the same for every row). */
  groupsJobs: number;
  /** The groups rows: jobs spread round-robin over this many groups. */
  groups: number[];
  /** The waiting-jobs rows: this many jobs waiting at once, then drained. */
  waitingJobs: number[];
  /**
   * Jobs per group in the waiting-jobs rows (groups = jobs / this), so every row keeps the same
   * shape: Redis stores a sorted set of up to 128 members compactly (listpack) and bigger ones as
   * a skiplist, so bytes per job depend on jobs per group, not on the total.
   */
  waitingJobsPerGroup: number;
  /** The idle rows: this many idle queues (created cumulatively on one stack; ascending). */
  idleQueues: number[];
  /** Cron passes measured per idle row (averaged). */
  idlePasses: number;
  /** The Worker rows: this many Worker instances behind one round-robin client. */
  workers: number[];
  /** Jobs of each Worker row. */
  workersJobs: number;
  /** Concurrent batch producers of each Worker row (the same for every row). */
  workersProducers: number;
}

export const SCALE_FULL: ScaleSizes = {
  groupsJobs: 100_000,
  groups: [10, 1_000, 100_000],
  waitingJobs: [1_000, 100_000, 1_000_000],
  waitingJobsPerGroup: 100,
  idleQueues: [1, 100, 1_000],
  idlePasses: 3,
  workers: [1, 3],
  workersJobs: 10_000,
  workersProducers: 6,
};

/** `--scale-quick`: the same rows, small (the idle rows stay full size: they take seconds). */
export const SCALE_QUICK: ScaleSizes = {
  ...SCALE_FULL,
  groupsJobs: 5_000,
  groups: [10, 100, 1_000],
  waitingJobs: [1_000, 5_000, 20_000],
  idlePasses: 2,
  workersJobs: 2_000,
};

/** Env var with a JSON object of ScaleSizes fields that override the preset, e.g. '{"waitingJobs":[1000,10000]}'. */
export const SIZES_ENV = 'GROUPQ_BENCH_SCALE';

export function scaleSizes(quick: boolean, override = process.env[SIZES_ENV]): ScaleSizes {
  const sizes: ScaleSizes = { ...(quick ? SCALE_QUICK : SCALE_FULL) };
  if (!override) return sizes;
  const given = JSON.parse(override) as Record<string, unknown>;
  for (const [key, value] of Object.entries(given)) {
    const current = (sizes as unknown as Record<string, unknown>)[key];
    const ok = Array.isArray(current)
      ? Array.isArray(value) && value.length > 0 && value.every((n) => Number.isInteger(n) && n > 0)
      : Number.isInteger(value) && (value as number) > 0;
    if (current === undefined || !ok) throw new Error(`${SIZES_ENV}: ${key} must be ${Array.isArray(current) ? 'a list of positive integers' : 'a positive integer'} (one of ${Object.keys(sizes).join(', ')})`);
    (sizes as unknown as Record<string, unknown>)[key] = value;
  }
  sizes.idleQueues = [...sizes.idleQueues].sort((a, b) => a - b);
  return sizes;
}

export const FLAT_TOLERANCE = 0.2;
export const FLAT_RULE =
  `flat: no row more than ${FLAT_TOLERANCE * 100}% worse than the smallest case (the first row): a cost (commands, ` +
  'REST requests, bytes) no more than 20% above it, a rate (jobs/s) no more than 20% below it; worse = that largest ' +
  'move the wrong way; spread = max |row - first row| / first row, either way; ratio = last row / first row';

export interface Flatness {
  flat: boolean;
  /** The largest move the wrong way, as a fraction of the first row. */
  worse: number;
  spread: number;
  ratio: number;
}

/** `values` in row order, the smallest measured case first; `rate` when higher is better. */
export function flatness(values: number[], rate: boolean): Flatness {
  const base = values[0]!;
  const moves = values.map((v) => (base === 0 ? (v === 0 ? 0 : Infinity) : (v - base) / base));
  const spread = Math.max(...moves.map(Math.abs));
  const worse = Math.max(0, ...moves.map((move) => (rate ? -move : move)));
  const ratio = base === 0 ? 0 : values[values.length - 1]! / base;
  return { flat: worse <= FLAT_TOLERANCE, worse: round(worse, 3), spread: round(spread, 3), ratio: round(ratio, 3) };
}

export interface ScaleGroup<Row, Metric extends keyof Row> {
  /** The 1-minute load average when the group began: other work on the machine skews rates. */
  loadAverage1m: number;
  rows: Row[];
  flat: Record<Metric, Flatness>;
}

export const SCALE_DEFINITIONS = {
  flat: FLAT_RULE,
  groups: 'the engine through the REST bridge: enqueueBatch by producers, then settle(outcomes, n) loops; jobs/s = jobs / (enqueue time + drain time); commands/job = INFO commandstats calls (script-internal included) / jobs',
  waiting:
    'the same two phases with the backlog fully waiting in between; bytes/job = used_memory after - before (quiet server, MEMORY PURGE) / jobs, as bench/lib/memory.ts',
  idle: "the Worker's scheduled() in Miniflare over N idle queues (after a first pass), its whole invocation; commands from INFO commandstats, REST requests at the bridge; flat is judged per queue",
  workers: 'the end-to-end batch run (POST /jobs/batch round-robin over N Worker instances, separate workerd processes sharing one Redis and bridge); jobs/s = jobs / (last arrival - first request)',
} as const;

export interface ScaleResult {
  definitions: typeof SCALE_DEFINITIONS;
  sizes: ScaleSizes;
  elapsedMs: number;
  groups: ScaleGroup<GroupsRow, 'jobsPerSecond' | 'commandsPerJob'>;
  waiting: ScaleGroup<WaitingRow, 'enqueueJobsPerSecond' | 'drainJobsPerSecond' | 'commandsPerJob' | 'bytesPerWaitingJob'>;
  idle: ScaleGroup<IdleRow, 'commandsPerQueue' | 'restRequestsPerQueue'>;
  workers: ScaleGroup<WorkersRow, 'jobsPerSecond' | 'commandsPerJob'>;
}

async function group<Row, Metric extends keyof Row>(rows: () => Promise<Row[]>, metrics: Metric[]): Promise<ScaleGroup<Row, Metric>> {
  const loadAverage1m = round(os.loadavg()[0]!, 2);
  const measured = await rows();
  // Rows where a figure could not be measured (null) are left out of its verdict.
  const values = (m: Metric) => measured.map((row) => row[m]).filter((v): v is number & Row[Metric] => typeof v === 'number');
  const flat = Object.fromEntries(metrics.map((m) => [m, flatness(values(m), /PerSecond$/.test(String(m)))])) as Record<Metric, Flatness>;
  return { loadAverage1m, rows: measured, flat };
}

export async function runScale(
  stack: BenchStack,
  sizes: ScaleSizes,
  engineOptions: ThroughputOptions,
  e2eConfig: E2eConfig,
  fetches: FetchCounter,
  log: (line: string) => void,
): Promise<ScaleResult> {
  const t0 = performance.now();
  // The waiting rows first: bytes per job of their smallest row (~0.3 MB in all) are only
  // measurable before the groups rows leave Redis' keyspace table to shrink in the background.
  const waiting = await group(
    () => runWaitingRows(stack, sizes, engineOptions, fetches, log),
    ['enqueueJobsPerSecond', 'drainJobsPerSecond', 'commandsPerJob', 'bytesPerWaitingJob'],
  );
  const groups = await group(() => runGroupsRows(stack, sizes, engineOptions, fetches, log), ['jobsPerSecond', 'commandsPerJob']);
  const idle = await group(() => runIdleRows(sizes, log), ['commandsPerQueue', 'restRequestsPerQueue']);
  const workers = await group(() => runWorkersRows(sizes, e2eConfig, log), ['jobsPerSecond', 'commandsPerJob']);
  return { definitions: SCALE_DEFINITIONS, sizes, elapsedMs: Math.round(performance.now() - t0), groups, waiting, idle, workers };
}
