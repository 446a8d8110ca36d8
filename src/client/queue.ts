// One queue's calls: its config, jobs, groups, repeatable jobs and metrics. Paths are built
// here with every name percent-encoded; the server validates every input with the same zod
// schemas the types below come from.
import type * as z from 'zod';
import type {
  BulkResult, EnqueueResult, GroupDetail as ApiGroupDetail, GroupState, GroupSummary, Job, MinuteMetrics, PartitionInfo, QueueCounts, QueueInfo, QueuePut,
  Repeat,
} from '../protocol/api-types';
import type { GroupLimits, QueueConfigInput } from '../protocol/config';
import { MAX_WAIT_MS, isFinished } from '../protocol/constants';
import type {
  cleanJobsSchema, jobInputSchema, jobPatchSchema, listJobsSchema, pageSchema, repeatInputSchema, retryJobsSchema,
} from '../protocol/job-input';
import type { groupPageSchema, jobPageSchema } from '../protocol/responses';
import { PagedList } from './pages';
import type { Transport } from './transport';

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

// The answers' types come from the server's response schemas (src/protocol/responses.ts), as
// types only: a change there fails the client's compile, and nothing of zod reaches its bundle.

/** A page of jobs (GET /jobs); `data` typed by the queue's `T`. */
export type JobPage<T> = Omit<z.output<typeof jobPageSchema>, 'jobs'> & { jobs: Job<T>[] };

/** A page of groups (GET /groups). */
export type GroupPage = z.output<typeof groupPageSchema>;

/**
 * One group (GET /groups/{group}): its state, its own limits (setGroupLimits; null when the
 * queue's apply), its jobs in flight (`active`, up to `concurrency`) and its jobs in order.
 */
export type GroupDetail<T = unknown> = Omit<ApiGroupDetail, 'jobs'> & { jobs: Job<T>[] };

const segment = encodeURIComponent;

export interface WaitOptions {
  /** How long to wait in all; each call waits up to 25 s on the server. @default 60000 */
  timeoutMs?: number;
  /** Ends the wait (and the call in flight) at once: it throws GroupqError ABORTED. */
  signal?: AbortSignal;
}

function query(params: Record<string, string | number | undefined>): string {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) if (value !== undefined) search.set(name, String(value));
  const text = search.toString();
  return text === '' ? '' : `?${text}`;
}

export class QueueClient<T = unknown> {
  private readonly base: string;

  constructor(
    private readonly request: Transport,
    readonly name: string,
  ) {
    this.base = `/v1/queues/${segment(name)}`;
  }

  /** Creates the queue, or replaces its whole config (omitted fields take their defaults). */
  configure(config: QueueConfigInput): Promise<QueuePut> {
    return this.request({ method: 'PUT', path: this.base, body: config, idempotent: true });
  }

  /**
   * Changes only the fields given (a JSON merge patch: null puts a field back to its default);
   * the others are kept, publish tokens and signing secrets included.
   */
  update(patch: QueueConfigPatch): Promise<QueuePut> {
    return this.request({ method: 'PATCH', path: this.base, body: patch, idempotent: true });
  }

  get(): Promise<QueueInfo> {
    return this.request({ method: 'GET', path: this.base, idempotent: true });
  }

  async counts(): Promise<QueueCounts> {
    return (await this.get()).counts;
  }

  /** Removes the queue and every job, group and repeat of it. */
  async delete(): Promise<void> {
    await this.request({ method: 'DELETE', path: this.base, idempotent: false });
  }

  pause(): Promise<{ name: string; paused: boolean }> {
    return this.request({ method: 'POST', path: `${this.base}/pause`, idempotent: true });
  }

  resume(): Promise<{ name: string; paused: boolean }> {
    return this.request({ method: 'POST', path: `${this.base}/resume`, idempotent: true });
  }

  /** Brings back jobs stranded in no index (docs/http-api.md#repair); safe to run again. */
  repair(): Promise<{ reindexed: number; offered: number }> {
    return this.request({ method: 'POST', path: `${this.base}/repair`, idempotent: true });
  }

  /** Enqueues one job. Retried on network errors and 503 only when it has an `id` (G4). */
  add(job: JobInput<T>, { signal }: { signal?: AbortSignal } = {}): Promise<EnqueueResult> {
    return this.request({ method: 'POST', path: `${this.base}/jobs`, body: job, idempotent: job.id !== undefined, signal });
  }

  /** Enqueues up to 1000 jobs, validated whole before any is written. */
  async addBatch(jobs: JobInput<T>[]): Promise<EnqueueResult[]> {
    const idempotent = jobs.every((job) => job.id !== undefined);
    const reply = await this.request<{ jobs: EnqueueResult[] }>({
      method: 'POST',
      path: `${this.base}/jobs/batch`,
      body: { jobs },
      idempotent,
    });
    return reply.jobs;
  }

  getJob(id: string): Promise<Job<T>> {
    return this.request({ method: 'GET', path: `${this.base}/jobs/${segment(id)}`, idempotent: true });
  }

  /**
   * The job once it has finished (`completed`, `failed`, `cancelled`), or as it is when
   * `timeoutMs` has passed: `GET ...?waitMs=`, repeated until then. A completed job that the
   * queue does not keep (`keepCompleted: 0`) is gone when it finishes: JOB_NOT_FOUND.
   */
  async waitForJob(id: string, { timeoutMs = 60_000, signal }: WaitOptions = {}): Promise<Job<T>> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const waitMs = Math.min(MAX_WAIT_MS, Math.max(0, Math.ceil(deadline - Date.now())));
      const path = `${this.base}/jobs/${segment(id)}${query({ waitMs })}`;
      const job = await this.request<Job<T>>({ method: 'GET', path, idempotent: true, signal });
      if (isFinished(job.state) || Date.now() >= deadline) return job;
    }
  }

  /** Enqueues one job, then waits for it as `waitForJob` does (`signal` ends either). */
  async addAndWait(job: JobInput<T>, options: WaitOptions = {}): Promise<Job<T>> {
    const { id } = await this.add(job, options);
    return this.waitForJob(id, options);
  }

  /**
   * `await` it for one page; `for await` it for every job, page after page, each once, also
   * when the loop retries or removes the jobs it is given.
   */
  listJobs(options: ListJobsOptions = {}): PagedList<JobPage<T>, Job<T>> {
    const { cursor, ...filters } = options;
    return new PagedList(
      (at) => this.request({ method: 'GET', path: `${this.base}/jobs${query({ ...filters, cursor: at })}`, idempotent: true }),
      (page) => page.jobs,
      (job) => job.id,
      cursor,
    );
  }

  /** Removes a job that is not active. */
  async removeJob(id: string): Promise<void> {
    await this.request({ method: 'DELETE', path: `${this.base}/jobs/${segment(id)}`, idempotent: false });
  }

  /** A failed job back to waiting, its attempts reset. */
  retryJob(id: string): Promise<Job<T>> {
    return this.request({ method: 'POST', path: `${this.base}/jobs/${segment(id)}/retry`, idempotent: false });
  }

  /** A delayed job to waiting now. */
  promoteJob(id: string): Promise<Job<T>> {
    return this.request({ method: 'POST', path: `${this.base}/jobs/${segment(id)}/promote`, idempotent: false });
  }

  /**
   * Ends a waiting, delayed or active job as `cancelled`; an active job's lease is revoked (its
   * endpoint's callbacks get 409 JOB_CANCELLED). A finished job is 409 INVALID_STATE.
   */
  cancelJob(id: string): Promise<{ id: string; state: 'cancelled' }> {
    return this.request({ method: 'POST', path: `${this.base}/jobs/${segment(id)}/cancel`, idempotent: false });
  }

  /** The same as cancelJob (its first name). */
  cancel(id: string): Promise<{ id: string; state: 'cancelled' }> {
    return this.cancelJob(id);
  }

  /** Changes a waiting or delayed job's data, or delays it by `delayMs` from now. */
  updateJob(id: string, patch: JobPatch<T>): Promise<Job<T>> {
    return this.request({ method: 'PATCH', path: `${this.base}/jobs/${segment(id)}`, body: patch, idempotent: false });
  }

  /**
   * Every failed job back to waiting, attempts reset. The server works in bounded steps and may
   * answer before it is done; this repeats the call until it is, and answers the total count.
   */
  retryAll(options: RetryAllOptions): Promise<{ count: number }> {
    return this.untilDone(() => this.request({ method: 'POST', path: `${this.base}/jobs/retry`, body: options, idempotent: false }));
  }

  /** Deletes every job of a finished state (`completed`, `failed`, `cancelled`), repeating until done; answers the total count. */
  clean(options: CleanOptions): Promise<{ count: number }> {
    return this.untilDone(() => this.request({ method: 'DELETE', path: `${this.base}/jobs${query(options)}`, idempotent: false }));
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
  groups(options: PageOptions = {}): PagedList<GroupPage, GroupSummary> {
    const { cursor, limit } = options;
    return new PagedList(
      (at) => this.request({ method: 'GET', path: `${this.base}/groups${query({ limit, cursor: at })}`, idempotent: true }),
      (page) => page.groups,
      (group) => group.group,
      cursor,
    );
  }

  /** One group's state and its jobs in the order they will run. */
  group(name: string): Promise<GroupDetail<T>> {
    return this.request({ method: 'GET', path: `${this.base}/groups/${segment(name)}`, idempotent: true });
  }

  pauseGroup(name: string): Promise<{ group: string; state: GroupState }> {
    return this.request({ method: 'POST', path: `${this.base}/groups/${segment(name)}/pause`, idempotent: true });
  }

  resumeGroup(name: string): Promise<{ group: string; state: GroupState }> {
    return this.request({ method: 'POST', path: `${this.base}/groups/${segment(name)}/resume`, idempotent: true });
  }

  /**
   * Replaces the group's limits ({concurrency?, rateLimit?}, at least one; `rateLimit: null`:
   * none, whatever the queue's groupRateLimit). Its next start obeys them.
   */
  setGroupLimits(name: string, limits: GroupLimits): Promise<{ group: string; limits: GroupLimits }> {
    return this.request({ method: 'PUT', path: `${this.base}/groups/${segment(name)}/limits`, body: limits, idempotent: true });
  }

  /** Deletes the group's limits: the queue's groupConcurrency and groupRateLimit apply again. */
  async clearGroupLimits(name: string): Promise<void> {
    await this.request({ method: 'DELETE', path: `${this.base}/groups/${segment(name)}/limits`, idempotent: true });
  }

  /** Completed, failed and retried per minute over the last hour, oldest first. */
  async metrics(): Promise<MinuteMetrics[]> {
    const reply = await this.request<{ minutes: MinuteMetrics[] }>({
      method: 'GET',
      path: `${this.base}/metrics`,
      idempotent: true,
    });
    return reply.minutes;
  }

  /** Each partition: the database of the pool it lives on, and its counts (one for a queue of one partition). */
  async partitions(): Promise<PartitionInfo[]> {
    const reply = await this.request<{ partitions: PartitionInfo[] }>({ method: 'GET', path: `${this.base}/partitions`, idempotent: true });
    return reply.partitions;
  }

  /** Moves partition `partition` to `database` of the pool, while the queue runs; answers once it is there. */
  async movePartition(partition: number, database: number): Promise<PartitionInfo> {
    return this.request<PartitionInfo>({ method: 'POST', path: `${this.base}/partitions/${partition}/move`, body: { database }, idempotent: true });
  }

  readonly repeats = {
    /** Creates or replaces the repeatable job `key`. */
    put: (key: string, spec: RepeatInput<T>): Promise<{ key: string; nextRunAt: number | null }> =>
      this.request({ method: 'PUT', path: `${this.base}/repeats/${segment(key)}`, body: spec, idempotent: true }),
    list: async (): Promise<(Repeat & { data: T })[]> => {
      const reply = await this.request<{ repeats: (Repeat & { data: T })[] }>({
        method: 'GET',
        path: `${this.base}/repeats`,
        idempotent: true,
      });
      return reply.repeats;
    },
    /** Stops the series; runs already enqueued stay. */
    delete: async (key: string): Promise<void> => {
      await this.request({ method: 'DELETE', path: `${this.base}/repeats/${segment(key)}`, idempotent: false });
    },
  };
}
