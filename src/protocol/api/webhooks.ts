// What the Worker sends rather than serves: a delivery to a queue's endpoint and an outcome
// callback to a callback URL (docs/delivery.md), as data. openapi.ts turns it into the OpenAPI
// document's `webhooks`; the headers listed are the ones deliver() and sendOutcome() set
// (src/core/push). Only the build and the tests load it.
import * as z from 'zod';
import { FINISHED_STATES } from '../constants';
import { batchAnswerSchema, batchBodySchema } from '../batch-body';
import { deliveryBodySchema } from '../delivery-body';
import { outcomeBodySchema } from '../outcome-body';
import { TRACEPARENT, TRACESTATE } from '../trace-context';

export interface WebhookHeader {
  schema: z.ZodType;
  description: string;
  /** Sent on every request (else only when it has a value). */
  required: boolean;
}

export interface Webhook {
  /** The key under `webhooks`, and the operationId. */
  id: string;
  summary: string;
  description: string;
  headers: Record<string, WebhookHeader>;
  body: z.ZodType;
  /** What the receiver's answers mean, by status (or range, `2XX`), and the body groupq reads from one. */
  answers: Record<string, { description: string; headers?: Record<string, { description: string; schema: z.ZodType }>; body?: z.ZodType }>;
}

const always = (schema: z.ZodType, description: string): WebhookHeader => ({ schema, description, required: true });

/** Standard Webhooks' three headers, on deliveries and outcome callbacks alike. */
const SIGNED: Record<string, WebhookHeader> = {
  'webhook-id': always(
    z.string(),
    '`msg_` (a delivery), `bat_` (a batch) or `out_` (an outcome callback) and 32 hex digits: the same on every attempt of one message, never the same for two, so dedupe on it.',
  ),
  'webhook-timestamp': always(z.string().regex(/^\d+$/), 'Unix seconds when it was signed: refuse one more than 5 minutes off.'),
  'webhook-signature': always(
    z.string(),
    'Space-separated `v1,<base64 HMAC-SHA256>` over `<webhook-id>.<webhook-timestamp>.<raw body>`: two while a secret rotates.',
  ),
};

/** The invocation that sent it, when it has an id (docs/logs.md). */
const REQUEST_ID: Record<string, WebhookHeader> = {
  'groupq-request-id': { schema: z.string(), description: "The request (or cron run) that sent it: its id in groupq's log.", required: false },
};

/** The producer's W3C trace context, unchanged, when it enqueued the job with one (docs/tracing.md). */
const TRACE: Record<string, WebhookHeader> = {
  [TRACEPARENT]: { schema: z.string(), description: "The producer's traceparent, as it enqueued the job: absent when it sent none.", required: false },
  [TRACESTATE]: { schema: z.string(), description: 'The tracestate that came with it: absent when none.', required: false },
};

export const WEBHOOKS: Webhook[] = [
  {
    id: 'delivery',
    summary: "A job, POSTed to its queue's endpoint",
    description: 'Every attempt of a job is one such request, signed (Standard Webhooks). The answer settles the attempt (docs/delivery.md).',
    headers: {
      ...SIGNED,
      'groupq-queue': always(z.string(), "The job's queue, unsigned: route on the body's `queue`."),
      'groupq-job-id': always(z.string(), "The job id, unsigned, for logs: dedupe on `webhook-id` or the body's `id`."),
      'groupq-group': always(z.string(), "The job's group, percent-encoded as encodeURIComponent does."),
      'groupq-attempt': always(z.string().regex(/^\d+$/), '1-based number of this attempt.'),
      'groupq-lease-expires-at': always(z.string().regex(/^\d+$/), 'When the lease ends unless heartbeated (epoch ms).'),
      ...REQUEST_ID,
      ...TRACE,
    },
    body: deliveryBodySchema,
    answers: {
      '2XX': { description: 'Completed (202 aside): the body is the job\'s result.' },
      '202': { description: 'Taken asynchronously: the lease stays with the endpoint, which heartbeats and then calls complete or fail.' },
      '429': { description: 'Not an attempt: the job, its group or its queue waits (the queue\'s backpressure).' },
      default: {
        description: 'A failed attempt, retried with the backoff.',
        headers: {
          'groupq-retry': { description: '`false`: fail the job now, without further attempts.', schema: z.enum(['false']) },
          'Retry-After': { description: 'Seconds, or an HTTP date: the next attempt waits that long (at most 1 day).', schema: z.string() },
        },
      },
    },
  },
  {
    id: 'batch',
    summary: "A batch of one group's jobs, POSTed to its queue's endpoint",
    description:
      "On a queue with `batch` set, every delivery carries up to `batch.maxSize` consecutive ready jobs of one group, in group order, each shaped as a single job's delivery body (docs/batches.md). Its `webhook-id` is the same when the same jobs are sent again.",
    headers: {
      ...SIGNED,
      'groupq-queue': always(z.string(), "The batch's queue, unsigned: route on the body's `queue`."),
      'groupq-group': always(z.string(), "The batch's group, percent-encoded as encodeURIComponent does."),
      'groupq-batch-size': always(z.string().regex(/^\d+$/), 'How many jobs the batch carries.'),
      'groupq-lease-expires-at': always(z.string().regex(/^\d+$/), "When the batch's lease ends unless heartbeated (epoch ms): one for all its jobs."),
      ...REQUEST_ID,
      ...TRACE,
    },
    body: batchBodySchema,
    answers: {
      '2XX': {
        description:
          'No body, or `{"results": [...]}`: every job completed, `results[i]` job i\'s result. `{"completed": k, "results": [...], "error": "...", "retry": false?}` with k below the batch\'s length: jobs 0..k-1 completed, job k\'s attempt failed with `error` (retried unless `retry` is false), the jobs after it back at the head of their group, untouched.',
        body: batchAnswerSchema,
      },
      '202': { description: 'Taken asynchronously under one lease: a heartbeat on any job renews all; the jobs are ended in order by their own complete and fail callbacks (one out of order: 409 OUT_OF_ORDER).' },
      '429': { description: 'Not an attempt: job 0 waits as a single job would (the queue\'s backpressure); the rest are untouched.' },
      default: { description: 'Job 0\'s attempt failed (as `completed: 0`), retried with the backoff; the rest are untouched.' },
    },
  },
  {
    id: 'outcomeCallback',
    summary: 'How a job ended, POSTed to its callback URL',
    description: 'Sent once a job with a callback URL completes, fails for good, is cancelled or expires; until answered 2xx within 10 s, at most 6 attempts over 72 minutes (docs/delivery.md#outcome-callbacks).',
    headers: {
      ...SIGNED,
      'groupq-queue': always(z.string(), "The job's queue, unsigned: route on the body's `queue`."),
      'groupq-outcome': always(z.enum(FINISHED_STATES), 'How the job ended, as the body\'s `state`.'),
      ...REQUEST_ID,
      ...TRACE,
    },
    body: outcomeBodySchema,
    answers: {
      '2XX': { description: 'Taken: groupq sends it no more.' },
      default: { description: 'A failed attempt: sent again after 5 s, 30 s, 2 min, 10 min and 1 h.' },
    },
  },
];
