// What a lease is, as the code that delivers, settles and sends outcomes passes it around: types
// only, below leases.ts and delivery.ts, so that neither needs the other's types.

export interface LeasedJob<T = unknown> {
  id: string;
  queue: string;
  group: string;
  data: T;
  /** `data` exactly as stored (JSON text), to forward without re-encoding. */
  rawData: string;
  /** 1-based number of this attempt. */
  attempt: number;
  maxAttempts: number;
  orderMs: number;
  createdAt: number;
  /** How long this delivery may take. */
  timeoutMs: number;
  lease: { token: string; expiresAt: number };
  /** Enqueue sequence: with the id, the job's member in its group zset. */
  seq: number;
  /** Leased "solo" (straight from its enqueue, never in its group zset: src/lua/includes/group.lua). */
  solo: boolean;
  /** The job has a callback URL of its own (settle then reads its record to record the outcome). */
  callback: boolean;
  /** Its producer named its id: its end is remembered for the dedup window. */
  named: boolean;
}

/**
 * Where the job of a lease sits, as its leaser knows it: its group (whose key settle declares),
 * its sequence, and whether it was leased solo. Without it, settle reads it first.
 */
export interface LeasePlace {
  group: string;
  seq: number;
  /** Unknown (a lease callback): settle then does what either case needs. */
  solo?: boolean;
  /** The job has a callback URL of its own. */
  callback: boolean;
  /** Its producer named its id. */
  named: boolean;
}

/** `status`: the endpoint's HTTP answer when the outcome is one (a delivery's), for the job's history. */
export type Outcome = { place?: LeasePlace; status?: number } & (
  | { kind: 'complete'; id: string; lease: string; result?: unknown; resultTruncated?: boolean }
  | { kind: 'fail'; id: string; lease: string; error: string; retry?: boolean; retryAfterMs?: number }
);
