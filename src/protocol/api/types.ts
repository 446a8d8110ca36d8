// The shapes the HTTP API answers with, as types of the zod schemas in responses.ts. This module
// imports those schemas as types only, so the engine, the routes and the client
// (`groupq/client`, which must import nothing at run time) share them without zod or Redis.
import type * as z from 'zod';
import type * as responses from './responses';

export type { GroupState, JobState } from '../job-input';
export type { GroupLimits, QueueConfig } from '../config';

export type QueueCounts = z.output<typeof responses.queueCountsSchema>;
export type QueueInfo = z.output<typeof responses.queueInfoSchema>;
/** PUT of a queue's answer: its config and counts (no `paused`: GET tells). */
export type QueuePut = z.output<typeof responses.queuePutSchema>;
export type QueueSummary = z.output<typeof responses.queueSummarySchema>;
/** The oldest job that could start now (`oldestReady` of a queue and of GET /v1/queues). */
export type OldestReady = z.output<typeof responses.oldestReadySchema>;
/** One partition of a queue (GET /v1/queues/{queue}/partitions). */
export type PartitionInfo = z.output<typeof responses.partitionSchema>;
export type EnqueueResult = z.output<typeof responses.enqueueResultSchema>;
/** What a bulk action did: `done` false when jobs of that state remain (its budget ran out: call again). */
export type BulkResult = z.output<typeof responses.bulkResultSchema>;
export type GroupSummary = z.output<typeof responses.groupSummarySchema>;
export type Repeat = z.output<typeof responses.repeatSchema>;
/** One minute of a queue's activity (GET /v1/queues/{queue}/metrics). */
export type MinuteMetrics = z.output<typeof responses.minuteMetricsSchema>;
/** How a job's outcome callback is going (GET of one job only). */
export type OutcomeStatus = z.output<typeof responses.outcomeStatusSchema>;
/** How one attempt ended (a history entry's `outcome`); `expired`: its lease ran out without an answer. */
export type AttemptEnd = z.output<typeof responses.attemptOutcomeSchema>;
export type Attempt = z.output<typeof responses.attemptSchema>;
export type JobDebounce = z.output<typeof responses.jobDebounceSchema>;
/** A job as the API shows it; `data` typed by the queue's `T`. */
/** One job; `T` types its `data`, `R` its `result` (what its endpoint answered). */
export type Job<T = unknown, R = unknown> = Omit<z.output<typeof responses.jobSchema>, 'data' | 'result'> & { data: T; result?: R };
/** A job as the holder of its events URL sees it (GET of the job with `?cap=`): no data; result and error only if minted to see them. */
export type CapabilityJob = z.output<typeof responses.capabilityJobSchema>;
/** The admin's mint of a job's events URL. */
export type EventsUrl = z.output<typeof responses.eventsUrlSchema>;
/** GET of one group: its state, its own limits (null: the queue's apply), and its jobs in order. */
export type GroupDetail = z.output<typeof responses.groupDetailSchema>;
/** The one error body of every failure. */
export type ErrorBody = z.output<typeof responses.errorBodySchema>;
