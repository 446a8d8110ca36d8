// What an endpoint sends back on its lease callbacks (heartbeat, complete, fail, progress).
import * as z from 'zod';
import { DAY_MS } from './config';
import { MAX_ERROR_CHARS } from './constants';

const lease = z.string().min(1).max(64);

/** `extendMs` beyond 24 h is capped there, not refused (docs/delivery.md#async-mode-jobs-longer-than-one-invocation: "at most 24 h"). */
export const heartbeatInputSchema = z.object({ lease, extendMs: z.number().int().min(1).optional() }).strict();

export const completeInputSchema = z.object({ lease, result: z.json().optional() }).strict();

export const failInputSchema = z
  .object({
    lease,
    /** What went wrong, shown as the job's `error`. */
    error: z.string().min(1).max(MAX_ERROR_CHARS),
    /** false fails the job now, without further attempts. @default true */
    retry: z.boolean().optional(),
    /** Overrides the backoff for the next attempt (capped at one day). */
    retryAfterMs: z.number().int().min(0).max(DAY_MS).optional(),
  })
  .strict();

export const progressInputSchema = z.object({ lease, progress: z.unknown() }).strict();
