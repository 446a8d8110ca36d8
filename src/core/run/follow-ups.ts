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
import type { TraceContext } from '../../protocol/trace-context';
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

  /**
   * After the response: drain, then tick the queue if this isolate knows it is due (followUp).
   * `tag`: the queue's name, or one of its partitions' (the run layer works on partitions).
   */
  const deliverLater = (tag: string, start: Leased | 'drain') => waitUntil(followUp(dispatcher, due, tag, start));

  /** A timer due at `at` (null: none) that this isolate has not seen: tick the partition by then. */
  const noteTimer = (tag: string, at: number | null) => {
    if (at !== null) due.lower(tag, at);
  };

  /**
   * Runs a write that leases up to `reserve` ready jobs in the same script call. Their push
   * slots are claimed before it is sent, because the drains of this invocation reserve at the
   * same time (Invocation.claim); slots it left empty are given back, and a drain pushes what it
   * leased after the response, one per partition it wrote to (`partsOf`: a queue's is itself).
   * The timer it added is noted first: the follow-up reads it.
   */
  async function leasing<T>(
    write: (reserve: number) => Promise<T>,
    partsOf: (done: T, reserve: number) => (Leased & { tag: string })[],
    timerOf: (done: T) => number | null,
  ): Promise<T> {
    const reserve = invocation.claim();
    let parts: (Leased & { tag: string })[] | undefined;
    let done: T;
    try {
      done = await write(reserve);
      parts = partsOf(done, reserve);
    } finally {
      invocation.release(reserve - (parts?.reduce((sum, part) => sum + part.jobs.length, 0) ?? 0));
    }
    // The drains that hold jobs first: they start at once, and the others wait for their turns.
    parts.sort((a, b) => b.jobs.length - a.jobs.length);
    for (const { tag, ...leased } of parts) {
      noteTimer(tag, timerOf(done));
      deliverLater(tag, leased);
    }
    return done;
  }

  async function enqueueWith(write: (reserve: number) => Promise<Enqueued>): Promise<EnqueueResult[]> {
    const enqueued = await leasing(
      write,
      ({ leased, config, parts }) => parts.map(({ tag, more }) => ({ tag, jobs: leased.filter((job) => job.tag === tag), target: pushTarget(config), more })),
      // A delayed job is a timer this isolate has not seen: tick soon to learn when.
      ({ results }) => (results.some((r) => r.state === 'delayed') ? invocation.now() : null),
    );
    return enqueued.results;
  }

  /** Ends a lease; the same call leases the next ready jobs (in its partition), delivered after the response. */
  async function endLease(end: (reserveNext: number) => ReturnType<Engine['complete']>) {
    const { state } = await leasing(
      end,
      // As many leased as asked for: more may be ready.
      ({ next, target, outcomes, tag }, reserve) => [{ tag, jobs: next, target, outcomes, more: reserve > 0 && next.length === reserve }],
      // A retry holds the group until a time the tick knows: learn it soon.
      (ended) => (ended.state === 'waiting' ? invocation.now() : null),
    );
    return { state };
  }

  /**
   * A write that makes jobs ready: deliver them now, not at the next cron, from the partitions
   * `tagsOf` names once it is done (the queue's, a group's, a job's).
   */
  async function thenDrain<T>(write: Promise<T>, tagsOf: (done: T) => string[]): Promise<T> {
    const done = await write;
    for (const tag of tagsOf(done)) deliverLater(tag, 'drain');
    return done;
  }
  const everyPartition = (queue: string) => () => engine.tagsOf(queue);
  const groupPartition = (queue: string, group: string) => () => [engine.tagOfGroup(queue, group)];
  const jobPartition = (queue: string) => (job: { group: string }) => [engine.tagOfGroup(queue, job.group)];

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
    listPartitions: engine.listPartitions,
    movePartition: engine.movePartition,
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
    scrape: engine.scrape,

    /** The queue's stored config, served from the isolate's cache (a missing queue too). */
    async getStoredConfig(queue: string): Promise<StoredConfig> {
      const config = await configs.get(queue, () => engine.getStoredConfig(queue));
      if (config === null) throw new ScriptRefusal('QUEUE_NOT_FOUND');
      return config;
    },
    putQueue: (queue: string, input: unknown) => changingConfig(queue, engine.putQueue(queue, input)),
    patchQueue: (queue: string, patch: unknown) => changingConfig(queue, engine.patchQueue(queue, patch)),
    deleteQueue: (queue: string) => changingConfig(queue, engine.deleteQueue(queue)),

    // Writes with the work that must follow them.

    /**
     * Adds one job (`rawData`: its `data` exactly as sent; `publisher`: sent with a publish
     * token, see producer.ts); an existing id is a duplicate.
     */
    enqueue: async (queue: string, input: unknown, rawData?: string, publisher?: Publisher, trace?: TraceContext): Promise<EnqueueResult> =>
      (await enqueueWith((reserve) => engine.enqueueAndReserve(queue, input, reserve, rawData, publisher, trace)))[0]!,
    /** Adds a batch `{"jobs":[...]}` atomically (`rawData`: each job's `data` exactly as sent). */
    enqueueBatch: (
      queue: string,
      batch: unknown,
      rawData?: readonly (string | undefined)[],
      publisher?: Publisher,
      trace?: TraceContext,
    ): Promise<EnqueueResult[]> => enqueueWith((reserve) => engine.enqueueBatchAndReserve(queue, batch, reserve, rawData, publisher, trace)),

    complete: (queue: string, input: LeaseInput<'complete'>) => endLease((next) => engine.complete(queue, input, next)),
    fail: (queue: string, input: LeaseInput<'fail'>) => endLease((next) => engine.fail(queue, input, next)),

    resumeQueue: (queue: string) => thenDrain(engine.resumeQueue(queue), everyPartition(queue)),
    /** Jobs brought back may be ready now. */
    repairQueue: (queue: string) => thenDrain(engine.repairQueue(queue), everyPartition(queue)),
    resumeGroup: (queue: string, group: string) => thenDrain(engine.resumeGroup(queue, group), groupPartition(queue, group)),
    /** A raised concurrency (or a lifted rate limit) lets the group start more jobs now. */
    setGroupLimits: (queue: string, group: string, limits: unknown) =>
      thenDrain(engine.setGroupLimits(queue, group, limits), groupPartition(queue, group)),
    clearGroupLimits: (queue: string, group: string) => thenDrain(engine.clearGroupLimits(queue, group), groupPartition(queue, group)),
    retryJob: (queue: string, id: string) => thenDrain(engine.retryJob(queue, id), jobPartition(queue)),
    promoteJob: (queue: string, id: string) => thenDrain(engine.promoteJob(queue, id), jobPartition(queue)),
    /** Ends the job; its group's next job and its outcome callback are delivered after the response. */
    async cancelJob(queue: string, id: string) {
      // The group's next job may be ready: in a partitioned queue, in the partition the job was.
      const { outcomes, ...cancelled } = await thenDrain(engine.cancelJob(queue, id), everyPartition(queue));
      if (outcomes.length > 0) waitUntil(sendOutcomes(dispatcher, outcomes[0]!.tag, outcomes));
      return cancelled;
    },

    /** Every failed job back to waiting, as far as the budget goes; the retried jobs are delivered now. */
    async retryJobs(queue: string, input: unknown): Promise<BulkResult> {
      const result = await engine.retryJobs(queue, input, bulkBudget());
      if (result.count > 0) for (const tag of engine.tagsOf(queue)) deliverLater(tag, 'drain');
      return result;
    },
    cleanJobs: (queue: string, query: unknown): Promise<BulkResult> => engine.cleanJobs(queue, query, bulkBudget()),

    async updateJob(queue: string, id: string, patch: unknown) {
      const job = await engine.updateJob(queue, id, patch);
      noteTimer(engine.tagOfGroup(queue, job.group), job.state === 'delayed' ? (job.runAt ?? invocation.now()) : null);
      return job;
    },
    async putRepeat(queue: string, key: string, input: unknown) {
      const result = await engine.putRepeat(queue, key, input);
      // Its partition's tick must come by its first run: any partition's follow-up may look.
      for (const tag of engine.tagsOf(queue)) noteTimer(tag, result.nextRunAt);
      return result;
    },
  };
}

export type Service = ReturnType<typeof createService>;
