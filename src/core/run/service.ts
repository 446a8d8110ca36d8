// What the HTTP API asks of groupq in one invocation: every operation a route calls, each write
// together with the work that must follow it, so that no route can forget delivery.
// - A write that leases ready jobs in its own script call (enqueue, complete, fail) claims their
//   push slots first and hands what it leased to a drain after the response.
// - A write that makes jobs ready (resume a queue or group, retry, promote, cancel: the group's
//   next job) starts a drain.
// - A write that adds a timer this isolate has not seen (a delayed job, a retry's backoff, a
//   repeat's next run) lowers the queue's DueTimes, so the follow-up ticks when it is due.
// - Config reads come from the isolate's ConfigCache (what auth and CORS read for free); a
//   config write forgets the cached config, so it takes effect at once in this isolate.
// Work after the response goes through `waitUntil`, the one thing core takes of the runtime.
import type { BulkResult } from '../../protocol/api-types';
import type { StoredConfig } from '../../protocol/config';
import type { ConfigCache } from '../store/config-cache';
import { pushTarget } from '../store/leased';
import { ScriptRefusal } from '../store/refusals';
import { type Dispatcher, type Leased, sendOutcomes } from './dispatcher';
import type { Engine } from '../engine';
import type { EnqueueResult, Enqueued, Publisher } from '../engine/producer';
import { type DueTimes, followUp } from './runner';

export interface ServiceDeps {
  dispatcher: Dispatcher;
  /** What this isolate has learned of each queue's next timer. */
  due: DueTimes;
  /** Keeps work alive after the response (a Worker's `ctx.waitUntil`). */
  waitUntil: (work: Promise<unknown>) => void;
  /** Queues' configs as this isolate read them a moment ago: what auth and CORS checks read. */
  configs: ConfigCache;
}

/**
 * A bulk action's budget: it stops between steps after this long, or once it has spent half the
 * invocation's subrequests (the drain after a retry needs the rest), and says it is not done.
 */
const BULK_BUDGET_MS = 10_000;

type LeaseInput<Op extends 'complete' | 'fail'> = Parameters<Engine[Op]>[1];

export function createService({ dispatcher, due, waitUntil, configs }: ServiceDeps) {
  const { engine, invocation } = dispatcher;

  /** After the response: drain, then tick the queue if this isolate knows it is due (followUp). */
  const deliverLater = (queue: string, start: Leased | 'drain') => waitUntil(followUp(dispatcher, due, queue, start));

  /** A timer due at `at` (null: none) that this isolate has not seen: tick by then. */
  const noteTimer = (queue: string, at: number | null) => {
    if (at !== null) due.lower(queue, at);
  };

  /**
   * Runs a write that leases up to `reserve` ready jobs in the same script call. Their push
   * slots are claimed before it is sent, because the drains of this invocation reserve at the
   * same time (Invocation.claim); slots it left empty are given back, and a drain pushes what it
   * leased after the response. The timer it added is noted first: the follow-up reads it.
   */
  async function leasing<T>(
    queue: string,
    write: (reserve: number) => Promise<T>,
    leasedOf: (done: T) => Omit<Leased, 'more'>,
    timerOf: (done: T) => number | null,
  ): Promise<T> {
    const reserve = invocation.claim();
    let leased: Omit<Leased, 'more'> | undefined;
    let done: T;
    try {
      done = await write(reserve);
      leased = leasedOf(done);
    } finally {
      invocation.release(reserve - (leased?.jobs.length ?? 0));
    }
    noteTimer(queue, timerOf(done));
    // As many leased as asked for: more may be ready.
    deliverLater(queue, { ...leased, more: reserve > 0 && leased.jobs.length === reserve });
    return done;
  }

  async function enqueueWith(queue: string, write: (reserve: number) => Promise<Enqueued>): Promise<EnqueueResult[]> {
    const enqueued = await leasing(
      queue,
      write,
      ({ leased, config }) => ({ jobs: leased, target: pushTarget(config) }),
      // A delayed job is a timer this isolate has not seen: tick soon to learn when.
      ({ results }) => (results.some((r) => r.state === 'delayed') ? invocation.now() : null),
    );
    return enqueued.results;
  }

  /** Ends a lease; the same call leases the next ready jobs, delivered after the response. */
  async function endLease(queue: string, end: (reserveNext: number) => ReturnType<Engine['complete']>) {
    const { state } = await leasing(
      queue,
      end,
      ({ next, target, outcomes }) => ({ jobs: next, target, outcomes }),
      // A retry holds the group until a time the tick knows: learn it soon.
      (ended) => (ended.state === 'waiting' ? invocation.now() : null),
    );
    return { state };
  }

  /** A write that makes jobs ready: deliver them now, not at the next cron. */
  async function thenDrain<T>(queue: string, write: Promise<T>): Promise<T> {
    const done = await write;
    deliverLater(queue, 'drain');
    return done;
  }

  /** The budget of one bulk action (BULK_BUDGET_MS), asked between its steps. */
  function bulkBudget(): () => boolean {
    const until = invocation.now() + BULK_BUDGET_MS;
    const floor = invocation.subrequestsLeft / 2;
    return () => invocation.now() < until && invocation.subrequestsLeft > floor;
  }

  /** A config write: the cached config is forgotten once it ends, so it takes effect at once here. */
  async function changingConfig<T>(queue: string, write: Promise<T>): Promise<T> {
    try {
      return await write;
    } finally {
      configs.forget(queue);
    }
  }

  return {
    // Operations that need nothing after them: reads, and writes that lease nothing and make no
    // job ready. (A timer one of them moves earlier, a heartbeat's shorter lease say, reaches the
    // due index inside the engine call; the cron reads that index.)
    countQueues: engine.countQueues,
    databaseStates: engine.databaseStates,
    listQueues: engine.listQueues,
    getQueue: engine.getQueue,
    pauseQueue: engine.pauseQueue,
    getJob: engine.getJob,
    waitForJob: engine.waitForJob,
    listJobs: engine.listJobs,
    removeJob: engine.removeJob,
    heartbeat: engine.heartbeat,
    progress: engine.progress,
    listGroups: engine.listGroups,
    getGroup: engine.getGroup,
    pauseGroup: engine.pauseGroup,
    listRepeats: engine.listRepeats,
    deleteRepeat: engine.deleteRepeat,
    getMetrics: engine.getMetrics,

    /** The queue's stored config, served from the isolate's cache (a missing queue too). */
    async getStoredConfig(queue: string): Promise<StoredConfig> {
      const config = await configs.get(queue, () => engine.getStoredConfig(queue));
      if (config === null) throw new ScriptRefusal('QUEUE_NOT_FOUND');
      return config;
    },
    putQueue: (queue: string, input: unknown) => changingConfig(queue, engine.putQueue(queue, input)),
    deleteQueue: (queue: string) => changingConfig(queue, engine.deleteQueue(queue)),

    // Writes with the work that must follow them.

    /**
     * Adds one job (`rawData`: its `data` exactly as sent; `publisher`: sent with a publish
     * token, see producer.ts); an existing id is a duplicate.
     */
    enqueue: async (queue: string, input: unknown, rawData?: string, publisher?: Publisher): Promise<EnqueueResult> =>
      (await enqueueWith(queue, (reserve) => engine.enqueueAndReserve(queue, input, reserve, rawData, publisher)))[0]!,
    /** Adds a batch `{"jobs":[...]}` atomically (`rawData`: each job's `data` exactly as sent). */
    enqueueBatch: (queue: string, batch: unknown, rawData?: readonly (string | undefined)[], publisher?: Publisher): Promise<EnqueueResult[]> =>
      enqueueWith(queue, (reserve) => engine.enqueueBatchAndReserve(queue, batch, reserve, rawData, publisher)),

    complete: (queue: string, input: LeaseInput<'complete'>) => endLease(queue, (next) => engine.complete(queue, input, next)),
    fail: (queue: string, input: LeaseInput<'fail'>) => endLease(queue, (next) => engine.fail(queue, input, next)),

    resumeQueue: (queue: string) => thenDrain(queue, engine.resumeQueue(queue)),
    /** Jobs brought back may be ready now. */
    repairQueue: (queue: string) => thenDrain(queue, engine.repairQueue(queue)),
    resumeGroup: (queue: string, group: string) => thenDrain(queue, engine.resumeGroup(queue, group)),
    /** A raised concurrency (or a lifted rate limit) lets the group start more jobs now. */
    setGroupLimits: (queue: string, group: string, limits: unknown) => thenDrain(queue, engine.setGroupLimits(queue, group, limits)),
    clearGroupLimits: (queue: string, group: string) => thenDrain(queue, engine.clearGroupLimits(queue, group)),
    retryJob: (queue: string, id: string) => thenDrain(queue, engine.retryJob(queue, id)),
    promoteJob: (queue: string, id: string) => thenDrain(queue, engine.promoteJob(queue, id)),
    /** Ends the job; its group's next job and its outcome callback are delivered after the response. */
    async cancelJob(queue: string, id: string) {
      const { outcomes, ...cancelled } = await thenDrain(queue, engine.cancelJob(queue, id));
      if (outcomes.length > 0) waitUntil(sendOutcomes(dispatcher, queue, outcomes));
      return cancelled;
    },

    /** Every failed job back to waiting, as far as the budget goes; the retried jobs are delivered now. */
    async retryJobs(queue: string, input: unknown): Promise<BulkResult> {
      const result = await engine.retryJobs(queue, input, bulkBudget());
      if (result.count > 0) deliverLater(queue, 'drain');
      return result;
    },
    cleanJobs: (queue: string, query: unknown): Promise<BulkResult> => engine.cleanJobs(queue, query, bulkBudget()),

    async updateJob(queue: string, id: string, patch: unknown) {
      const job = await engine.updateJob(queue, id, patch);
      noteTimer(queue, job.state === 'delayed' ? (job.runAt ?? invocation.now()) : null);
      return job;
    },
    async putRepeat(queue: string, key: string, input: unknown) {
      const result = await engine.putRepeat(queue, key, input);
      noteTimer(queue, result.nextRunAt);
      return result;
    },
  };
}

export type Service = ReturnType<typeof createService>;
