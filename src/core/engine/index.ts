// The engine's one entry point: every queue operation, given a Redis client and a clock.
import type { ConfigOptions } from '../../protocol/config';
import type { TraceContext } from '../../protocol/trace-context';
import * as bulk from './bulk';
import type { KeepGoing } from './bulk';
import * as dueIndex from '../store/due-index';
import type { EngineContext } from '../store/context';
import * as groupLimits from './group-limits';
import * as jobOps from './job-ops';
import * as leases from './leases';
import * as metrics from './metrics';
import * as move from './move';
import * as outcomes from './outcomes';
import * as producer from './producer';
import type { Publisher } from './producer';
import * as queues from './queues';
import * as reads from './reads';
import * as repair from './repair';
import * as repeats from './repeats';
import * as scheduler from './scheduler';
import * as scrape from './scrape';
import * as waitJob from './wait-job';
import { databaseStates } from '../store/pool';
import { PartitionCounts } from '../store/partitions';
import * as partitions from './partitions';
import type { ScriptRunner } from '../store/scripts';

export interface EngineOptions extends ConfigOptions {
  redis: ScriptRunner;
  /** What the isolate has learned of queues' partition counts. @default a new one */
  partitions?: PartitionCounts;
  /** Epoch milliseconds. @default Date.now */
  now?: () => number;
  /** Send scripts with Upstash's allow-key-locking flag; off for a Redis that refuses it. @default true */
  keyLocking?: boolean;
}

/** The inputs of lease callbacks, as their operations take them. */
type CompleteInput = Parameters<typeof leases.complete>[2];
type FailInput = Parameters<typeof leases.fail>[2];
type HeartbeatInput = Parameters<typeof leases.heartbeat>[2];
type ProgressInput = Parameters<typeof leases.progress>[2];
type OutcomeAttempts = Parameters<typeof outcomes.settleOutcomes>[2];

/** Every queue operation, each a plain call of its module's function with this engine's context. */
export function createEngine({ redis, now = Date.now, keyLocking = true, partitions: counts = new PartitionCounts(), ...options }: EngineOptions) {
  const ctx: EngineContext = { redis, now, options, keyLocking, partitions: counts };
  return {
    putQueue: (name: string, input: unknown) => queues.putQueue(ctx, name, input),
    patchQueue: (name: string, patch: unknown) => queues.patchQueue(ctx, name, patch),
    getQueue: (name: string) => queues.getQueue(ctx, name),
    listPartitions: (name: string) => queues.listPartitions(ctx, name),
    movePartition: (name: string, partition: string, input: unknown, options?: move.MoveOptions) => move.movePartition(ctx, name, partition, input, options),
    listQueues: () => queues.listQueues(ctx),
    listQueueNames: () => queues.listQueueNames(ctx),
    countQueues: () => queues.countQueues(ctx),
    databaseStates: () => databaseStates(redis),
    deleteQueue: (name: string) => queues.deleteQueue(ctx, name),
    pauseQueue: (queue: string) => queues.setQueuePaused(ctx, queue, true),
    resumeQueue: (queue: string) => queues.setQueuePaused(ctx, queue, false),
    pauseGroup: (queue: string, group: string) => queues.setGroupPaused(ctx, queue, group, true),
    resumeGroup: (queue: string, group: string) => queues.setGroupPaused(ctx, queue, group, false),
    setGroupLimits: (queue: string, group: string, input: unknown) => groupLimits.setGroupLimits(ctx, queue, group, input),
    clearGroupLimits: (queue: string, group: string) => groupLimits.clearGroupLimits(ctx, queue, group),

    enqueue: (queue: string, input: unknown) => producer.enqueue(ctx, queue, input),
    enqueueBatch: (queue: string, jobs: unknown) => producer.enqueueBatch(ctx, queue, jobs),
    enqueueAndReserve: (queue: string, input: unknown, reserve: number, rawData?: string, publisher?: Publisher, trace?: TraceContext) =>
      producer.enqueueAndReserve(ctx, queue, input, reserve, rawData, publisher, trace),
    enqueueBatchAndReserve: (
      queue: string,
      batch: unknown,
      reserve: number,
      rawData?: readonly (string | undefined)[],
      publisher?: Publisher,
      trace?: TraceContext,
    ) => producer.enqueueBatchAndReserve(ctx, queue, batch, reserve, rawData, publisher, trace),
    getStoredConfig: (name: string) => queues.getStoredConfig(ctx, name),

    reserve: (queue: string, max: number) => leases.reserve(ctx, queue, max),
    settle: (queue: string, ended: leases.Settlement[], reserve: number) => leases.settle(ctx, queue, ended, reserve),
    complete: (queue: string, input: CompleteInput, reserveNext?: number) => leases.complete(ctx, queue, input, reserveNext),
    fail: (queue: string, input: FailInput, reserveNext?: number) => leases.fail(ctx, queue, input, reserveNext),
    heartbeat: (queue: string, input: HeartbeatInput) => leases.heartbeat(ctx, queue, input),
    progress: (queue: string, input: ProgressInput) => leases.progress(ctx, queue, input),
    settleOutcomes: (queue: string, attempts: OutcomeAttempts) => outcomes.settleOutcomes(ctx, queue, attempts),

    tick: (queue: string, options?: { opportunistic?: boolean }) => scheduler.tickAny(ctx, queue, options),
    noteDue: (queue: string, at: number) => dueIndex.noteDue(ctx, queue, at),
    firstDue: () => dueIndex.firstDue(ctx),
    dueQueues: (at: number, limit: number) => dueIndex.dueQueues(ctx, at, limit),
    nextDueAfter: (at: number) => dueIndex.nextDueAfter(ctx, at),
    putRepeat: (queue: string, key: string, input: unknown) => repeats.putRepeat(ctx, queue, key, input),
    listRepeats: (queue: string) => repeats.listRepeats(ctx, queue),
    deleteRepeat: (queue: string, key: string) => repeats.deleteRepeat(ctx, queue, key),

    getJob: (queue: string, id: string) => reads.getJob(ctx, queue, id),
    /** Where `group`'s jobs live (a partition's tag, or the queue's name), as this engine knows the queue. */
    tagOfGroup: (queue: string, group: string) => partitions.tagOfGroup(ctx, queue, group),
    /** Every partition's tag of `queue` (just its name when it has one), as this engine knows it. */
    tagsOf: (queue: string) => partitions.tagsOf(ctx, queue),
    waitForJob: (queue: string, id: string, query?: unknown) => waitJob.waitForJob(ctx, queue, id, query),
    listJobs: (queue: string, query?: unknown) => reads.listJobs(ctx, queue, query),
    listGroups: (queue: string, query?: unknown) => reads.listGroups(ctx, queue, query),
    getGroup: (queue: string, group: string) => reads.getGroup(ctx, queue, group),
    getMetrics: (queue: string) => metrics.getMetrics(ctx, queue),
    /** Every queue's totals and gauges for GET /metrics, at a bounded cost (scrape.ts). */
    scrape: (options?: scrape.ScrapeOptions) => scrape.scrape(ctx, options),

    removeJob: (queue: string, id: string) => jobOps.removeJob(ctx, queue, id),
    retryJob: (queue: string, id: string) => jobOps.retryJob(ctx, queue, id),
    promoteJob: (queue: string, id: string) => jobOps.promoteJob(ctx, queue, id),
    updateJob: (queue: string, id: string, patch: unknown) => jobOps.updateJob(ctx, queue, id, patch),
    retryJobs: (queue: string, input: unknown, keepGoing?: KeepGoing) => bulk.retryJobs(ctx, queue, input, keepGoing),
    cleanJobs: (queue: string, query: unknown, keepGoing?: KeepGoing) => bulk.cleanJobs(ctx, queue, query, keepGoing),
    cancelJob: (queue: string, id: string) => jobOps.cancelJob(ctx, queue, id),
    repairQueue: (queue: string) => repair.repairQueue(ctx, queue),
  };
}

export type Engine = ReturnType<typeof createEngine>;
