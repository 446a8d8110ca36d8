// Every route the Worker serves, as data: its path, who may call it, what it takes (path and
// query parameters, body) and what it answers (each status, the error codes behind each error
// status). openapi.ts turns this table into the OpenAPI document; test/openapi checks it against
// the routes Hono really serves and against real answers. Only the build and the tests load it.
import * as z from 'zod';
import { completeInputSchema, failInputSchema, heartbeatInputSchema, progressInputSchema } from './callback-input';
import { groupLimitsSchema, queueConfigSchema, queuePatchSchema } from './config';
import { MAX_WAIT_MS } from './constants';
import type { ErrorCode } from './errors';
import {
  batchInputSchemaFor, cleanJobsSchema, groupParamSchema, jobIdSchema, jobInputSchema, jobPatchSchema, listJobsSchema,
  moveInputSchema, pageSchema, partitionParamSchema, queueNameSchema, repeatInputSchema, repeatKeySchema, retryJobsSchema,
} from './job-input';
import * as r from './responses';

/** Who may call a route: the admin token, it or a queue's publish token, or anyone. */
export type Access = 'admin' | 'publish' | 'open';

export interface Operation {
  method: 'get' | 'put' | 'post' | 'delete' | 'patch' | 'options';
  /** OpenAPI form: `{queue}` where Hono has `:queue`. */
  path: string;
  id: string;
  tag: string;
  summary: string;
  description?: string;
  access: Access;
  query?: z.ZodObject;
  /** Request headers of its own (optional ones), by name. */
  headers?: Record<string, { schema: z.ZodType; description: string }>;
  body?: z.ZodType;
  /** Successful answers: a JSON schema, null for an empty body, or a media type for a page. */
  ok: Record<number, z.ZodType | null | { mediaType: string }>;
  /** The error codes the route may answer with, besides those every route of its kind may. */
  errors: ErrorCode[];
}

/** The path parameters, by name: each is checked with the schema its route checks it with. */
export const PATH_PARAMETERS: Record<string, z.ZodType> = {
  queue: queueNameSchema,
  id: jobIdSchema,
  group: groupParamSchema,
  key: repeatKeySchema,
  partition: partitionParamSchema,
};

/** Codes any route of a kind may answer with: checked before the route's own work. */
export const COMMON_ERRORS: Record<'admin' | 'publish' | 'body' | 'redis', ErrorCode[]> = {
  admin: ['UNAUTHORIZED'],
  publish: ['UNAUTHORIZED'],
  body: ['BAD_JSON', 'UNSUPPORTED_MEDIA_TYPE', 'PAYLOAD_TOO_LARGE', 'VALIDATION_FAILED'],
  redis: ['REDIS_UNAVAILABLE', 'PARTITION_MOVING', 'INTERNAL'],
};

const Q = '/v1/queues/{queue}';

type Method = Operation['method'];
/** What a route adds to its method, path, id and summary; `errors` defaults to none of its own. */
type Rest = Partial<Omit<Operation, 'method' | 'path' | 'id' | 'summary'>> & Pick<Operation, 'ok'>;

const operation = (method: Method, path: string, id: string, summary: string, rest: Rest): Operation => ({
  method, path, id, summary, tag: 'Service', access: 'open', errors: [], ...rest,
});
/** An open page: no Redis, no error of its own. */
const page = (path: string, id: string, summary: string, mediaType: string) =>
  operation('get', path, id, summary, { ok: { 200: { mediaType }, 304: null } });
/** A route of one queue: its name is checked (400) and the queue must exist (404). */
const queueOp = (method: Method, path: string, id: string, summary: string, rest: Rest): Operation =>
  operation(method, path, id, summary, {
    tag: 'Queues', access: 'admin', ...rest, errors: ['VALIDATION_FAILED', 'QUEUE_NOT_FOUND', ...(rest.errors ?? [])],
  });
const jobOp = (method: Method, path: string, id: string, summary: string, rest: Rest): Operation =>
  queueOp(method, path, id, summary, { tag: 'Jobs', ...rest, errors: ['JOB_NOT_FOUND', ...(rest.errors ?? [])] });
const groupOp = (method: Method, path: string, id: string, summary: string, rest: Rest): Operation =>
  queueOp(method, path, id, summary, { tag: 'Groups', ...rest });
const repeatOp = (method: Method, path: string, id: string, summary: string, rest: Rest): Operation =>
  queueOp(method, path, id, summary, { tag: 'Repeats', ...rest });
const callbackOp = (path: string, id: string, summary: string, rest: Rest): Operation =>
  queueOp('post', path, id, summary, {
    tag: 'Lease callbacks',
    access: 'open',
    description: 'Authorized by the lease token in the body alone: a wrong or stale lease is 409 LEASE_LOST and changes nothing.',
    ...rest,
    errors: ['LEASE_LOST', 'JOB_CANCELLED'],
  });
/** The W3C trace context an enqueue may carry, kept with each job it adds (docs/tracing.md). */
const TRACE_HEADERS: NonNullable<Operation['headers']> = {
  traceparent: {
    schema: z.string(),
    description:
      'W3C Trace Context: `00-<trace-id>-<parent-id>-<flags>`, kept with every job of the call and sent on, unchanged, with each ' +
      'delivery and the outcome callback (docs/tracing.md). A value that is not valid is ignored (the spec\'s rule), never refused.',
  },
  tracestate: {
    schema: z.string(),
    description: 'W3C Trace Context: kept with the traceparent (only with a valid one), at most 32 members and 512 characters.',
  },
};

const enqueueOp = (method: Method, path: string, id: string, summary: string, rest: Rest): Operation =>
  queueOp(method, path, id, summary, {
    tag: 'Enqueue',
    access: 'publish',
    description:
      "The admin token, or a publish token of this queue (its jobs pass the queue's publish policy and rate limit). " +
      "Browsers may call it from the queue's allowedOrigins (CORS). A publish token learns only the id of a duplicate.",
    errors: ['FIELD_NOT_ALLOWED', 'QUEUE_FULL', 'RATE_LIMITED'],
    ...rest,
  });
/** 204 whatever the queue (an unknown one gets no CORS headers, and no error that would tell). */
const preflightOp = (path: string, id: string, summary: string) =>
  operation('options', path, id, summary, {
    tag: 'Enqueue',
    description: "CORS headers only for an Origin in the queue's allowedOrigins.",
    ok: { 204: null },
  });

export const OPERATIONS: Operation[] = [
  operation('get', '/', 'home', 'Where to go from here', { ok: { 200: r.homeSchema } }),
  operation('get', '/health', 'health', 'Whether the Worker reaches Redis', {
    description: 'Open. Without the admin token, the answer this isolate found within the last second, and no database by name; with it, checked now, each database of a pool named.',
    ok: { 200: r.healthSchema, 503: r.healthSchema },
  }),
  operation('get', '/metrics', 'prometheusMetrics', 'Every queue in the Prometheus text format', {
    access: 'admin',
    description:
      'For the admin token, or GROUPQ_METRICS_TOKEN (which opens this route alone). Jobs by state, groups, lifetime counters and ' +
      'wait and run histograms, per queue and partition; a scrape reads a bounded number of queues (docs/metrics.md).',
    ok: { 200: { mediaType: 'text/plain' } },
  }),
  page('/openapi.json', 'openapi', 'This document', 'application/json'),
  page('/dashboard', 'dashboard', 'The dashboard (it asks for the admin token)', 'text/html'),
  page('/dashboard/', 'dashboardSlash', 'The dashboard, with a trailing slash', 'text/html'),
  page('/dashboard/app.js', 'dashboardScript', "The dashboard's script", 'text/javascript'),
  page('/dashboard/app.css', 'dashboardStyles', "The dashboard's styles", 'text/css'),

  operation('get', '/v1/queues', 'listQueues', 'List queues', { tag: 'Queues', access: 'admin', ok: { 200: r.queueListSchema } }),
  queueOp('put', Q, 'putQueue', 'Create a queue, or replace its whole config', {
    description: 'Omitted fields take their defaults.',
    body: queueConfigSchema(),
    ok: { 200: r.queuePutSchema },
    errors: ['INVALID_STATE'],
  }),
  queueOp('patch', Q, 'patchQueue', 'Change some fields of a queue\'s config', {
    description:
      'A JSON merge patch (RFC 7396): the fields it names change, null puts a field back to its default, the others are kept, ' +
      'publish tokens and signing secrets included. The result is checked as a whole config, as PUT checks it.',
    body: queuePatchSchema(),
    ok: { 200: r.queuePutSchema },
    errors: ['INVALID_STATE'],
  }),
  queueOp('get', Q, 'getQueue', 'A queue: its config, counts and whether it is paused', { ok: { 200: r.queueInfoSchema } }),
  queueOp('delete', Q, 'deleteQueue', 'Delete a queue and every job, group and repeat of it', { ok: { 204: null } }),
  queueOp('post', `${Q}/pause`, 'pauseQueue', 'Pause a queue: nothing is delivered until it resumes', { ok: { 200: r.queuePausedSchema } }),
  queueOp('post', `${Q}/resume`, 'resumeQueue', 'Resume a queue', { ok: { 200: r.queuePausedSchema } }),
  queueOp('post', `${Q}/repair`, 'repairQueue', 'Bring back jobs that scripts failing half way left in no index', {
    ok: { 200: r.repairReportSchema },
  }),
  queueOp('get', `${Q}/partitions`, 'listPartitions', "A queue's partitions: the database each lives on, and its counts", {
    description: 'A queue of one partition has one: the queue itself (docs/scaling-out.md).',
    ok: { 200: r.partitionListSchema },
  }),
  queueOp('post', `${Q}/partitions/{partition}/move`, 'movePartition', 'Move a partition to another database of the pool, while the queue runs', {
    description:
      'Answers once the move is done. Meanwhile calls that need the partition answer 503 PARTITION_MOVING with Retry-After (docs/scaling-out.md#moving-a-partition). One move of a partition runs at a time: another answers 409 MOVE_IN_PROGRESS. A move cut off finishes when the same call is made again.',
    body: moveInputSchema,
    ok: { 200: r.partitionSchema },
    errors: ['MOVE_IN_PROGRESS'],
  }),
  queueOp('get', `${Q}/metrics`, 'getMetrics', 'Outcomes per minute, the last 60 minutes, oldest first', { ok: { 200: r.metricsSchema } }),

  preflightOp(`${Q}/jobs`, 'enqueuePreflight', 'CORS preflight of enqueue'),
  preflightOp(`${Q}/jobs/batch`, 'enqueueBatchPreflight', 'CORS preflight of enqueue batch'),
  enqueueOp('post', `${Q}/jobs`, 'enqueue', 'Enqueue a job', {
    headers: {
      'Idempotency-Key': {
        schema: jobIdSchema,
        description: "The job's id, as the body's `id` would give it (a quoted string is taken too); a body that names another id is 400.",
      },
      ...TRACE_HEADERS,
    },
    body: jobInputSchema,
    ok: { 201: r.enqueueResultSchema, 200: r.enqueueResultSchema.or(r.publishDuplicateSchema) },
  }),
  enqueueOp('post', `${Q}/jobs/batch`, 'enqueueBatch', 'Enqueue up to 1000 jobs at once, all or none', {
    headers: TRACE_HEADERS,
    body: batchInputSchemaFor({}),
    ok: { 201: r.batchResultSchema },
  }),

  queueOp('get', `${Q}/jobs`, 'listJobs', 'A page of jobs of one state', { tag: 'Jobs', query: listJobsSchema, ok: { 200: r.jobPageSchema } }),
  queueOp('delete', `${Q}/jobs`, 'cleanJobs', 'Delete every job of a finished state', {
    tag: 'Jobs',
    query: cleanJobsSchema,
    ok: { 200: r.bulkResultSchema },
  }),
  queueOp('post', `${Q}/jobs/retry`, 'retryJobs', 'Send every failed job back to waiting', {
    tag: 'Jobs',
    body: retryJobsSchema,
    ok: { 200: r.bulkResultSchema },
  }),
  jobOp('get', `${Q}/jobs/{id}`, 'getJob', 'A job, with its attempts and its outcome callback', {
    description: 'With waitMs, answers once the job has finished, or after waitMs as it then is.',
    query: z.object({ waitMs: z.int().min(0).max(MAX_WAIT_MS).optional().describe('How long to wait for the job to finish, in ms.') }),
    ok: { 200: r.jobSchema },
  }),
  jobOp('patch', `${Q}/jobs/{id}`, 'updateJob', "Change a waiting or delayed job's data or delay", {
    body: jobPatchSchema,
    ok: { 200: r.jobSchema },
    errors: ['INVALID_STATE', 'PAYLOAD_TOO_LARGE', 'QUEUE_FULL'],
  }),
  jobOp('delete', `${Q}/jobs/{id}`, 'removeJob', 'Remove a job that is not active', { ok: { 204: null }, errors: ['INVALID_STATE'] }),
  jobOp('post', `${Q}/jobs/{id}/retry`, 'retryJob', 'Send a failed job back to waiting', { ok: { 200: r.jobSchema }, errors: ['INVALID_STATE'] }),
  jobOp('post', `${Q}/jobs/{id}/promote`, 'promoteJob', 'Make a delayed job ready now', { ok: { 200: r.jobSchema }, errors: ['INVALID_STATE'] }),
  jobOp('post', `${Q}/jobs/{id}/cancel`, 'cancelJob', 'Cancel a waiting, delayed or active job', {
    ok: { 200: r.cancelledSchema },
    errors: ['INVALID_STATE'],
  }),

  callbackOp(`${Q}/jobs/{id}/heartbeat`, 'heartbeat', 'Extend a lease (at most 24 h)', {
    body: heartbeatInputSchema,
    ok: { 200: r.heartbeatResultSchema },
  }),
  callbackOp(`${Q}/jobs/{id}/progress`, 'progress', "Record a job's progress: a number 0-100 or a JSON object of at most 4 KiB", {
    body: progressInputSchema,
    ok: { 200: r.progressResultSchema },
  }),
  callbackOp(`${Q}/jobs/{id}/complete`, 'complete', 'Complete a leased job (its result at most 64 KiB of JSON)', {
    body: completeInputSchema,
    ok: { 200: r.leaseEndSchema },
  }),
  callbackOp(`${Q}/jobs/{id}/fail`, 'fail', 'Fail an attempt: retried with backoff while attempts remain', {
    body: failInputSchema,
    ok: { 200: r.leaseEndSchema },
  }),

  groupOp('get', `${Q}/groups`, 'listGroups', 'A page of groups', { query: pageSchema, ok: { 200: r.groupPageSchema } }),
  groupOp('get', `${Q}/groups/{group}`, 'getGroup', 'A group: its state, limits and jobs in order', {
    ok: { 200: r.groupDetailSchema },
    errors: ['GROUP_NOT_FOUND'],
  }),
  groupOp('post', `${Q}/groups/{group}/pause`, 'pauseGroup', 'Pause one group', { ok: { 200: r.groupPausedSchema } }),
  groupOp('post', `${Q}/groups/{group}/resume`, 'resumeGroup', 'Resume one group', { ok: { 200: r.groupPausedSchema } }),
  groupOp('put', `${Q}/groups/{group}/limits`, 'setGroupLimits', "Set a group's own concurrency and rate limit", {
    body: groupLimitsSchema,
    ok: { 200: r.groupLimitsResultSchema },
  }),
  groupOp('delete', `${Q}/groups/{group}/limits`, 'clearGroupLimits', "Delete a group's own limits (the queue's apply)", { ok: { 204: null } }),

  repeatOp('get', `${Q}/repeats`, 'listRepeats', 'List repeatable jobs', { ok: { 200: r.repeatListSchema } }),
  repeatOp('put', `${Q}/repeats/{key}`, 'putRepeat', 'Create or replace a repeatable job', {
    body: repeatInputSchema,
    ok: { 200: r.repeatPutSchema },
  }),
  repeatOp('delete', `${Q}/repeats/{key}`, 'deleteRepeat', 'Delete a repeatable job', { ok: { 204: null }, errors: ['REPEAT_NOT_FOUND'] }),
];
