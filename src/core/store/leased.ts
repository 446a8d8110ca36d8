// What a lease is, as the code that delivers, settles and sends outcome callbacks passes it
// around, how a lease ends (a settlement), and the decoders of the outcome callback tuples
// scripts hand over: below both src/core/engine and src/core/push, so that neither needs the
// other. "Outcome" means the callback to the producer only; how an attempt ended is a settlement.
import type { StoredConfig } from '../../protocol/config';
import type { OutcomeCallback } from '../../protocol/outcome-body';
import type { QueueSecrets } from '../../protocol/signing-secret';
import type { TraceContext } from '../../protocol/trace-context';
import { queueOfTag } from './partitions';

export interface LeasedJob<T = unknown> extends TraceContext {
  id: string;
  queue: string;
  /** The hash tag its lease lives under: the queue's name, or its partition's (partitions.ts). */
  tag: string;
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
  /** The `webhook-id` of its deliveries: the same on every attempt, never another job's (meta.lua messageIdFor). */
  webhookId: string;
  /** Enqueue sequence: with the id, the job's member in its group zset. */
  seq: number;
  /** Leased "solo" (straight from its enqueue, never in its group zset: src/lua/includes/group.lua). */
  solo: boolean;
  /** Settle reads its record: it has a callback URL of its own (to record the outcome), or a waiter asked for its end (`w`). */
  recordNeeded: boolean;
  /** Its producer named its id: its end is remembered for the dedup window. */
  named: boolean;
  /**
   * Its place in its delivery: 0 starts one; on a batch queue 1, 2, ... are the jobs behind the
   * first, in group order, leased with it (src/lua/includes/batch.lua).
   */
  batchIndex: number;
}

/** Leased jobs (as a script lists them) cut into deliveries: each a first job and its batch. */
export function deliveriesOf<J extends Pick<LeasedJob, 'batchIndex'>>(jobs: readonly J[]): J[][] {
  const out: J[][] = [];
  for (const job of jobs) {
    if (job.batchIndex === 0 || out.length === 0) out.push([job]);
    else out[out.length - 1]!.push(job);
  }
  return out;
}

/** How many deliveries leased jobs make (what a reservation counts against its push slots). */
export function deliveryCount(jobs: readonly Pick<LeasedJob, 'batchIndex'>[]): number {
  return jobs.reduce((n, job) => n + (job.batchIndex === 0 ? 1 : 0), 0);
}

/** A lease outlives its delivery's timeout by this much (src/lua/includes/job.lua LEASE_GRACE_MS). */
export const LEASE_GRACE_MS = 5_000;

/**
 * A leased job's spot in its group, as its leaser knows it: its group (whose key settle
 * declares), its sequence, and whether it was leased solo. Without it, settle reads it first.
 */
export interface LeaseSpot {
  group: string;
  seq: number;
  /** Unknown (a lease callback): settle then does what either case needs. */
  solo?: boolean;
  /** Settle reads its record (see LeasedJob). */
  recordNeeded: boolean;
  /** Its producer named its id. */
  named: boolean;
  /** When the lease began (epoch ms), for the run histogram; unknown: settle reads the lease's deadline. */
  startedAt?: number;
  /**
   * The attempt under way (1-based), for a completion's `completed` event while events are wanted
   * (src/lua/includes/events.lua); unknown then: settle reads the job's record for it.
   */
  attempt?: number;
}

/**
 * How a lease ends, as settle.lua takes it: the job completed, or its attempt failed.
 * `status`: the endpoint's HTTP answer when a delivery ended it, for the job's history.
 */
export type Settlement = {
  spot?: LeaseSpot;
  status?: number;
  /** The batch the attempt was part of (docs/batches.md), for the job's attempt history. */
  batch?: { id: string; index: number; size: number };
} & (
  | { kind: 'complete'; id: string; lease: string; result?: unknown; resultTruncated?: boolean }
  | { kind: 'fail'; id: string; lease: string; error: string; retry?: boolean; retryAfterMs?: number }
  /** A batch's job its endpoint did not get to: back in its group, untouched (no attempt). */
  | { kind: 'release'; id: string; lease: string }
);

/**
 * Where a queue's jobs are pushed, what signs them, and whether they go in batches: the parts of
 * its config a push reads.
 */
export type PushTarget = Pick<StoredConfig, 'endpoint' | 'signingSecret' | 'signingSecretNext'> & { batch?: StoredConfig['batch'] };

export function pushTarget({ endpoint, signingSecret, signingSecretNext, batch }: PushTarget): PushTarget {
  return { endpoint, signingSecret, signingSecretNext, batch };
}

/** An outcome record as outcome.lua writes it (short field names: they are stored). */
export interface OutcomeRecord {
  u: string;
  g: string;
  s: OutcomeCallback['state'];
  r?: string;
  rt?: boolean;
  e?: string;
  a: number;
  f: number;
  n: number;
  /** The end of this attempt's lease. */
  t: number;
  /** The job's W3C trace context, when its producer sent one (docs/tracing.md). */
  tp?: string;
  ts?: string;
  /** Its webhook-id's hex digits (meta.lua messageIdFor); none in a record written before they were. */
  w?: string;
}

/** One attempt at an outcome callback, leased to whoever holds this. */
export interface OutcomeToSend {
  queue: string;
  /** Where its lease lives: the queue's name, or its partition's tag. */
  tag: string;
  id: string;
  record: OutcomeRecord;
  /** The queue's own signing secrets (none: the deployment's). */
  secrets: QueueSecrets;
}

/** The {id, record JSON, signingSecret, signingSecretNext} tuples a script hands over ('' for none). */
export function toOutcomesToSend(tag: string, tuples: readonly (readonly [string, string, string, string])[] = []): OutcomeToSend[] {
  const queue = queueOfTag(tag);
  return tuples.map(([id, json, secret, next]) => ({
    queue,
    tag,
    id,
    record: JSON.parse(json) as OutcomeRecord,
    secrets: { signingSecret: secret || undefined, signingSecretNext: next || undefined },
  }));
}
