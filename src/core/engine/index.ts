// The engine's one entry point: every queue operation, given a Redis client and a clock.
import type { ConfigOptions } from '../../protocol/config';
import * as bulk from './bulk';
import * as dueIndex from '../store/due-index';
import type { EngineContext } from '../store/context';
import * as groupLimits from './group-limits';
import * as jobOps from './job-ops';
import * as leases from './leases';
import * as metrics from './metrics';
import * as outcomes from './outcomes';
import * as producer from './producer';
import * as queues from './queues';
import * as reads from './reads';
import * as repair from './repair';
import * as repeats from './repeats';
import * as scheduler from './scheduler';
import * as waitJob from './wait-job';
import type { ScriptRunner } from '../store/scripts';

export interface EngineOptions extends ConfigOptions {
  redis: ScriptRunner;
  /** Epoch milliseconds. @default Date.now */
  now?: () => number;
  /** Send scripts with Upstash's allow-key-locking flag; off for a Redis that refuses it. @default true */
  keyLocking?: boolean;
}

type Op<F> = F extends (ctx: EngineContext, ...args: infer A) => infer R ? (...args: A) => R : never;

function bind<F extends (ctx: EngineContext, ...args: never[]) => unknown>(ctx: EngineContext, f: F): Op<F> {
  return ((...args: never[]) => f(ctx, ...args)) as Op<F>;
}

export function createEngine({ redis, now = Date.now, keyLocking = true, ...options }: EngineOptions) {
  const ctx: EngineContext = { redis, now, options, keyLocking };
  return {
    putQueue: bind(ctx, queues.putQueue),
    getQueue: bind(ctx, queues.getQueue),
    listQueues: bind(ctx, queues.listQueues),
    listQueueNames: bind(ctx, queues.listQueueNames),
    countQueues: bind(ctx, queues.countQueues),
    deleteQueue: bind(ctx, queues.deleteQueue),
    pauseQueue: (queue: string) => queues.setQueuePaused(ctx, queue, true),
    resumeQueue: (queue: string) => queues.setQueuePaused(ctx, queue, false),
    pauseGroup: (queue: string, group: string) => queues.setGroupPaused(ctx, queue, group, true),
    resumeGroup: (queue: string, group: string) => queues.setGroupPaused(ctx, queue, group, false),
    setGroupLimits: bind(ctx, groupLimits.setGroupLimits),
    clearGroupLimits: bind(ctx, groupLimits.clearGroupLimits),

    enqueue: bind(ctx, producer.enqueue),
    enqueueBatch: bind(ctx, producer.enqueueBatch),
    enqueueAndReserve: bind(ctx, producer.enqueueAndReserve),
    enqueueBatchAndReserve: bind(ctx, producer.enqueueBatchAndReserve),
    getStoredConfig: bind(ctx, queues.getStoredConfig),

    reserve: bind(ctx, leases.reserve),
    settle: bind(ctx, leases.settle),
    complete: bind(ctx, leases.complete),
    fail: bind(ctx, leases.fail),
    heartbeat: bind(ctx, leases.heartbeat),
    progress: bind(ctx, leases.progress),
    settleOutcomes: bind(ctx, outcomes.settleOutcomes),

    tick: bind(ctx, scheduler.tick),
    noteDue: bind(ctx, dueIndex.noteDue),
    firstDue: bind(ctx, dueIndex.firstDue),
    dueQueues: bind(ctx, dueIndex.dueQueues),
    nextDueAfter: bind(ctx, dueIndex.nextDueAfter),
    putRepeat: bind(ctx, repeats.putRepeat),
    listRepeats: bind(ctx, repeats.listRepeats),
    deleteRepeat: bind(ctx, repeats.deleteRepeat),

    getJob: bind(ctx, reads.getJob),
    waitForJob: bind(ctx, waitJob.waitForJob),
    listJobs: bind(ctx, reads.listJobs),
    listGroups: bind(ctx, reads.listGroups),
    getGroup: bind(ctx, reads.getGroup),
    getMetrics: bind(ctx, metrics.getMetrics),

    removeJob: bind(ctx, jobOps.removeJob),
    retryJob: bind(ctx, jobOps.retryJob),
    promoteJob: bind(ctx, jobOps.promoteJob),
    updateJob: bind(ctx, jobOps.updateJob),
    retryJobs: bind(ctx, bulk.retryJobs),
    cleanJobs: bind(ctx, bulk.cleanJobs),
    cancelJob: bind(ctx, jobOps.cancelJob),
    repairQueue: bind(ctx, repair.repairQueue),
  };
}

export type Engine = ReturnType<typeof createEngine>;
