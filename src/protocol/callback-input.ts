// What an endpoint sends back on its lease callbacks (heartbeat, complete, fail, progress).
import { z } from 'zod';
import { DAY_MS } from './config';

const lease = z.string().min(1).max(64);

/** `extendMs` beyond 24 h is capped there, not refused (README, "Async mode": "at most 24 h"). */
export const heartbeatInputSchema = z.object({ lease, extendMs: z.number().int().min(1).optional() }).strict();

export const completeInputSchema = z.object({ lease, result: z.json().optional() }).strict();

export const failInputSchema = z
  .object({
    lease,
    /** What went wrong, shown as the job's `error`. */
    error: z.string().min(1).max(2048),
    /** false fails the job now, without further attempts. @default true */
    retry: z.boolean().optional(),
    /** Overrides the backoff for the next attempt (capped at one day). */
    retryAfterMs: z.number().int().min(0).max(DAY_MS).optional(),
  })
  .strict();

export const progressInputSchema = z.object({ lease, progress: z.unknown() }).strict();

/** A result larger than this (as JSON) is refused; deliveries keep the first 64 KiB instead. */
export const MAX_RESULT_BYTES = 65_536;
