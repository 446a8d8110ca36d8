// One queue's calls: its config, jobs, groups, repeatable jobs and metrics. Paths are built
// here with every name percent-encoded; the server validates every input with the same zod
// schemas the types below come from.
import type * as z from 'zod';
import type {
  BulkResult, EnqueueResult, GroupDetail as ApiGroupDetail, GroupState, GroupSummary, Job, MinuteMetrics, PartitionInfo, QueueCounts, QueueInfo, QueuePut,
  Repeat,
} from '../protocol/api/types';
import type { GroupLimits, QueueConfigInput } from '../protocol/config';
import type {
  cleanJobsSchema, jobInputSchema, jobPatchSchema, listJobsSchema, pageSchema, repeatInputSchema, retryJobsSchema,
} from '../protocol/job-input';
import type { groupPageSchema, jobPageSchema } from '../protocol/api/responses';
import { randomId } from '../protocol/ids';
import type { StreamEvent } from '../protocol/events';
import { GroupqError } from './errors';
import { type FollowOptions, type QueueEventsOptions, followPath } from './events';
import { PagedList } from './pages';
import type { Transport } from './transport';
import { type WaitOptions, waitForJob } from './wait';

export type { WaitOptions };

/** What `update` sends: any field of the config, or null to put it back to its default. */
export type QueueConfigPatch = { [K in keyof QueueConfigInput]?: QueueConfigInput[K] | null };
/** A job to enqueue; `data` is typed by the queue's `T`. */
export type JobInput<T = unknown> = Omit<z.input<typeof jobInputSchema>, 'data'> & { data?: T };
/** A change to a waiting or delayed job. */
export type JobPatch<T = unknown> = Omit<z.input<typeof jobPatchSchema>, 'data'> & { data?: T };
export type ListJobsOptions = Partial<Pick<z.output<typeof listJobsSchema>, 'state' | 'group' | 'limit' | 'cursor'>>;
export type PageOptions = Partial<z.output<typeof pageSchema>>;
export type RetryAllOptions = z.input<typeof retryJobsSchema>;
export type CleanOptions = z.input<typeof cleanJobsSchema>;
export type RepeatInput<T = unknown> = Omit<z.input<typeof repeatInputSchema>, 'data'> & { data?: T };
export type { GroupLimits, QueueConfigInput };

// The answers' types come from the server's response schemas (src/protocol/api/responses.ts), as
// types only: a change there fails the client's compile, and nothing of zod reaches its bundle.

/** A page of jobs (GET /jobs); `data` typed by the queue's `T`. */
export type JobPage<T, R = unknown> = Omit<z.output<typeof jobPageSchema>, 'jobs'> & { jobs: Job<T, R>[] };

/** A page of groups (GET /groups). */
export type GroupPage = z.output<typeof groupPageSchema>;

/**
 * One group (GET /groups/{group}): its state, its own limits (setGroupLimits; null when the
 * queue's apply), its jobs in flight (`active`, up to `concurrency`) and its jobs in order.
 */
export type GroupDetail<T = unknown, R = unknown> = Omit<ApiGroupDetail, 'jobs'> & { jobs: Job<T, R>[] };

const segment = encodeURIComponent;

/** How often movePartition asks again while a move it follows runs. */
const MOVE_FOLLOW_MS = 2000;

/**
 * What every call takes: `signal` ends it (and its retries) at once with GroupqError ABORTED;
 * `timeoutMs` bounds each attempt instead of the client's `timeoutMs`.
 */
export interface CallOptions {
  signal?: AbortSignal;
  timeoutMs?: number;
}

/**
 * What `add` and `addBatch` take besides CallOptions: the W3C trace context to enqueue with,
 * sent as the `traceparent` and `tracestate` headers and kept with every job of the call, whose
 * deliveries carry it on (docs/tracing.md). A value that is not valid W3C Trace Context is
 * ignored by the server, as the spec says; a tracestate counts only with a traceparent.
 */
export interface EnqueueOptions extends CallOptions {
  traceparent?: string;
  tracestate?: string;
}

/** The trace context headers of an enqueue, and the call's other options. */
function enqueueCall({ traceparent, tracestate, ...options }: EnqueueOptions) {
  const headers: Record<string, string> = {};
  if (traceparent !== undefined) headers.traceparent = traceparent;
  if (tracestate !== undefined) headers.tracestate = tracestate;
  return { ...options, headers };
}

function query(params: Record<string, string | number | undefined>): string {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) if (value !== undefined) search.set(name, String(value));
  const text = search.toString();
  return text === '' ? '' : `?${text}`;
}

export class QueueClient<T = unknown, R = unknown> {
  private readonly base: string;

  constructor(
    private readonly request: Transport,
    readonly name: string,
    /** Give jobs without an id one (ClientOptions.mintIds). */
    private readonly mintIds = true,
  ) {
    this.base = `/v1/queues/${segment(name)}`;
  }

  /** The job with an id: its own, or one made here when mintIds is on. */
  private named(job: JobInput<T>): JobInput<T> {
    return job.id !== undefined || !this.mintIds ? job : { ...job, id: randomId() };
  }

  /** Creates the queue, or replaces its whole config (omitted fields take their defaults). */
  configure(config: QueueConfigInput, options: CallOptions = {}): Promise<QueuePut> {
    return this.request({ method: 'PUT', path: this.base, body: config, idempotent: true, ...options });
  }

  /**
   * Changes only the fields given (a JSON merge patch: null puts a field back to its default);
   * the others are kept, publish tokens and signing secrets included.
   */
  update(patch: QueueConfigPatch, options: CallOptions = {}): Promise<QueuePut> {
    return this.request({ method: 'PATCH', path: this.base, body: patch, idempotent: true, ...options });
  }

  get(options: CallOptions = {}): Promise<QueueInfo> {
    return this.request({ method: 'GET', path: this.base, idempotent: true, ...options });
  }

  async counts(options: CallOptions = {}): Promise<QueueCounts> {
    return (await this.get(options)).counts;
  }

  /** Removes the queue and every job, group and repeat of it. */
  async delete(options: CallOptions = {}): Promise<void> {
    await this.request({ method: 'DELETE', path: this.base, idempotent: false, ...options });
  }

  pause(options: CallOptions = {}): Promise<{ name: string; paused: boolean }> {
    return this.request({ method: 'POST', path: `${this.base}/pause`, idempotent: true, ...options });
  }

  resume(options: CallOptions = {}): Promise<{ name: string; paused: boolean }> {
    return this.request({ method: 'POST', path: `${this.base}/resume`, idempotent: true, ...options });
  }

  /** Brings back jobs stranded in no index (docs/http-api.md#repair); safe to run again. */
  repair(options: CallOptions = {}): Promise<{ reindexed: number; offered: number }> {
    return this.request({ method: 'POST', path: `${this.base}/repair`, idempotent: true, ...options });
  }

  /**
   * Enqueues one job. Retried on network errors and 503 only when it has an `id` (G4): its own,
   * or one the client made (mintIds, on by default).
   */
  add(job: JobInput<T>, options: EnqueueOptions = {}): Promise<EnqueueResult> {
    const body = this.named(job);
    return this.request({ method: 'POST', path: `${this.base}/jobs`, body, idempotent: body.id !== undefined, ...enqueueCall(options) });
  }

  /** Enqueues up to 1000 jobs, validated whole before any is written; retried as `add` is. */
  async addBatch(given: JobInput<T>[], options: EnqueueOptions = {}): Promise<EnqueueResult[]> {
    const jobs = given.map((job) => this.named(job));
    const idempotent = jobs.every((job) => job.id !== undefined);
    const reply = await this.request<{ jobs: EnqueueResult[] }>({
      method: 'POST',
      path: `${this.base}/jobs/batch`,
      body: { jobs },
      idempotent,
      ...enqueueCall(options),
    });
    return reply.jobs;
  }

  getJob(id: string, options: CallOptions = {}): Promise<Job<T, R>> {
    return this.request({ method: 'GET', path: `${this.base}/jobs/${segment(id)}`, idempotent: true, ...options });
  }

  /**
   * The job once it has finished (`completed`, `failed`, `cancelled`, `expired`), or as it is when
   * `timeoutMs` has passed: the job's event stream says when it ends, then one GET answers it (a
   * Worker without streams is asked `GET ...?waitMs=` until then). On a queue that keeps no
   * completed jobs (`keepCompleted: 0`, the default) a job added with `keepResult: true` keeps
   * its end and result for 5 minutes; any other is gone when it completes: JOB_NOT_FOUND.
   */
  waitForJob(id: string, options: WaitOptions = {}): Promise<Job<T, R>> {
    return waitForJob<T, R>(this.request, `${this.base}/jobs/${segment(id)}`, options);
  }

  /**
   * Enqueues one job with `keepResult` (its end is kept for the wait on any queue), then waits
   * for it as `waitForJob` does (`signal` ends either).
   */
  async addAndWait(job: JobInput<T>, options: WaitOptions = {}): Promise<Job<T, R>> {
    const { id } = await this.add({ ...job, keepResult: true }, { signal: options.signal });
    return this.waitForJob(id, options);
  }

  /**
   * The queue's job events as they happen (admin), or one group's: `for await` them. Resumes by
   * itself after a dropped connection, from the last event read; ends only when `signal` aborts
   * (GroupqError ABORTED) or the loop breaks. A `gap` event says events were lost meanwhile.
   */
  events({ group, ...options }: QueueEventsOptions = {}): AsyncGenerator<StreamEvent, void, undefined> {
    return followPath(this.request, `${this.base}/events${query({ group })}`, false, options);
  }

  /**
   * One job's events: its current state first, then each change, until its final event (or at
   * once, that end alone, for a job that has ended). Resumes by itself as `events` does.
   */
  jobEvents(id: string, options: FollowOptions = {}): AsyncGenerator<StreamEvent, void, undefined> {
    return followPath(this.request, `${this.base}/jobs/${segment(id)}/events`, true, options);
  }

  /**
   * `await` it for one page; `for await` it for every job, page after page, each once, also
   * when the loop retries or removes the jobs it is given.
   */
  listJobs({ signal, timeoutMs, ...options }: ListJobsOptions & CallOptions = {}): PagedList<JobPage<T, R>, Job<T, R>> {
    const { cursor, ...filters } = options;
    return new PagedList(
      (at) => this.request({ method: 'GET', path: `${this.base}/jobs${query({ ...filters, cursor: at })}`, idempotent: true, signal, timeoutMs }),
      (page) => page.jobs,
      (job) => job.id,
      cursor,
    );
  }

  /** Removes a job that is not active. */
  async removeJob(id: string, options: CallOptions = {}): Promise<void> {
    await this.request({ method: 'DELETE', path: `${this.base}/jobs/${segment(id)}`, idempotent: false, ...options });
  }

  /** A failed job back to waiting, its attempts reset. */
  retryJob(id: string, options: CallOptions = {}): Promise<Job<T, R>> {
    return this.request({ method: 'POST', path: `${this.base}/jobs/${segment(id)}/retry`, idempotent: false, ...options });
  }

  /** A delayed job to waiting now. */
  promoteJob(id: string, options: CallOptions = {}): Promise<Job<T, R>> {
    return this.request({ method: 'POST', path: `${this.base}/jobs/${segment(id)}/promote`, idempotent: false, ...options });
  }

  /**
   * Ends a waiting, delayed or active job as `cancelled`; an active job's lease is revoked (its
   * endpoint's callbacks get 409 JOB_CANCELLED). A finished job is 409 INVALID_STATE.
   */
  cancelJob(id: string, options: CallOptions = {}): Promise<{ id: string; state: 'cancelled' }> {
    return this.request({ method: 'POST', path: `${this.base}/jobs/${segment(id)}/cancel`, idempotent: false, ...options });
  }

  /** The same as cancelJob (its first name). */
  cancel(id: string, options: CallOptions = {}): Promise<{ id: string; state: 'cancelled' }> {
    return this.cancelJob(id, options);
  }

  /** Changes a waiting or delayed job's data, or delays it by `delayMs` from now. */
  updateJob(id: string, patch: JobPatch<T>, options: CallOptions = {}): Promise<Job<T, R>> {
    return this.request({ method: 'PATCH', path: `${this.base}/jobs/${segment(id)}`, body: patch, idempotent: false, ...options });
  }

  /**
   * Every failed job back to waiting, attempts reset. The server works in bounded steps and may
   * answer before it is done; this repeats the call until it is, and answers the total count.
   */
  retryAll({ signal, timeoutMs, ...body }: RetryAllOptions & CallOptions): Promise<{ count: number }> {
    return this.untilDone(() => this.request({ method: 'POST', path: `${this.base}/jobs/retry`, body, idempotent: false, signal, timeoutMs }));
  }

  /** Deletes every job of a finished state (`completed`, `failed`, `cancelled`, `expired`), repeating until done; answers the total count. */
  clean({ signal, timeoutMs, ...filter }: CleanOptions & CallOptions): Promise<{ count: number }> {
    return this.untilDone(() => this.request({ method: 'DELETE', path: `${this.base}/jobs${query(filter)}`, idempotent: false, signal, timeoutMs }));
  }

  private async untilDone(step: () => Promise<BulkResult>): Promise<{ count: number }> {
    let count = 0;
    for (;;) {
      const result = await step();
      count += result.count;
      if (result.done) return { count };
    }
  }

  /** `await` it for one page; `for await` it for every group, each once. */
  groups({ cursor, limit, signal, timeoutMs }: PageOptions & CallOptions = {}): PagedList<GroupPage, GroupSummary> {
    return new PagedList(
      (at) => this.request({ method: 'GET', path: `${this.base}/groups${query({ limit, cursor: at })}`, idempotent: true, signal, timeoutMs }),
      (page) => page.groups,
      (group) => group.group,
      cursor,
    );
  }

  /** One group's state and its jobs in the order they will run. */
  group(name: string, options: CallOptions = {}): Promise<GroupDetail<T, R>> {
    return this.request({ method: 'GET', path: `${this.base}/groups/${segment(name)}`, idempotent: true, ...options });
  }

  pauseGroup(name: string, options: CallOptions = {}): Promise<{ group: string; state: GroupState }> {
    return this.request({ method: 'POST', path: `${this.base}/groups/${segment(name)}/pause`, idempotent: true, ...options });
  }

  resumeGroup(name: string, options: CallOptions = {}): Promise<{ group: string; state: GroupState }> {
    return this.request({ method: 'POST', path: `${this.base}/groups/${segment(name)}/resume`, idempotent: true, ...options });
  }

  /**
   * Replaces the group's limits ({concurrency?, rateLimit?}, at least one; `rateLimit: null`:
   * none, whatever the queue's groupRateLimit). Its next start obeys them.
   */
  setGroupLimits(name: string, limits: GroupLimits, options: CallOptions = {}): Promise<{ group: string; limits: GroupLimits }> {
    return this.request({ method: 'PUT', path: `${this.base}/groups/${segment(name)}/limits`, body: limits, idempotent: true, ...options });
  }

  /** Deletes the group's limits: the queue's groupConcurrency and groupRateLimit apply again. */
  async clearGroupLimits(name: string, options: CallOptions = {}): Promise<void> {
    await this.request({ method: 'DELETE', path: `${this.base}/groups/${segment(name)}/limits`, idempotent: true, ...options });
  }

  /** Completed, failed and retried per minute over the last hour, oldest first. */
  async metrics(options: CallOptions = {}): Promise<MinuteMetrics[]> {
    const reply = await this.request<{ minutes: MinuteMetrics[] }>({
      method: 'GET',
      path: `${this.base}/metrics`,
      idempotent: true,
      ...options,
    });
    return reply.minutes;
  }

  /** Each partition: the database of the pool it lives on, and its counts (one for a queue of one partition). */
  async partitions(options: CallOptions = {}): Promise<PartitionInfo[]> {
    const reply = await this.request<{ partitions: PartitionInfo[] }>({ method: 'GET', path: `${this.base}/partitions`, idempotent: true, ...options });
    return reply.partitions;
  }

  /**
   * Moves partition `partition` to `database` of the pool, while the queue runs; answers once it
   * is there. A move of it to the same database already under way (this call's own, resent after
   * its answer was lost, or another caller's) is followed until it ends; one to another database
   * is MOVE_IN_PROGRESS.
   */
  async movePartition(partition: number, database: number, options: CallOptions = {}): Promise<PartitionInfo> {
    const call = { method: 'POST', path: `${this.base}/partitions/${partition}/move`, body: { database }, idempotent: true, ...options } as const;
    for (;;) {
      try {
        return await this.request<PartitionInfo>(call);
      } catch (error) {
        const sameMove = error instanceof GroupqError && error.code === 'MOVE_IN_PROGRESS' && (error.details as { database?: number } | undefined)?.database === database;
        if (!sameMove) throw error;
        // Called again once the move ends, it answers the partition's entry there at once.
        await new Promise((resolve) => setTimeout(resolve, MOVE_FOLLOW_MS));
        if (options.signal?.aborted) throw new GroupqError('ABORTED', 0, `POST ${call.path} was aborted by its signal`, undefined, undefined, { cause: options.signal.reason });
      }
    }
  }

  readonly repeats = {
    /** Creates or replaces the repeatable job `key`. */
    put: (key: string, spec: RepeatInput<T>, options: CallOptions = {}): Promise<{ key: string; nextRunAt: number | null }> =>
      this.request({ method: 'PUT', path: `${this.base}/repeats/${segment(key)}`, body: spec, idempotent: true, ...options }),
    list: async (options: CallOptions = {}): Promise<(Repeat & { data: T })[]> => {
      const reply = await this.request<{ repeats: (Repeat & { data: T })[] }>({
        method: 'GET',
        path: `${this.base}/repeats`,
        idempotent: true,
        ...options,
      });
      return reply.repeats;
    },
    /** Stops the series; runs already enqueued stay. */
    delete: async (key: string, options: CallOptions = {}): Promise<void> => {
      await this.request({ method: 'DELETE', path: `${this.base}/repeats/${segment(key)}`, idempotent: false, ...options });
    },
  };
}
