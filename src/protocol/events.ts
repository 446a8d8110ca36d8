// The job events that the SSE streams carry (issue 30, docs/events.md), as zod schemas: every
// change of a job is one event, named for its kind, with JSON data. The Worker builds them, the
// OpenAPI document describes them, and the client kit and the CLI type what they read with them.
// Data objects drop unknown fields rather than refuse them (like the outcome callback's body), so
// a client keeps working when groupq adds a field. The event's SSE `id:` is event-id.ts's.
import * as z from 'zod';
import { FINISHED_STATES } from './constants';
import { EVENT_ID_PATTERN } from './event-id';
import { epochMsSchema } from './job-input';

/** Every kind of change of a job, in the order a job usually meets them. */
export const JOB_EVENT_NAMES = ['added', 'active', 'progress', 'retrying', 'completed', 'failed', 'cancelled', 'expired'] as const;
export type JobEventName = (typeof JOB_EVENT_NAMES)[number];

/** The job events and `gap`, which is the stream's own: events were lost beyond retention. */
export const STREAM_EVENT_NAMES = [...JOB_EVENT_NAMES, 'gap'] as const;
export type StreamEventName = (typeof STREAM_EVENT_NAMES)[number];

/**
 * A job's stream ends after one of these: each finished state (constants.ts) is entered by the
 * event of its name, so `isFinished(event)` tells the client kit to stop too.
 */
export const FINAL_EVENT_NAMES = FINISHED_STATES satisfies readonly JobEventName[];

export const eventIdSchema = z
  .string()
  .regex(EVENT_ID_PATTERN, 'event ids are <ms>-<seq> in canonical decimal')
  .describe('Orders the event in its stream: send it back as Last-Event-ID to resume after it. Opaque: compare, never parse.');

const attempts = z.number().int().min(0);
/** An attempt is under way or has just ended with an answer: the first is 1. */
const attemptMade = z.number().int().min(1);

/** What every job event's data has: which job, where, in what state, after how many attempts, when. */
const jobFields = {
  id: z.string().min(1).describe('The job id.'),
  queue: z.string().min(1),
  group: z.string().min(1),
  attempt: attempts.describe('Attempts counted so far, the one under way included (the job\'s `attempts`).'),
  at: epochMsSchema.describe('When the change happened, epoch ms.'),
};

/** The job entered waiting or delayed: enqueued, or sent back by a retry by hand. */
export const addedDataSchema = z.object({
  ...jobFields,
  state: z.enum(['waiting', 'delayed']),
  runAt: epochMsSchema.optional().describe('A delayed job: when it is due.'),
}).describe('`added`: the job entered waiting or delayed (enqueued, or sent back by a retry by hand).');

/** An attempt started: the job was leased and is being delivered. */
export const activeDataSchema = z
  .object({ ...jobFields, state: z.literal('active'), attempt: attemptMade })
  .describe('`active`: an attempt started: the job was leased and is being delivered.');

/** The attempt under way reported progress. */
export const progressDataSchema = z.object({
  ...jobFields,
  state: z.literal('active'),
  attempt: attemptMade,
  progress: z.json().describe('The value the attempt reported, as GET of the job shows it.'),
}).describe('`progress`: the attempt under way reported progress.');

/**
 * An attempt failed and the job will be tried again: it waits in its group (finish.lua sends it
 * back to `waiting`) until `retryAt`. A 429 answer waits too without counting an attempt, so
 * `attempt` may stay where it was. `error` is absent for a reader who sees state only
 * (a capability on a queue with `publishEvents: "state"`).
 */
export const retryingDataSchema = z.object({
  ...jobFields,
  state: z.literal('waiting'),
  error: z.string().optional().describe('Why the attempt failed; absent where the reader sees state only.'),
  retryAt: epochMsSchema.describe('When the next attempt is due, epoch ms.'),
}).describe('`retrying`: an attempt failed (or was told to wait) and the job waits in its group until `retryAt`.');

/** The job completed; `result` is absent where the reader sees state only, or the job gave none. */
export const completedDataSchema = z.object({
  ...jobFields,
  state: z.literal('completed'),
  attempt: attemptMade,
  result: z.json().optional(),
  resultTruncated: z.boolean().optional().describe('The result was over the size kept and was cut.'),
}).describe('`completed`: the job completed. `result` is absent where the reader sees state only, or the job gave none.');

/** The job failed for good. */
export const failedDataSchema = z.object({
  ...jobFields,
  state: z.literal('failed'),
  error: z.string().optional().describe('Its last error; absent where the reader sees state only.'),
}).describe('`failed`: the job failed for good.');

/** The job was cancelled, waiting or under way. */
export const cancelledDataSchema = z
  .object({ ...jobFields, state: z.literal('cancelled') })
  .describe('`cancelled`: the job was cancelled, waiting or under way.');

/**
 * The job did not start by its deadline (ttlMs, docs/flow-control.md#job-ttl) and ended without
 * being delivered. Only a job that never started expires (expiry.lua), so `attempt` is 0.
 */
export const expiredDataSchema = z.object({
  ...jobFields,
  state: z.literal('expired'),
  attempt: z.literal(0),
  expiresAt: epochMsSchema.describe('Its deadline to start: its enqueue time + ttlMs.'),
}).describe('`expired`: the job did not start by its deadline (ttlMs) and ended without being delivered.');

/**
 * Events were lost. Either the resume asked for what follows `lastEventId`, and the stream no
 * longer holds all of it; or, live, some events of the queue never reached its hub within the
 * time it waits for them (`missing` says how many: src/core/events/order.ts), and it went on
 * after `lastEventId` without them. It has no SSE id of its own, so the reader's Last-Event-ID
 * stays put until the first event after it; a reconnect before that is told about the gap again,
 * which stays true.
 */
export const gapDataSchema = z.object({
  queue: z.string().min(1),
  group: z.string().min(1).optional().describe('A stream narrowed to one group: that group.'),
  id: z.string().min(1).optional().describe('A job\'s stream: that job.'),
  lastEventId: z.string().describe('The id the resume asked to follow (Last-Event-ID or ?lastEventId=), as sent; live, the last id before the gap.'),
  oldestEventId: eventIdSchema.nullable().describe('The oldest event the stream still holds (live: the first after the gap); null when it holds none.'),
  missing: z.number().int().min(1).optional().describe('Live: how many events of the queue never came (the gap tells every stream: they may be of any job).'),
  at: epochMsSchema,
}).describe(
  '`gap`: events were lost. A resume asked for what follows `lastEventId` and the stream no longer holds all of it, or, ' +
    'live, some events never reached the stream in time. It has no SSE id of its own.',
);

/** Each event's data schema by its name: the server builds, the client parses with the right one. */
export const eventDataSchemas = {
  added: addedDataSchema,
  active: activeDataSchema,
  progress: progressDataSchema,
  retrying: retryingDataSchema,
  completed: completedDataSchema,
  failed: failedDataSchema,
  cancelled: cancelledDataSchema,
  expired: expiredDataSchema,
  gap: gapDataSchema,
} as const satisfies Record<StreamEventName, z.ZodType>;

/** A job event as a reader gets it: the SSE `event:` name, its `id:`, and its `data:` parsed. */
function jobEvent<const N extends JobEventName, D extends z.ZodType>(name: N, data: D) {
  return z.object({ event: z.literal(name), eventId: eventIdSchema, data });
}

/**
 * One event of a stream, discriminated on its name. `eventId` is the SSE id (the envelope's, so
 * that `data.id` stays the job id); `gap` has none.
 */
export const streamEventSchema = z.discriminatedUnion('event', [
  jobEvent('added', addedDataSchema),
  jobEvent('active', activeDataSchema),
  jobEvent('progress', progressDataSchema),
  jobEvent('retrying', retryingDataSchema),
  jobEvent('completed', completedDataSchema),
  jobEvent('failed', failedDataSchema),
  jobEvent('cancelled', cancelledDataSchema),
  jobEvent('expired', expiredDataSchema),
  z.object({ event: z.literal('gap'), data: gapDataSchema }),
]);

export type StreamEvent = z.output<typeof streamEventSchema>;
export type JobEvent = Exclude<StreamEvent, { event: 'gap' }>;
export type GapEvent = Extract<StreamEvent, { event: 'gap' }>;
/** The data of the event named `N`. */
export type EventData<N extends StreamEventName> = z.output<(typeof eventDataSchemas)[N]>;
