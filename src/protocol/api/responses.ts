// What the HTTP API answers with, as zod schemas: the one source of the public shapes
// (types.ts derives its types from them) and of the OpenAPI document's response schemas
// (openapi.ts). Nothing parses responses with them at run time, so only `import type` reaches
// this module from the Worker and the client: the client's bundle stays free of zod.
import * as z from 'zod';
import { type QueueConfig, type QueueConfigInput, groupLimitsSchema, queueConfigFields } from '../config';
import { ERROR_STATUS } from '../errors';
import { type GroupState, JOB_STATES } from '../job-input';

const count = z.number().int().min(0);
/** Epoch milliseconds. */
const instant = z.number().int();

export const jobStateSchema = z.enum(JOB_STATES);

/** `held`: waiting for a time (a retry's backoff or the ordering window); `idle`: no jobs. */
export const GROUP_STATES = ['ready', 'active', 'held', 'paused', 'idle'] as const satisfies readonly GroupState[];
export const groupStateSchema = z.enum(GROUP_STATES);

export const queueCountsSchema = z.object({
  waiting: count,
  delayed: count,
  active: count,
  completed: count,
  failed: count,
  cancelled: count,
  expired: count.describe('Kept jobs that did not start by their deadline (ttlMs).'),
  groups: count.describe('Groups holding a waiting or active job.'),
});

/**
 * The config as the API shows it (QueueConfig): every field with its default filled in, publish
 * tokens as their count, signing secrets as whether they are set (both are write-only).
 */
export const queueConfigViewSchema = queueConfigFields()
  .omit({ publishTokens: true, signingSecret: true, signingSecretNext: true })
  .extend({
    publishTokens: count.describe('How many publish tokens the queue has (they are write-only).'),
    signingSecret: z.boolean().describe('Whether the queue has its own signing secret (write-only).'),
    signingSecretNext: z.boolean().describe('Whether a next signing secret is set, while rotating (write-only).'),
  });

/** The oldest job that could start now (its group idle): what the dashboard's overview ages. */
export const oldestReadySchema = z
  .object({
    id: z.string(),
    orderMs: instant.describe('Its orderMs: when it was enqueued, unless its producer gave one.'),
  })
  .describe(
    "The waiting job with the lowest orderMs among those that could start now (the head of a ready group, or a job a group's concurrency offers), so its wait is the queue's doing: its concurrency or rate limit, a pause, a drain that falls behind. Jobs behind their group's active job, in a held or paused group, and delayed jobs are not counted. Absent when no job is ready.",
  );

export const queueInfoSchema = z.object({
  name: z.string(),
  config: queueConfigViewSchema,
  paused: z.boolean(),
  counts: queueCountsSchema,
  oldestReady: oldestReadySchema.optional(),
});

export const queueSummarySchema = queueInfoSchema.omit({ config: true });
/** PUT of a queue answers it as stored, without `paused` (a new queue is not paused; a replaced one keeps its state). */
export const queuePutSchema = queueInfoSchema.omit({ paused: true, oldestReady: true });

/** A URL that opens one job's events and GET without a token: `?cap=` carries a capability to that job alone. */
const eventsUrl = z
  .string()
  .describe(
    "The job's event stream, `/v1/queues/{queue}/jobs/{id}/events?cap=<capability>`, absolute: EventSource opens it without an " +
      'Authorization header, and the same query string opens GET of the job. The capability opens that one job and nothing else, ' +
      "until it expires (docs/http-api.md#following-a-job-from-a-browser).",
  );

export const enqueueResultSchema = z.object({
  id: z.string(),
  state: z.enum([...JOB_STATES, 'removed']).describe('The state the job entered; the same call may already have leased it.'),
  duplicate: z.literal(true).optional().describe('The id was known: a kept job (its state now), or one that ended inside dedupWindowMs.'),
  debounced: z.literal(true).optional().describe("A waiting job with the same debounce key took this enqueue's data: `id` is that job."),
  eventsUrl: eventsUrl
    .optional()
    .describe(
      "To a publish token only, for a new job, unless the queue's publishEvents is \"none\": the job's event stream, " +
        '`/v1/queues/{queue}/jobs/{id}/events?cap=<capability>`, absolute, valid 15 minutes. EventSource opens it without an ' +
        'Authorization header, and the same query string opens GET of the job; nothing else (docs/http-api.md#following-a-job-from-a-browser).',
    ),
});

/**
 * What a publish token learns of a duplicate: its id only, and no `eventsUrl` (it may not have
 * made that job: `pub:` ids are shared by every holder of the token, and the backend may name them).
 */
export const publishDuplicateSchema = z
  .object({ id: z.string(), duplicate: z.literal(true) })
  .describe('A publish token learns only the id of a duplicate, and gets no eventsUrl for it: it may not have made that job.');

/** The admin's mint of a job's events URL (POST .../jobs/{id}/events-url). */
export const eventsUrlSchema = z.object({
  eventsUrl,
  expiresAt: instant.describe('When the capability stops opening anything, epoch ms; a stream opened before then runs on.'),
});

/** What a bulk action did: `done` false when jobs of that state remain (its budget ran out: call again). */
export const bulkResultSchema = z
  .object({ count, done: z.boolean() })
  .describe('`done` false: jobs of that state remain (the budget of one call ran out): call again.');

export const groupSummarySchema = z.object({
  group: z.string(),
  waiting: count,
  active: count.describe('Jobs of the group in flight now, up to `concurrency`.'),
  state: groupStateSchema,
  concurrency: count.describe('How many of its jobs may be in flight at once: its own limit, or the queue\'s groupConcurrency.'),
});

export const repeatSchema = z.object({
  key: z.string(),
  group: z.string(),
  data: z.unknown(),
  every: z.number().int().optional(),
  pattern: z.string().optional(),
  tz: z.string(),
  startAt: instant.optional(),
  endAt: instant.optional(),
  limit: z.number().int().optional(),
  count: count.describe('Runs created so far.'),
  nextRunAt: instant.nullable().describe('null once `limit` or `endAt` ended the series.'),
});

/** One minute of a queue's activity (GET /v1/queues/{queue}/metrics). */
export const minuteMetricsSchema = z.object({
  at: instant.describe("Epoch ms of the minute's start."),
  completed: count.describe('Jobs that finished completed.'),
  failed: count.describe('Jobs that moved to failed (attempts exhausted, or not retryable).'),
  retried: count.describe('Failed attempts that will be retried, expired leases included.'),
});

/** How a job's outcome callback is going (GET of one job only). */
export const outcomeStatusSchema = z.object({
  state: z.enum(['pending', 'delivered', 'abandoned']),
  attempts: count.describe('Attempts made, the one under way included.'),
  nextAttemptAt: instant.optional().describe('When the next attempt is due (or the one under way gives up): pending only.'),
  lastError: z.string().optional(),
  deliveredAt: instant.optional(),
});

/** How one attempt ended; `expired`: its lease ran out without an answer. */
export const attemptOutcomeSchema = z.enum(['completed', 'failed', 'expired', 'cancelled']);

export const attemptSchema = z.object({
  attempt: z.number().int().min(1).describe('1-based, counted as `attempts` is (a retry by hand starts again at 1).'),
  startedAt: instant,
  finishedAt: instant,
  outcome: attemptOutcomeSchema,
  status: z.number().int().optional().describe('The endpoint\'s HTTP status, when it answered the delivery (not a 202).'),
  error: z.string().optional(),
  batch: z
    .object({
      id: z.string().describe('The batch\'s webhook-id (`bat_...`).'),
      index: z.number().int().min(0).describe('The job\'s place in the batch, 0 first.'),
      size: z.number().int().min(1).describe('How many jobs the batch carried.'),
    })
    .optional()
    .describe('The batch this attempt was delivered in, on a queue with `batch` set (docs/batches.md).'),
});

export const jobDebounceSchema = z.object({ key: z.string(), deadline: instant.optional() });

export const jobSchema = z.object({
  id: z.string(),
  queue: z.string(),
  group: z.string(),
  data: z.unknown(),
  state: jobStateSchema,
  orderMs: z.number().int(),
  attempts: count,
  maxAttempts: z.number().int(),
  createdAt: instant,
  priority: z.number().int().describe('Across groups, a higher priority starts first (docs/flow-control.md#priority).'),
  debounce: jobDebounceSchema.optional().describe('A debounced job: its key, and the latest it starts (first enqueue + maxDelayMs), if capped.'),
  runAt: instant.optional(),
  expiresAt: instant.optional().describe('A job with a ttlMs: its deadline to start, shown while it has not started (it ends expired unless it starts by then) and on an expired job (docs/flow-control.md#job-ttl).'),
  startedAt: instant.optional(),
  finishedAt: instant.optional(),
  leaseExpiresAt: instant.optional(),
  result: z.unknown().optional(),
  resultTruncated: z.boolean().optional(),
  error: z.string().optional(),
  progress: z.unknown().optional(),
  history: z.array(attemptSchema).optional().describe('The last 10 attempts, oldest first: in GET of one job only.'),
  traceparent: z.string().optional().describe('The W3C trace context its producer enqueued it with, forwarded on each delivery (docs/tracing.md).'),
  tracestate: z.string().optional().describe('The tracestate that came with its traceparent.'),
  callbackUrl: z.string().optional().describe('GET of one job: where its outcome is POSTed (its own URL or its queue\'s).'),
  outcome: outcomeStatusSchema.optional().describe('GET of one job: its outcome callback, while groupq keeps a trace of it.'),
});

/**
 * A job as the holder of its events URL's capability sees it (GET of the job with `?cap=`): where
 * it stands, never its data; its result and error only where the capability says `result`.
 */
export const capabilityJobSchema = jobSchema
  .pick({
    id: true, queue: true, group: true, state: true, attempts: true, progress: true,
    createdAt: true, runAt: true, expiresAt: true, startedAt: true, finishedAt: true,
    result: true, resultTruncated: true, error: true,
  })
  .describe(
    "GET of a job with its events URL's capability (`?cap=`): its state, attempts, progress and times, never its data; its " +
      "result and error only when the capability was minted to see them (the queue's publishEvents \"result\").",
  );

/** A page of a listing: `cursor` null on the last page. */
const cursor = z.string().nullable().describe('Pass it back as `cursor` for the next page; null on the last page.');

export const jobPageSchema = z.object({ jobs: z.array(jobSchema), cursor });
export const groupPageSchema = z.object({ groups: z.array(groupSummarySchema), cursor });

/** GET of one group: its state, its own limits (null: the queue's apply), and its jobs in order. */
export const groupDetailSchema = z.object({
  group: z.string(),
  state: groupStateSchema,
  limits: groupLimitsSchema.nullable(),
  active: count,
  concurrency: count,
  jobs: z.array(jobSchema),
});

export const groupLimitsResultSchema = z.object({ group: z.string(), limits: groupLimitsSchema });
export const groupPausedSchema = z.object({ group: z.string(), state: groupStateSchema });
export const queuePausedSchema = z.object({ name: z.string(), paused: z.boolean() });
export const queueListSchema = z.object({ queues: z.array(queueSummarySchema) });
export const batchResultSchema = z.object({ jobs: z.array(z.union([enqueueResultSchema, publishDuplicateSchema])) });
export const repeatListSchema = z.object({ repeats: z.array(repeatSchema) });
export const repeatPutSchema = z.object({ key: z.string(), nextRunAt: instant.nullable() });
export const metricsSchema = z.object({ minutes: z.array(minuteMetricsSchema) });
export const partitionSchema = z.object({
  partition: count,
  database: count.describe('The database of the pool it lives on, by its index (0: the control database).'),
  counts: queueCountsSchema,
});
export const partitionListSchema = z.object({ partitions: z.array(partitionSchema) });
export const repairReportSchema = z.object({
  reindexed: count.describe('Job records put back into the index they were missing from.'),
  offered: count.describe('Groups whose next job was offered again.'),
});
export const cancelledSchema = z.object({ id: z.string(), state: z.literal('cancelled') });
/** complete and fail: the state the job moved to (`waiting`: it will be retried). */
export const leaseEndSchema = z.object({ state: z.enum(['completed', 'waiting', 'failed']) });
export const heartbeatResultSchema = z.object({ expiresAt: instant });
export const progressResultSchema = z.object({}).strict();

const up = z.enum(['ok', 'down']);
export const healthSchema = z.object({
  ok: z.boolean().describe('Every database answered (without the admin token: as this isolate found within the last second).'),
  redis: up.describe('Database 0 (the control database; the only one without a pool). Without the admin token: whether every database answered.'),
  databases: z.array(up).optional().describe('With a pool of databases (docs/scaling-out.md) and the admin token: each one, by index, database 0 first.'),
});
export const homeSchema = z.object({
  name: z.literal('groupq'),
  dashboard: z.string(),
  health: z.string(),
  api: z.string(),
  openapi: z.string(),
  docs: z.string(),
});

export const errorCodeSchema = z.enum(Object.keys(ERROR_STATUS) as [keyof typeof ERROR_STATUS, ...(keyof typeof ERROR_STATUS)[]]);

/** The one error shape of every failure: {"error":{code,message,details?}}. */
export const errorBodySchema = z
  .object({
    error: z
      .object({
        code: errorCodeSchema,
        message: z.string().min(1),
        details: z.unknown().optional().describe('What the code needs said: the issues of a VALIDATION_FAILED, the Allow list of a 405, ...'),
        requestId: z
          .string()
          .optional()
          .describe("The request's id, as its x-request-id header says: the key to its lines in the Worker's log (docs/logs.md)"),
      })
      .strict(),
  })
  .strict();

/** The public config's type, for the compile-time check that the schema above is QueueConfig. */
export type QueueConfigView = z.output<typeof queueConfigViewSchema>;
export type { QueueConfig, QueueConfigInput };
