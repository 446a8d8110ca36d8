// Every HTTP operation, one row each: its wire form (method, path, access, what it takes and
// answers: the OpenAPI document is built from these rows, src/protocol/api/openapi.ts), the engine
// function it calls and the follow-up its write needs (src/core/run/follow-ups.ts), or the
// handlers of its own for the few that need more (enqueue with its publish policy and CORS, the
// lease callbacks, the open pages). app.ts mounts every row (mount.ts); adding an operation is a
// row here, its engine function and a test (docs/internals.md#adding-an-operation).
import { etag } from 'hono/etag';
import * as z from 'zod';
import * as bulk from '../core/engine/bulk';
import * as groupLimits from '../core/engine/group-limits';
import * as jobOps from '../core/engine/job-ops';
import * as minutes from '../core/engine/minutes';
import * as move from '../core/engine/move';
import * as queues from '../core/engine/queues';
import * as reads from '../core/engine/reads';
import * as repair from '../core/engine/repair-queue';
import * as repeats from '../core/engine/repeats';
import {
  Q, TRACE_HEADERS, callbackOp, enqueueOp, groupOp, jobOp, operation, page, preflightOp, queueOp, repeatOp,
} from '../protocol/api/operation';
import * as r from '../protocol/api/responses';
import type { MinuteMetrics, PartitionInfo, QueueInfo, QueueSummary, Repeat } from '../protocol/api/types';
import { completeInputSchema, failInputSchema, heartbeatInputSchema, progressInputSchema } from '../protocol/callback-input';
import { groupLimitsSchema, queueConfigSchema, queuePatchSchema } from '../protocol/config';
import { MAX_WAIT_MS } from '../protocol/constants';
import {
  batchInputSchemaFor, cleanJobsSchema, jobIdSchema, jobInputSchema, jobPatchSchema, listJobsSchema, moveInputSchema, pageSchema,
  repeatInputSchema, retryJobsSchema,
} from '../protocol/job-input';
import * as callbacks from './callbacks';
import { capabilityCors, getJobRoute, mintEventsUrl, mintInputSchema } from './capabilities';
import { enqueue, enqueueBatch, enqueueCors } from './enqueue';
import { EVENT_STREAM, LAST_EVENT_ID_HEADER, jobEvents, jobEventsQuerySchema, queueEvents, queueEventsQuerySchema } from './events';
import { health } from './health';
import { adminAuth } from './middleware/auth';
import type { Row } from './mount';
import { asset, home, openApi } from './pages';
import { metricsAuth, prometheusMetrics } from './prometheus';

/** A queue's config as PUT and PATCH answer it: without its paused flag and oldest job. */
const configOf = ({ name, config, counts }: QueueInfo) => ({ name, config, counts });

export const OPERATIONS: Row[] = [
  operation('get', '/', 'home', 'Where to go from here', { handle: [home], ok: { 200: r.homeSchema } }),
  operation('get', '/health', 'health', 'Whether the Worker reaches Redis', {
    handle: [health],
    description: 'Open. Without the admin token, the answer this isolate found within the last second, and no database by name; with it, checked now, each database of a pool named.',
    ok: { 200: r.healthSchema, 503: r.healthSchema },
  }),
  operation('get', '/metrics', 'prometheusMetrics', 'Every queue in the Prometheus text format', {
    handle: [metricsAuth, prometheusMetrics],
    access: 'admin',
    description:
      'For the admin token, or GROUPQ_METRICS_TOKEN (which opens this route alone). Jobs by state, groups, lifetime counters and ' +
      'wait and run histograms, per queue and partition; a scrape reads a bounded number of queues (docs/metrics.md).',
    ok: { 200: { mediaType: 'text/plain' } },
  }),
  page('/openapi.json', 'openapi', 'This document', 'application/json', { handle: [etag(), openApi] }),
  page('/dashboard', 'dashboard', 'The dashboard (it asks for the admin token)', 'text/html', { handle: [etag(), asset('/dashboard/')] }),
  page('/dashboard/', 'dashboardSlash', 'The dashboard, with a trailing slash', 'text/html', { handle: [etag(), asset('/dashboard/')] }),
  page('/dashboard/app.js', 'dashboardScript', "The dashboard's script", 'text/javascript', {
    handle: [etag(), asset('/dashboard/app.js')],
  }),
  page('/dashboard/app.css', 'dashboardStyles', "The dashboard's styles", 'text/css', { handle: [etag(), asset('/dashboard/app.css')] }),

  operation('get', '/v1/queues', 'listQueues', 'List queues', {
    call: queues.listQueues, answer: (list: QueueSummary[]) => ({ queues: list }),
    tag: 'Queues',
    access: 'admin',
    ok: { 200: r.queueListSchema },
  }),
  queueOp('put', Q, 'putQueue', 'Create a queue, or replace its whole config', {
    call: queues.putQueue, then: 'changingConfig', answer: configOf,
    description: 'Omitted fields take their defaults.',
    body: queueConfigSchema(),
    ok: { 200: r.queuePutSchema },
    errors: ['INVALID_STATE'],
  }),
  queueOp('patch', Q, 'patchQueue', 'Change some fields of a queue\'s config', {
    call: queues.patchQueue, then: 'changingConfig', answer: configOf,
    description:
      'A JSON merge patch (RFC 7396): the fields it names change, null puts a field back to its default, the others are kept, ' +
      'publish tokens and signing secrets included. The result is checked as a whole config, as PUT checks it.',
    body: queuePatchSchema(),
    ok: { 200: r.queuePutSchema },
    errors: ['INVALID_STATE'],
  }),
  queueOp('get', Q, 'getQueue', 'A queue: its config, counts and whether it is paused', {
    call: queues.getQueue,
    ok: { 200: r.queueInfoSchema },
  }),
  queueOp('delete', Q, 'deleteQueue', 'Delete a queue and every job, group and repeat of it', {
    call: queues.deleteQueue, then: 'changingConfig',
    ok: { 204: null },
  }),
  queueOp('post', `${Q}/pause`, 'pauseQueue', 'Pause a queue: nothing is delivered until it resumes', {
    call: queues.pauseQueue,
    ok: { 200: r.queuePausedSchema },
  }),
  queueOp('post', `${Q}/resume`, 'resumeQueue', 'Resume a queue', {
    call: queues.resumeQueue, then: 'thenDrain',
    ok: { 200: r.queuePausedSchema },
  }),
  queueOp('post', `${Q}/repair`, 'repairQueue', 'Bring back jobs that scripts failing half way left in no index', {
    call: repair.repairQueue, then: 'thenDrain',
    ok: { 200: r.repairReportSchema },
  }),
  queueOp('get', `${Q}/partitions`, 'listPartitions', "A queue's partitions: the database each lives on, and its counts", {
    call: queues.listPartitions, answer: (partitions: PartitionInfo[]) => ({ partitions }),
    description: 'A queue of one partition has one: the queue itself (docs/scaling-out.md).',
    ok: { 200: r.partitionListSchema },
  }),
  queueOp('post', `${Q}/partitions/{partition}/move`, 'movePartition', 'Move a partition to another database of the pool, while the queue runs', {
    call: move.movePartition,
    description:
      'Answers once the move is done. Meanwhile calls that need the partition answer 503 PARTITION_MOVING with Retry-After (docs/scaling-out.md#moving-a-partition). One move of a partition runs at a time: another answers 409 MOVE_IN_PROGRESS. A move cut off finishes when the same call is made again.',
    body: moveInputSchema,
    ok: { 200: r.partitionSchema },
    errors: ['MOVE_IN_PROGRESS'],
  }),
  // The streams have handlers of their own (events.ts): the answer is SSE, not one JSON value.
  queueOp('get', `${Q}/events`, 'queueEvents', "The queue's job events as they happen (Server-Sent Events)", {
    handle: [adminAuth, queueEvents],
    tag: 'Events',
    description:
      'Every change of a job of the queue (or of one group, with `group`) is one event, named for its kind, with the job\'s id, ' +
      'group, state and attempt as its JSON data, and an id to resume after (Last-Event-ID). A comment every 15 s keeps the ' +
      'stream open. A resume gets the events held after its id (5 minutes, 10,000 events at most), a `gap` event first when ' +
      'some are no longer held (docs/events.md).',
    headers: LAST_EVENT_ID_HEADER,
    query: queueEventsQuerySchema,
    ok: { 200: EVENT_STREAM },
  }),
  queueOp('get', `${Q}/metrics`, 'getMetrics', 'Outcomes per minute, the last 60 minutes, oldest first', {
    call: minutes.getMinutes, answer: (ring: MinuteMetrics[]) => ({ minutes: ring }),
    ok: { 200: r.metricsSchema },
  }),

  preflightOp(`${Q}/jobs`, 'enqueuePreflight', 'CORS preflight of enqueue', { handle: [enqueueCors] }),
  preflightOp(`${Q}/jobs/batch`, 'enqueueBatchPreflight', 'CORS preflight of enqueue batch', { handle: [enqueueCors] }),
  enqueueOp('post', `${Q}/jobs`, 'enqueue', 'Enqueue a job', {
    handle: [enqueueCors, enqueue],
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
    handle: [enqueueCors, enqueueBatch],
    headers: TRACE_HEADERS,
    body: batchInputSchemaFor({}),
    ok: { 201: r.batchResultSchema },
  }),

  queueOp('get', `${Q}/jobs`, 'listJobs', 'A page of jobs of one state', {
    call: reads.listJobs,
    tag: 'Jobs',
    query: listJobsSchema,
    ok: { 200: r.jobPageSchema },
  }),
  queueOp('delete', `${Q}/jobs`, 'cleanJobs', 'Delete every job of a finished state', {
    call: bulk.cleanJobs,
    tag: 'Jobs',
    query: cleanJobsSchema,
    ok: { 200: r.bulkResultSchema },
  }),
  queueOp('post', `${Q}/jobs/retry`, 'retryJobs', 'Send every failed job back to waiting', {
    call: bulk.retryJobs, then: 'thenDrain',
    tag: 'Jobs',
    body: retryJobsSchema,
    ok: { 200: r.bulkResultSchema },
  }),
  // GET of a job and its stream open with the admin token or the job's events URL (capabilities.ts).
  jobOp('get', `${Q}/jobs/{id}`, 'getJob', 'A job, with its attempts and its outcome callback', {
    handle: [capabilityCors, getJobRoute],
    access: 'capability',
    description:
      'With waitMs, answers once the job has finished, or after waitMs as it then is. Opened by the capability of the ' +
      "job's eventsUrl (`?cap=`, no Authorization header) instead of the admin token, it answers what the capability sees " +
      '(CapabilityJob: never the data), to any origin (CORS).',
    query: z.object({ waitMs: z.int().min(0).max(MAX_WAIT_MS).optional().describe('How long to wait for the job to finish, in ms.') }),
    ok: { 200: r.jobSchema.or(r.capabilityJobSchema) },
  }),
  jobOp('get', `${Q}/jobs/{id}/events`, 'jobEvents', "A job's events until it ends (Server-Sent Events)", {
    handle: [capabilityCors, jobEvents],
    access: 'capability',
    tag: 'Events',
    description:
      'First the job as it is, as the event that brought it there, then each change of it, until the event that ends it ' +
      '(completed, failed, cancelled, expired); the stream of a job that has ended is that end alone. A resume ' +
      '(Last-Event-ID) gets what followed its id instead of the state, and 204 once it has seen the end, which stops ' +
      "EventSource (docs/events.md). The job's eventsUrl opens it without an Authorization header, from any origin " +
      '(CORS); a capability minted to see states only gets the events without their result and error.',
    headers: LAST_EVENT_ID_HEADER,
    query: jobEventsQuerySchema,
    ok: { 200: EVENT_STREAM, 204: null },
  }),
  jobOp('post', `${Q}/jobs/{id}/events-url`, 'mintEventsUrl', "An events URL of a job, to hand a page", {
    handle: [adminAuth, mintEventsUrl],
    tag: 'Events',
    description:
      "The job's stream route with a capability in its query string, as a publish token's enqueue answers it: it opens that " +
      'job\'s stream and GET without a token, from any origin, until `expiresAt`, and nothing else. The body may be left out.',
    body: mintInputSchema,
    optionalBody: true,
    ok: { 200: r.eventsUrlSchema },
  }),
  jobOp('patch', `${Q}/jobs/{id}`, 'updateJob', "Change a waiting or delayed job's data or delay", {
    call: jobOps.updateJob, then: 'noteTimer',
    body: jobPatchSchema,
    ok: { 200: r.jobSchema },
    errors: ['INVALID_STATE', 'PAYLOAD_TOO_LARGE', 'QUEUE_FULL'],
  }),
  jobOp('delete', `${Q}/jobs/{id}`, 'removeJob', 'Remove a job that is not active', {
    call: jobOps.removeJob,
    ok: { 204: null },
    errors: ['INVALID_STATE'],
  }),
  jobOp('post', `${Q}/jobs/{id}/retry`, 'retryJob', 'Send a failed job back to waiting', {
    call: jobOps.retryJob, then: 'thenDrain',
    ok: { 200: r.jobSchema },
    errors: ['INVALID_STATE'],
  }),
  jobOp('post', `${Q}/jobs/{id}/promote`, 'promoteJob', 'Make a delayed job ready now', {
    call: jobOps.promoteJob, then: 'thenDrain',
    ok: { 200: r.jobSchema },
    errors: ['INVALID_STATE'],
  }),
  jobOp('post', `${Q}/jobs/{id}/cancel`, 'cancelJob', 'Cancel a waiting, delayed or active job', {
    call: jobOps.cancelJob, then: 'thenDrain',
    ok: { 200: r.cancelledSchema },
    errors: ['INVALID_STATE'],
  }),

  callbackOp(`${Q}/jobs/{id}/heartbeat`, 'heartbeat', 'Extend a lease (at most 24 h)', {
    handle: [callbacks.heartbeat],
    body: heartbeatInputSchema,
    ok: { 200: r.heartbeatResultSchema },
  }),
  callbackOp(`${Q}/jobs/{id}/progress`, 'progress', "Record a job's progress: a number 0-100 or a JSON object of at most 4 KiB", {
    handle: [callbacks.progress],
    body: progressInputSchema,
    ok: { 200: r.progressResultSchema },
  }),
  callbackOp(`${Q}/jobs/{id}/complete`, 'complete', 'Complete a leased job (its result at most 64 KiB of JSON)', {
    handle: [callbacks.complete],
    body: completeInputSchema,
    ok: { 200: r.leaseEndSchema },
  }),
  callbackOp(`${Q}/jobs/{id}/fail`, 'fail', 'Fail an attempt: retried with backoff while attempts remain', {
    handle: [callbacks.fail],
    body: failInputSchema,
    ok: { 200: r.leaseEndSchema },
  }),

  groupOp('get', `${Q}/groups`, 'listGroups', 'A page of groups', {
    call: reads.listGroups,
    query: pageSchema,
    ok: { 200: r.groupPageSchema },
  }),
  groupOp('get', `${Q}/groups/{group}`, 'getGroup', 'A group: its state, limits and jobs in order', {
    call: reads.getGroup,
    ok: { 200: r.groupDetailSchema },
    errors: ['GROUP_NOT_FOUND'],
  }),
  groupOp('post', `${Q}/groups/{group}/pause`, 'pauseGroup', 'Pause one group', {
    call: queues.pauseGroup,
    ok: { 200: r.groupPausedSchema },
  }),
  groupOp('post', `${Q}/groups/{group}/resume`, 'resumeGroup', 'Resume one group', {
    call: queues.resumeGroup, then: 'thenDrain',
    ok: { 200: r.groupPausedSchema },
  }),
  groupOp('put', `${Q}/groups/{group}/limits`, 'setGroupLimits', "Set a group's own concurrency and rate limit", {
    call: groupLimits.setGroupLimits, then: 'thenDrain',
    body: groupLimitsSchema,
    ok: { 200: r.groupLimitsResultSchema },
  }),
  groupOp('delete', `${Q}/groups/{group}/limits`, 'clearGroupLimits', "Delete a group's own limits (the queue's apply)", {
    call: groupLimits.clearGroupLimits, then: 'thenDrain',
    ok: { 204: null },
  }),

  repeatOp('get', `${Q}/repeats`, 'listRepeats', 'List repeatable jobs', {
    call: repeats.listRepeats, answer: (list: Repeat[]) => ({ repeats: list }),
    ok: { 200: r.repeatListSchema },
  }),
  repeatOp('put', `${Q}/repeats/{key}`, 'putRepeat', 'Create or replace a repeatable job', {
    call: repeats.putRepeat, then: 'noteTimer',
    body: repeatInputSchema,
    ok: { 200: r.repeatPutSchema },
  }),
  repeatOp('delete', `${Q}/repeats/{key}`, 'deleteRepeat', 'Delete a repeatable job', {
    call: repeats.deleteRepeat,
    ok: { 204: null },
    errors: ['REPEAT_NOT_FOUND'],
  }),
];
