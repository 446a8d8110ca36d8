// The benchmark's result object: what `--json` prints and bench/results/engine.json holds.
import type { IdleResult } from './idle';
import type { MemoryResult } from './memory';
import type { SingleJobResult } from './single-job';
import type { ThroughputOptions, ThroughputResult } from './throughput';

/** DESIGN.md, "Redis model rules". */
export const BUDGETS = {
  commandsPerJob: 15,
  commandsPerJobAim: 12,
  bytesPerWaitingJob: 400,
  idleCommandsPerTick: 2,
} as const;

export interface BenchConfig extends ThroughputOptions {
  concurrency: number;
  idleTicks: number;
  singleJobIterations: number;
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
  budgets: typeof BUDGETS;
  config: BenchConfig;
  machine: MachineInfo;
  throughput: ThroughputResult;
  memory: MemoryResult;
  idle: IdleResult;
  singleJob: SingleJobResult;
}
