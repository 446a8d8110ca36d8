// The body of a batch delivery and the endpoint's answer to it (docs/batches.md), as zod schemas:
// on a queue with `batch` set, every delivery carries up to `batch.maxSize` consecutive jobs of
// one group, each element shaped exactly as a single job's delivery body. The Worker builds the
// body and reads the answer, the receiver (src/receiver) parses the body and writes the answer,
// so both sides share one description. Plain module: zod only, nothing that needs Redis or the Worker.
import * as z from 'zod';
import { type Delivery, deliveryBodySchema } from './delivery-body';

/**
 * Every batch's `webhook-id` starts with this (a single job's delivery with `msg_`, an outcome
 * callback with `out_`): the signed id names the kind, so a batch cannot pass for a single job
 * or the reverse. 32 lowercase hex digits follow, the same when the same jobs are sent again.
 */
export const BATCH_ID_PREFIX = 'bat_';

/** The most jobs one batch carries: the largest `batch.maxSize` a queue may set. */
export const MAX_BATCH_JOBS = 100;

/** Unknown fields are dropped rather than refused, as in deliveryBodySchema. */
export const batchBodySchema = z.object({
  /** The batch's webhook-id, repeated: dedupe a whole batch on it. */
  id: z.string().startsWith(BATCH_ID_PREFIX),
  queue: z.string().min(1),
  group: z.string().min(1),
  /** The jobs, in group order: each one a single job's delivery body, with its own lease token and callbacks. */
  jobs: z.array(deliveryBodySchema).min(1).max(MAX_BATCH_JOBS),
});

/** One batch as an endpoint receives it; `T` is the type of each job's data. */
export type Batch<T = unknown> = Omit<z.infer<typeof batchBodySchema>, 'jobs'> & { jobs: Delivery<T>[] };

/**
 * A partial answer: jobs 0..completed-1 complete with `results[i]` (missing: null), job
 * `completed` fails its attempt with `error` (retried by the backoff unless `retry` is false),
 * the jobs after it go back to the head of their group untouched. `completed` at or past the
 * batch's length completes them all. Checked first: a body with `completed` is never read as
 * "all done", even when it names no error.
 */
const partialAnswerSchema = z.object({
  completed: z.number().int().min(0),
  results: z.array(z.unknown()).default([]),
  error: z.string().default('the batch answer named no error'),
  retry: z.boolean().optional(),
});

/** Every job completes; `results[i]` is job i's result (missing: null). */
const fullAnswerSchema = z.object({
  results: z.array(z.unknown()),
});

/**
 * The body of a 2xx answer to a batch. An empty body completes every job with a null result, as
 * does a body that is neither shape (it said 2xx, and nothing about any one job).
 */
export const batchAnswerSchema = z.union([partialAnswerSchema, fullAnswerSchema]);

/** A batch answer as the Worker reads it (defaults filled in). */
export type BatchAnswer = z.infer<typeof batchAnswerSchema>;
