// The body of an outcome callback (docs/delivery.md#outcome-callbacks), as a zod schema: the Worker
// builds it (outcomeBody in src/core/push/outcome-callback.ts) and the receiver (src/receiver)
// parses it, so both sides share one description. Plain module: zod only, nothing that needs
// Redis or the Worker.
import * as z from 'zod';
import { FINISHED_STATES } from './constants';

/**
 * Every outcome callback's `webhook-id` starts with this (a delivery's with `msg_`), then 32 hex
 * digits: the same on every attempt of one callback, and never another's (a reused job id, the
 * same id in two partitions, the job's next end after a retry by hand), so a producer dedupes on it.
 */
export const OUTCOME_ID_PREFIX = 'out_';

/** Unknown fields are dropped rather than refused, so a receiver keeps working when groupq adds some. */
export const outcomeBodySchema = z.object({
  id: z.string().min(1),
  queue: z.string().min(1),
  group: z.string().min(1),
  /** How the job ended: the `groupq-outcome` header says it too. */
  state: z.enum(FINISHED_STATES),
  /** A completed job's result, as the job shows it. */
  result: z.unknown().optional(),
  resultTruncated: z.boolean().optional(),
  /** A failed job's last error. */
  error: z.string().optional(),
  /** Attempts the job made. */
  attempts: z.number().int().min(0),
  finishedAt: z.number().int().min(0),
});

/** One outcome callback as the producer's callback URL receives it. */
export type OutcomeCallback = z.infer<typeof outcomeBodySchema>;
