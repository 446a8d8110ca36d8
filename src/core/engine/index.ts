// The engine's entry points: its context (what every operation takes), the calls the run layer
// makes, and every queue operation with positional arguments for code that runs it in process.
import type { ConfigOptions } from '../../protocol/config';
import type { TraceContext } from '../../protocol/trace-context';
import * as bulk from './bulk';
import * as events from './events';
import type { KeepGoing } from './bulk';
import * as dueIndex from '../store/due-index';
import type { EngineContext } from '../store/context';
import * as groupLimits from './group-limits';
import * as jobOps from './job-ops';
import * as leases from './leases';
import * as minutes from './minutes';
import * as move from './move';
import * as outcomeAttempts from './outcome-attempts';
import * as producer from './producer';
import type { Publisher } from './producer';
import * as queues from './queues';
import * as reads from './reads';
import * as repair from './repair-queue';
import * as repeats from './repeats';
import * as scheduler from './scheduler';
import * as scrape from './scrape';
import * as waitJob from './wait-job';
import { databaseStates, poolOf } from '../store/pool';
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
  /** Where the job events scripts report go (the Worker's hub forwarding). @default nowhere */
  onEvents?: EngineContext['onEvents'];
}

/** The inputs of lease callbacks, as their operations take them. */
type CompleteInput = Omit<Parameters<typeof leases.complete>[1], 'queue' | 'reserve'>;
type FailInput = Omit<Parameters<typeof leases.fail>[1], 'queue' | 'reserve'>;
type HeartbeatInput = Omit<Parameters<typeof leases.heartbeat>[1], 'queue'>;
type ProgressInput = Omit<Parameters<typeof leases.progress>[1], 'queue'>;
type OutcomeAttempts = Parameters<typeof outcomeAttempts.settleOutcomes>[2];

/** The engine's context: its Redis, clock and options, as every operation takes it. */
export function engineContext({ redis, now = Date.now, keyLocking = true, partitions = new PartitionCounts(), onEvents, ...options }: EngineOptions): EngineContext {
  return { redis, pool: poolOf(redis), now, options, keyLocking, partitions, onEvents };
}

/**
 * The engine calls the run layer makes (src/core/run: drains, ticks, the due index), each a plain
 * call of its module's function: a surface of its own, small and explicit.
 */
export function runCalls(ctx: EngineContext) {
  return {
    settle: (tag: string, ended: leases.Settlement[], reserve: number) => leases.settle(ctx, tag, ended, reserve),
    settleOutcomes: (tag: string, attempts: OutcomeAttempts) => outcomeAttempts.settleOutcomes(ctx, tag, attempts),
    tick: (tag: string, options?: { opportunistic?: boolean }) => scheduler.tickAny(ctx, tag, options),
    noteDue: (tag: string, at: number) => dueIndex.noteDue(ctx, tag, at),
    firstDue: () => dueIndex.firstDue(ctx),
    dueTags: (at: number, limit: number) => dueIndex.dueTags(ctx, at, limit),
    nextDueAfter: (at: number) => dueIndex.nextDueAfter(ctx, at),
    /** Where `group`'s jobs live (a partition's tag, or the queue's name), as this engine knows the queue. */
    tagOfGroup: (queue: string, group: string) => partitions.tagOfGroup(ctx, queue, group),
    /** Every partition's tag of `queue` (just its name when it has one), as this engine knows it. */
    tagsOf: (queue: string) => partitions.tagsOf(ctx, queue),
  };
}

export type RunCalls = ReturnType<typeof runCalls>;

/**
 * Every queue operation as a call with positional arguments, for code that runs the engine in
 * process (the tests, the benchmarks): each is its module's function with this engine's context.
 * The HTTP routes call those functions themselves (src/handlers/operations.ts).
 */
export function createEngine(options: EngineOptions) {
  const ctx = engineContext(options);
  return {
    ...runCalls(ctx),
    putQueue: (queue: string, body: unknown) => queues.putQueue(ctx, { queue, body }),
    patchQueue: (queue: string, body: unknown) => queues.patchQueue(ctx, { queue, body }),
    getQueue: (queue: string) => queues.getQueue(ctx, { queue }),
    listPartitions: (queue: string) => queues.listPartitions(ctx, { queue }),
    movePartition: (queue: string, partition: string, body: unknown, options?: move.MoveOptions) => move.movePartition(ctx, { queue, partition, body }, options),
    listQueues: () => queues.listQueues(ctx),
    listQueueNames: () => queues.listQueueNames(ctx),
    countQueues: () => queues.countQueues(ctx),
    databaseStates: () => databaseStates(ctx),
    deleteQueue: (queue: string) => queues.deleteQueue(ctx, { queue }),
    pauseQueue: (queue: string) => queues.pauseQueue(ctx, { queue }),
    resumeQueue: (queue: string) => queues.resumeQueue(ctx, { queue }),
    pauseGroup: (queue: string, group: string) => queues.pauseGroup(ctx, { queue, group }),
    resumeGroup: (queue: string, group: string) => queues.resumeGroup(ctx, { queue, group }),
    setGroupLimits: (queue: string, group: string, body: unknown) => groupLimits.setGroupLimits(ctx, { queue, group, body }),
    clearGroupLimits: (queue: string, group: string) => groupLimits.clearGroupLimits(ctx, { queue, group }),

    enqueue: async (queue: string, body: unknown) => (await producer.enqueue(ctx, { queue, body })).results[0]!,
    enqueueBatch: async (queue: string, jobs: unknown) => (await producer.enqueueBatch(ctx, { queue, body: { jobs } })).results,
    enqueueAndReserve: (queue: string, body: unknown, reserve: number, rawData?: string, publisher?: Publisher, trace?: TraceContext) =>
      producer.enqueue(ctx, { queue, body, reserve, rawData: [rawData], publisher, trace }),
    enqueueBatchAndReserve: (queue: string, body: unknown, reserve: number, rawData?: readonly (string | undefined)[], publisher?: Publisher, trace?: TraceContext) =>
      producer.enqueueBatch(ctx, { queue, body, reserve, rawData, publisher, trace }),
    getStoredConfig: (queue: string) => queues.getStoredConfig(ctx, queue),

    reserve: (queue: string, max: number) => leases.reserve(ctx, queue, max),
    complete: (queue: string, input: CompleteInput, reserve?: number) => leases.complete(ctx, { queue, reserve, ...input }),
    fail: (queue: string, input: FailInput, reserve?: number) => leases.fail(ctx, { queue, reserve, ...input }),
    heartbeat: (queue: string, input: HeartbeatInput) => leases.heartbeat(ctx, { queue, ...input }),
    progress: (queue: string, input: ProgressInput) => leases.progress(ctx, { queue, ...input }),
    /** progress, answering its event while events are wanted (wantEvents). */
    recordProgress: (queue: string, input: ProgressInput) => leases.recordProgress(ctx, { queue, ...input }),
    /** Scripts of `queue` return the job events they cause until `until` (epoch ms). */
    wantEvents: (queue: string, until: number) => events.wantEvents(ctx, { queue, until }),

    putRepeat: (queue: string, key: string, body: unknown) => repeats.putRepeat(ctx, { queue, key, body }),
    listRepeats: (queue: string) => repeats.listRepeats(ctx, { queue }),
    deleteRepeat: (queue: string, key: string) => repeats.deleteRepeat(ctx, { queue, key }),

    getJob: (queue: string, id: string) => reads.getJob(ctx, { queue, id }),
    waitForJob: (queue: string, id: string, query?: unknown) => waitJob.waitForJob(ctx, { queue, id, query }),
    listJobs: (queue: string, query?: unknown) => reads.listJobs(ctx, { queue, query }),
    listGroups: (queue: string, query?: unknown) => reads.listGroups(ctx, { queue, query }),
    getGroup: (queue: string, group: string) => reads.getGroup(ctx, { queue, group }),
    getMinutes: (queue: string) => minutes.getMinutes(ctx, { queue }),
    /** Every queue's totals and gauges for GET /metrics, at a bounded cost (scrape.ts). */
    scrape: (options?: scrape.ScrapeOptions) => scrape.scrape(ctx, options),

    removeJob: (queue: string, id: string) => jobOps.removeJob(ctx, { queue, id }),
    retryJob: (queue: string, id: string) => jobOps.retryJob(ctx, { queue, id }),
    promoteJob: (queue: string, id: string) => jobOps.promoteJob(ctx, { queue, id }),
    updateJob: (queue: string, id: string, body: unknown) => jobOps.updateJob(ctx, { queue, id, body }),
    retryJobs: (queue: string, body: unknown, keepGoing?: KeepGoing) => bulk.retryJobs(ctx, { queue, body, keepGoing }),
    cleanJobs: (queue: string, query: unknown, keepGoing?: KeepGoing) => bulk.cleanJobs(ctx, { queue, query, keepGoing }),
    cancelJob: (queue: string, id: string) => jobOps.cancelJob(ctx, { queue, id }),
    repairQueue: (queue: string) => repair.repairQueue(ctx, { queue }),
  };
}

export type Engine = ReturnType<typeof createEngine>;
