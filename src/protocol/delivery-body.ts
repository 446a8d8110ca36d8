// The body of a delivery (docs/delivery.md), as a zod schema: the Worker builds it
// (deliveryBody in delivery.ts) and the receiver (src/receiver) parses it, so both sides share
// one description. Plain module: zod only, nothing that needs Redis or the Worker.
import * as z from 'zod';

/**
 * Every delivery's `webhook-id` starts with this (an outcome callback's with `out_`): the signed
 * id names the kind of message, so that neither kind can be replayed as the other. 32 hex
 * digits follow, the same on every attempt of one job and never another job's (Standard
 * Webhooks: the same when a message is resent), so a receiver dedupes on it.
 */
export const DELIVERY_ID_PREFIX = 'msg_';

/** A lease lasts the job's timeoutMs plus this; mirrors LEASE_GRACE_MS in src/lua/includes/job.lua. */
export const LEASE_GRACE_MS = 5_000;

const epochMs = z.number().int().min(0);
const callbackUrl = z.url({ protocol: /^https?$/ });

/**
 * Unknown fields are dropped rather than refused, so a receiver keeps working when a newer
 * groupq adds some. Naming rules (ids, groups) were enforced at enqueue and are not repeated.
 */
export const deliveryBodySchema = z.object({
  id: z.string().min(1),
  queue: z.string().min(1),
  group: z.string().min(1),
  /** The job's data as it was enqueued (JSON). */
  data: z.unknown(),
  /** 1-based number of this attempt. */
  attempt: z.number().int().min(1),
  maxAttempts: z.number().int().min(1),
  orderMs: epochMs,
  createdAt: epochMs,
  lease: z.object({
    /** Fencing token: every callback about this attempt carries it. */
    token: z.string().min(1),
    /** When the lease ends unless heartbeated (epoch ms, the Worker's clock). */
    expiresAt: epochMs,
  }),
  callbacks: z.object({
    heartbeat: callbackUrl,
    complete: callbackUrl,
    fail: callbackUrl,
    progress: callbackUrl,
  }),
});

/** One delivery as an endpoint receives it; `T` is the type of the job's data. */
export type Delivery<T = unknown> = Omit<z.infer<typeof deliveryBodySchema>, 'data'> & { data: T };
