// groupq/client: typed calls to a groupq Worker for backends and browsers (any Fetch-API
// runtime). Types come from the server's own zod schemas; nothing of zod runs here.
import type { QueueSummary } from '../protocol/api/types';
import { type CallOptions, QueueClient } from './queue';
import { type Transport, type TransportOptions, createTransport } from './transport';

export interface ClientOptions extends TransportOptions {
  /**
   * Give each job added without an `id` one made here, so that `add` and `addBatch` are retried
   * safely after a lost answer or a 503 (the retry is a duplicate, G4). The server then remembers
   * each job's id for the queue's `dedupWindowMs` after it ends (about 120 bytes each; docs/client.md).
   * @default true
   */
  mintIds?: boolean;
}

export class GroupqClient {
  private readonly request: Transport;
  private readonly mintIds: boolean;

  constructor(options: ClientOptions) {
    this.request = createTransport(options);
    this.mintIds = options.mintIds ?? true;
  }

  /** A handle on one queue; `T` types its jobs' `data`, `R` their `result`. Makes no request by itself. */
  queue<T = unknown, R = unknown>(name: string): QueueClient<T, R> {
    return new QueueClient<T, R>(this.request, name, this.mintIds);
  }

  /** Every queue with its counts. */
  async queues(options: CallOptions = {}): Promise<QueueSummary[]> {
    const reply = await this.request<{ queues: QueueSummary[] }>({ method: 'GET', path: '/v1/queues', idempotent: true, ...options });
    return reply.queues;
  }

  /** `GET /health`: whether the Worker answers and reaches Redis. A 503 throws REDIS_UNAVAILABLE. */
  health(options: CallOptions = {}): Promise<{ ok: boolean; redis: string }> {
    return this.request({ method: 'GET', path: '/health', idempotent: true, ...options });
  }
}

export { GroupqError, type GroupqErrorCode } from './errors';
export { type EventsUrlOptions, type FollowOptions, type QueueEventsOptions, followEventsUrl } from './events';
export type { EventData, GapEvent, JobEvent, JobEventName, StreamEvent, StreamEventName } from '../protocol/events';
export { PagedList } from './pages';
export { QueueClient } from './queue';
export type {
  CallOptions,
  CleanOptions, EnqueueOptions, GroupLimits, GroupDetail, GroupPage, JobInput, JobPage, JobPatch, ListJobsOptions, PageOptions, QueueConfigInput, QueueConfigPatch,
  RepeatInput,
  RetryAllOptions, WaitOptions,
} from './queue';
export type {
  BulkResult, EnqueueResult, GroupState, GroupSummary, Job, JobDebounce, JobState, MinuteMetrics, OldestReady, PartitionInfo, QueueConfig, QueueCounts,
  QueueInfo, QueuePut, QueueSummary, Repeat,
} from '../protocol/api/types';
