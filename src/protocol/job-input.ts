// What producers send: zod schemas for jobs, job updates and repeatable jobs.
import * as z from 'zod';
import { type ConfigOptions, DAY_MS, TTL_MAX_MS, YEAR_MS, backoffSchema, callbackUrlSchema } from './config';
import { FINISHED_STATES, MAX_BATCH } from './constants';

/** URLs resolve these as path segments (`jobs/../complete`): no route could reach such a name. */
const notDotSegment = (name: string) => name !== '.' && name !== '..';

const QUEUE_NAME = /^[A-Za-z0-9._-]{1,64}$/;
/** Visible ASCII only: ids travel in headers and URLs. */
const JOB_ID = /^[\x21-\x7E]{1,256}$/;

export const queueNameSchema = z
  .string()
  .regex(QUEUE_NAME, 'queue names are 1-64 of A-Z a-z 0-9 . _ -')
  .refine(notDotSegment, 'a queue name cannot be "." or ".."');

export const jobIdSchema = z
  .string()
  .regex(JOB_ID, 'job ids are 1-256 visible ASCII characters')
  .refine(notDotSegment, 'a job id cannot be "." or ".."');

// queueNameSchema's and jobIdSchema's checks without zod, for the drain's hot path (each settle
// checks its queue and every settlement's id): true exactly when the schema accepts `value`.
export const isQueueName = (value: unknown): value is string => typeof value === 'string' && QUEUE_NAME.test(value) && notDotSegment(value);
export const isJobId = (value: unknown): value is string => typeof value === 'string' && JOB_ID.test(value) && notDotSegment(value);

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001F\u007F-\u009F]/;
/** Format characters (bidi controls, zero-width ones): they make one group look like another on screen. */
const FORMAT = /\p{Cf}/u;
/**
 * A group as a path or query parameter names one: groups made before format characters were
 * refused may hold them, and must stay reachable (to resume, list or drain them).
 */
export const groupParamSchema = z
  .string()
  .refine((g) => [...g].length >= 1 && [...g].length <= 256, 'groups are 1-256 characters')
  .refine((g) => !CONTROL.test(g), 'groups may not contain control characters')
  .refine((g) => g.isWellFormed(), 'groups must be valid UTF-8')
  .refine(notDotSegment, 'a group cannot be "." or ".."');
/** A group a job or a repeat is sent to: a new name, so no format characters either. */
export const groupNameSchema = groupParamSchema.refine(
  (g) => !FORMAT.test(g),
  'groups may not contain format characters (bidi controls, zero-width characters)',
);

/** The runs of repeatable jobs are `repeat:<key>:<runAt>` (commit-repeat.lua): no producer may send such an id. */
export const REPEAT_ID_PREFIX = 'repeat:';

/** Epoch ms up to 10^14 - 1 (year 5138): Redis' cjson keeps 14 significant digits exactly. */
export const epochMsSchema = z.number().int().min(0).max(99_999_999_999_999);

export const debounceSchema = z
  .object({
    key: z.string().min(1).max(256),
    delayMs: z.number().int().min(0).max(DAY_MS),
    /** The job starts no later than its first enqueue + maxDelayMs. */
    maxDelayMs: z.number().int().min(0).max(YEAR_MS).optional(),
  })
  .strict();

/** A job as producers send it; `callbackUrl` is checked like the queue's URLs (`options`). */
export function jobInputSchemaFor(options: ConfigOptions) {
  return z
    .object({
      group: groupNameSchema,
      data: z.json().default(null),
      id: jobIdSchema.refine((id) => !id.startsWith(REPEAT_ID_PREFIX), 'ids starting with repeat: belong to the scheduler').optional(),
      /** Order inside the group. @default the enqueue time */
      orderMs: epochMsSchema.optional(),
      delayMs: z.number().int().min(0).max(YEAR_MS).optional(),
      runAt: epochMsSchema.optional(),
      maxAttempts: z.number().int().min(1).max(1000).optional(),
      backoff: backoffSchema.optional(),
      timeoutMs: z.number().int().min(100).max(DAY_MS).optional(),
      /** Where this job's outcome is POSTed when it ends. @default the queue's callbackUrl */
      callbackUrl: callbackUrlSchema(options).optional(),
      /** Across groups, higher starts first; inside a group order never changes. @default 0 */
      priority: z.number().int().min(-1000).max(1000).optional(),
      /**
       * Ends the job as `expired`, never delivered, if it has not started this long after its
       * enqueue (docs/flow-control.md#job-ttl). Once started it does not expire. @default none
       */
      ttlMs: z.number().int().min(1).max(TTL_MAX_MS).optional(),
      /** Collapses enqueues with the same key into one waiting job (docs/flow-control.md#debounce). */
      debounce: debounceSchema.optional(),
      /**
       * Keep its end and result for 5 minutes after it completes, even on a queue that keeps no
       * completed jobs, so that a waiter reads them (the client's addAndWait sets it).
       */
      keepResult: z.boolean().optional(),
    })
    .strict()
    .refine((job) => job.delayMs === undefined || job.runAt === undefined, {
      message: 'give delayMs or runAt, not both',
      path: ['runAt'],
    })
    .refine((job) => job.debounce === undefined || (job.delayMs === undefined && job.runAt === undefined), {
      message: 'debounce sets when the job starts: give no delayMs or runAt with it',
      path: ['debounce'],
    });
}

/** The job schema's type (what the client accepts). */
export const jobInputSchema = jobInputSchemaFor({});

export function batchInputSchemaFor(options: ConfigOptions) {
  return z
    .object({ jobs: z.array(jobInputSchemaFor(options)).min(1, 'a batch needs at least one job').max(MAX_BATCH) })
    .strict();
}

export const jobPatchSchema = z
  .object({ data: z.json().optional(), delayMs: z.number().int().min(0).max(YEAR_MS).optional() })
  .strict()
  .refine((p) => p.data !== undefined || p.delayMs !== undefined, 'give data and/or delayMs');

export const JOB_STATES = ['waiting', 'delayed', 'active', 'completed', 'failed', 'cancelled', 'expired'] as const;
export type JobState = (typeof JOB_STATES)[number];

/** `held`: waiting for a time (a retry's backoff or the ordering window). */
export type GroupState = 'ready' | 'active' | 'held' | 'paused' | 'idle';

/** An opaque cursor (cursors.ts): a page's position by key, the last member can be long. */
const cursorSchema = z.string().max(4096);

/** States whose jobs `POST /jobs/retry` sends back to waiting in bulk. */
export const RETRYABLE_STATES = ['failed'] as const;

export const cleanJobsSchema = z.object({ state: z.enum(FINISHED_STATES) }).strict();
export const retryJobsSchema = z.object({ state: z.enum(RETRYABLE_STATES) }).strict();

export const listJobsSchema = z
  .object({
    state: z.enum(JOB_STATES).default('waiting'),
    group: groupParamSchema.optional(),
    limit: z.coerce.number().int().min(1).max(1000).default(50),
    cursor: cursorSchema.optional(),
  })
  .strict();

export const pageSchema = z
  .object({
    limit: z.coerce.number().int().min(1).max(1000).default(50),
    cursor: cursorSchema.optional(),
  })
  .strict();

/** A partition of a queue, in a path (docs/scaling-out.md#moving-a-partition). */
export const partitionParamSchema = z.coerce.number().int().min(0).max(255);
/** Where a partition moves: a database of the pool, by its index. */
export const moveInputSchema = z.object({ database: z.number().int().min(0).max(31) }).strict();

export const repeatKeySchema = z.string().regex(/^[A-Za-z0-9._:-]{1,128}$/, 'repeat keys are 1-128 of A-Z a-z 0-9 . _ : -');

export const repeatInputSchema = z
  .object({
    group: groupNameSchema,
    data: z.json().default(null),
    /** Interval in ms (>= 1000). */
    every: z.number().int().min(1000).max(YEAR_MS).optional(),
    /** A 5-field cron pattern. */
    pattern: z.string().min(9).max(256).optional(),
    /** IANA time zone for `pattern`. @default 'UTC' */
    tz: z.string().min(1).max(64).default('UTC'),
    startAt: epochMsSchema.optional(),
    endAt: epochMsSchema.optional(),
    limit: z.number().int().min(1).max(1_000_000_000).optional(),
  })
  .strict()
  .refine((r) => (r.every === undefined) !== (r.pattern === undefined), {
    message: 'give exactly one of every and pattern',
    path: ['every'],
  });
