// Queue configuration: the zod schema with the defaults of docs/http-api.md#queues, and how
// it is stored.
import * as z from 'zod';
import { MAX_BATCH_JOBS } from './batch-body';
import { sha256Hex } from './ids';
import { type AddressKind, addressKind } from './private-address';
import { isSigningSecret } from './signing-secret';

export const DAY_MS = 86_400_000;
export const YEAR_MS = 366 * DAY_MS;
/** The longest ttlMs a job, and publishTtlMs a queue, may have (docs/flow-control.md#job-ttl). */
export const TTL_MAX_MS = 30 * DAY_MS;
const int = (min: number, max: number) => z.number().int().min(min).max(max);

export const backoffSchema = z
  .object({
    /** `exponential`: delayMs * 2^(attempt-1), capped at maxDelayMs; `fixed`: delayMs. */
    type: z.enum(['exponential', 'fixed']).default('exponential'),
    /** @default 1000 */
    delayMs: int(0, DAY_MS).default(1000),
    /** @default 3600000 */
    maxDelayMs: int(0, DAY_MS).default(3_600_000),
    /** Spreads each delay over [delay/2, delay). @default true */
    jitter: z.boolean().default(true),
  })
  .strict();

export type Backoff = z.infer<typeof backoffSchema>;

/** Starts allowed in any window of `periodMs` (docs/flow-control.md#rate-limits). */
export const rateLimitSchema = z
  .object({ max: int(1, 1_000_000), periodMs: int(1000, DAY_MS) })
  .strict();

/**
 * A group's rate limit: its recent start times live in the group's flow state and are scanned
 * at each offer, so `max` is capped to keep that work (and the state's size) bounded.
 */
export const groupRateLimitSchema = z
  .object({ max: int(1, 1000), periodMs: int(1000, DAY_MS) })
  .strict();

export type RateLimit = z.infer<typeof rateLimitSchema>;

/**
 * One group's limits, set at runtime (PUT .../groups/{group}/limits): they replace the queue's
 * groupConcurrency and groupRateLimit for that group; `rateLimit: null` means none at all.
 */
export const groupLimitsSchema = z
  .object({
    concurrency: int(1, 1000).optional(),
    rateLimit: groupRateLimitSchema.nullable().optional(),
  })
  .strict()
  .refine((limits) => limits.concurrency !== undefined || limits.rateLimit !== undefined, 'give concurrency and/or rateLimit');

export type GroupLimits = z.infer<typeof groupLimitsSchema>;

/** What an endpoint's 429 holds until its Retry-After: the job, its group, or the queue's dispatch. */
export const BACKPRESSURE_MODES = ['job', 'group', 'queue'] as const;

/**
 * What the holder of a publish token's `eventsUrl` sees of its job: its states, attempts and
 * progress; those and its result and error too; or nothing (the enqueue answers no `eventsUrl`).
 */
export const PUBLISH_EVENTS = ['state', 'result', 'none'] as const;

/**
 * The defaults of the flow-control fields, which configs stored before them lack: such a config
 * reads as if it had them (readStoredConfig), as the scripts treat an absent field.
 */
const ADDED_DEFAULTS = {
  groupConcurrency: 1,
  rateLimit: null,
  groupRateLimit: null,
  dedupWindowMs: 300_000,
  backpressure: 'job',
  maxJobs: 1_000_000,
  maxBytes: 1_073_741_824,
  maxDelayMs: YEAR_MS,
  maxThrottleMs: 3_600_000,
  publishMaxDelayMs: 0,
  publishCallbackOrigins: [],
  publishRateLimit: { max: 120, periodMs: 60_000 },
  publishTokenRateLimit: { max: 1200, periodMs: 60_000 },
  publishIpv6Prefix: 56,
  publishMaxJobs: 10_000,
  publishMaxDataBytes: 65_536,
  publishTtlMs: 0,
  publishEvents: 'state',
  partitions: 1,
  batch: null,
} as const;

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

export interface ConfigOptions {
  /** Allow `http://` endpoints on loopback (local development and tests). @default false */
  allowHttpLoopback?: boolean;
}

/** A URL groupq POSTs to (`what`: the field, for messages): https, or http on loopback when allowed. */
export function pushUrlSchema(options: ConfigOptions, what: string) {
  return z.string().superRefine((value, ctx) => {
    let url: URL;
    try {
      url = new URL(value);
    } catch {
      ctx.addIssue({ code: 'custom', message: `${what} must be an absolute URL` });
      return;
    }
    const loopbackHttp = url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname);
    if (url.protocol !== 'https:' && !(loopbackHttp && options.allowHttpLoopback)) {
      ctx.addIssue({
        code: 'custom',
        message: options.allowHttpLoopback
          ? `${what} must be https, or http on localhost/127.0.0.1`
          : `${what} must be https`,
      });
    }
  });
}

/**
 * A job's or a queue's `callbackUrl` (docs/delivery.md#outcome-callbacks). Producers name it, so an IP
 * literal of an internal range is refused (private-address.ts); loopback only in local development.
 */
export function callbackUrlSchema(options: ConfigOptions) {
  return pushUrlSchema(options, 'callbackUrl')
    .max(2048, 'callbackUrl is at most 2048 characters')
    .superRefine((value, ctx) => {
      let kind: AddressKind;
      try {
        kind = addressKind(new URL(value).hostname);
      } catch {
        return; // not a URL: pushUrlSchema said so
      }
      if (kind === 'public' || (kind === 'loopback' && options.allowHttpLoopback)) return;
      ctx.addIssue({ code: 'custom', message: `callbackUrl must not point at a ${kind === 'loopback' ? 'loopback' : 'private, link-local or other internal'} address` });
    });
}

const originSchema = z.string().refine((value) => {
  try {
    return new URL(value).origin === value;
  } catch {
    return false;
  }
}, 'an origin is scheme://host[:port], with no path or trailing slash');

/** The longest a batch's head may wait for more jobs (its most jobs: MAX_BATCH_JOBS). */
export const MAX_BATCH_WAIT_MS = 300_000;

const batchSchema = z
  .object({
    /** Jobs per delivery, at most. */
    maxSize: int(1, MAX_BATCH_JOBS),
    /** How long a group's head waits for the batch to fill. @default 0 */
    maxWaitMs: int(0, MAX_BATCH_WAIT_MS).default(0),
  })
  .strict();

/** The config's fields (what the API shows of a config builds on them: responses.ts). */
export function queueConfigFields(options: ConfigOptions = {}) {
  return z
    .object({
      endpoint: pushUrlSchema(options, 'endpoint'),
      /** Where each job's outcome is POSTed when it ends, unless the job names its own. */
      callbackUrl: callbackUrlSchema(options).optional(),
      /** Jobs in flight across all groups. @default 10 */
      concurrency: int(1, 1000).default(10),
      /** How long one delivery may take; the lease lasts 5 s longer. @default 30000 */
      timeoutMs: int(100, DAY_MS).default(30_000),
      /** @default 3 */
      maxAttempts: int(1, 1000).default(3),
      backoff: backoffSchema.prefault({}),
      /** A job does not start before orderMs + orderingWindowMs. @default 0 */
      orderingWindowMs: int(0, DAY_MS).default(0),
      /** Completed jobs kept; 0 deletes them at once (cheapest). @default 0 */
      keepCompleted: int(0, 1_000_000).default(0),
      /** @default 1000 */
      keepFailed: int(0, 1_000_000).default(1000),
      /** Jobs of one group in flight at once; they start in (orderMs, sequence) order. @default 1 */
      groupConcurrency: int(1, 1000).default(ADDED_DEFAULTS.groupConcurrency),
      /** Deliveries started queue-wide: at most `max` in any window of `periodMs`. @default null */
      rateLimit: rateLimitSchema.nullable().default(ADDED_DEFAULTS.rateLimit),
      /** The same, per group (a group's own limits override it). @default null */
      groupRateLimit: groupRateLimitSchema.nullable().default(ADDED_DEFAULTS.groupRateLimit),
      /** How long a job id stays known after its job ends. @default 300000 */
      dedupWindowMs: int(0, 7 * DAY_MS).default(ADDED_DEFAULTS.dedupWindowMs),
      /** What an endpoint's 429 holds until its Retry-After. @default "job" */
      backpressure: z.enum(BACKPRESSURE_MODES).default(ADDED_DEFAULTS.backpressure),
      /** Bound on each job's `data` as JSON bytes. @default 262144 */
      maxPayloadBytes: int(2, 1_048_576).default(262_144),
      /** Browser origins allowed to enqueue (CORS). @default [] */
      allowedOrigins: z.array(originSchema).max(100).default([]),
      /** Tokens that may only enqueue to this queue; stored as SHA-256 hashes. @default [] */
      publishTokens: z.array(publishTokenSchema).max(100).default([]),
      /** Waiting + delayed jobs the queue may hold; past it enqueue answers 429 QUEUE_FULL. @default 1000000 */
      maxJobs: int(1, 100_000_000).default(ADDED_DEFAULTS.maxJobs),
      /**
       * The data of waiting + delayed jobs, in bytes of JSON, 1 MiB to 1 TiB; past it enqueue answers
       * 429 QUEUE_FULL; null: no bound. @default 1073741824 (1 GiB)
       */
      maxBytes: int(1_048_576, 1_099_511_627_776).nullable().default(ADDED_DEFAULTS.maxBytes),
      /** The latest start any producer may ask for: delayMs, and runAt - now. @default 31622400000 (366 days) */
      maxDelayMs: int(0, YEAR_MS).default(ADDED_DEFAULTS.maxDelayMs),
      /** Total time a job may spend held by its endpoint's 429s; also bounds every hold. @default 3600000 */
      maxThrottleMs: int(1000, 7 * DAY_MS).default(ADDED_DEFAULTS.maxThrottleMs),
      /** The largest delayMs a publish token may send; 0: none at all. @default 0 */
      publishMaxDelayMs: int(0, YEAR_MS).default(ADDED_DEFAULTS.publishMaxDelayMs),
      /** Origins a publish token's callbackUrl may point at. @default [] */
      publishCallbackOrigins: z.array(originSchema).max(100).default([]),
      /** Jobs a publish token's client enqueues per window, on the whole queue (docs/security.md#what-a-client-is); null: no limit. @default {"max":120,"periodMs":60000} */
      publishRateLimit: rateLimitSchema.nullable().default(ADDED_DEFAULTS.publishRateLimit),
      /** Enqueued jobs per publish token, all its clients together; null: no limit. @default {"max":1200,"periodMs":60000} */
      publishTokenRateLimit: rateLimitSchema.nullable().default(ADDED_DEFAULTS.publishTokenRateLimit),
      /** The prefix length that makes one IPv6 client of publishRateLimit (docs/security.md#what-a-client-is). @default 56 */
      publishIpv6Prefix: int(48, 64).default(ADDED_DEFAULTS.publishIpv6Prefix),
      /** Waiting + delayed published jobs (ids `pub:`); past it publish tokens get 429 QUEUE_FULL. @default 10000 */
      publishMaxJobs: int(1, 1_000_000).default(ADDED_DEFAULTS.publishMaxJobs),
      /** Bound on a published job's `data` as JSON bytes; maxPayloadBytes bounds it too. @default 65536 */
      publishMaxDataBytes: int(2, 1_048_576).default(ADDED_DEFAULTS.publishMaxDataBytes),
      /** The ttlMs of every job a publish token enqueues: not started by then, it ends expired; 0: none. @default 0 */
      publishTtlMs: int(0, TTL_MAX_MS).default(ADDED_DEFAULTS.publishTtlMs),
      /**
       * What a publish token's enqueue answers each new job's `eventsUrl` opens (docs/http-api.md#following-a-job-from-a-browser):
       * its states, attempts and progress; with `"result"` its result and error too; `"none"`: no `eventsUrl`. @default "state"
       */
      publishEvents: z.enum(PUBLISH_EVENTS).default(ADDED_DEFAULTS.publishEvents),
      /** This queue's own `whsec_` secret for deliveries and outcome callbacks (write-only). */
      signingSecret: signingSecretSchema.optional(),
      /** The next secret while rotating: both sign until it replaces signingSecret (write-only). */
      signingSecretNext: signingSecretSchema.optional(),
      /**
       * Partitions the queue's groups are spread over (docs/scaling-out.md#partitioned-queues);
       * fixed when the queue is created. @default 1
       */
      partitions: int(1, 256).default(ADDED_DEFAULTS.partitions),
      /**
       * Ordered batches (docs/batches.md): one delivery carries up to `maxSize` consecutive ready
       * jobs of one group, sent when the group has that many or its head has waited `maxWaitMs`;
       * null: one job per delivery. @default null
       */
      batch: batchSchema.nullable().default(ADDED_DEFAULTS.batch),
    })
    .strict();
}

/** A config as PUT sends it: its fields, and limits each partition can have a share of. */
export function queueConfigSchema(options: ConfigOptions = {}) {
  return queueConfigFields(options).superRefine((config, ctx) => {
    // Each partition gets a share of the queue-wide limits: at least 1 each, so each progresses.
    const totals = [
      ['concurrency', config.concurrency],
      ['rateLimit.max', config.rateLimit?.max],
      ['maxJobs', config.maxJobs],
      ['publishMaxJobs', config.publishMaxJobs],
    ] as const;
    for (const [path, total] of totals) {
      if (total === undefined || total >= config.partitions) continue;
      const message = `${path} must be at least partitions (${config.partitions}): each partition gets a share of it`;
      ctx.addIssue({ code: 'custom', path: path.split('.'), message });
    }
    // A batch holds one slot of concurrency per job: a bigger one could never fill.
    if (config.batch && config.batch.maxSize > config.concurrency) {
      const message = `batch.maxSize must be at most concurrency (${config.concurrency}): each job of a batch holds a slot`;
      ctx.addIssue({ code: 'custom', path: ['batch', 'maxSize'], message });
    }
  });
}

/**
 * PATCH's body (a JSON merge patch of the config): any of its fields, or null to put a field back
 * to its default; an object field (`rateLimit`, `backoff`) is patched in turn, so any of its own
 * fields. What is left out is kept, so no field has a default here.
 */
export function queuePatchSchema(options: ConfigOptions = {}) {
  const patchOf = (field: z.ZodType): z.ZodType => {
    let bare = field;
    if (bare instanceof z.ZodDefault || bare instanceof z.ZodPrefault) bare = bare.unwrap() as z.ZodType;
    if (bare instanceof z.ZodNullable || bare instanceof z.ZodOptional) bare = bare.unwrap() as z.ZodType;
    if (bare instanceof z.ZodObject) bare = bare.partial();
    return bare.nullable().optional();
  };
  const fields = Object.entries(queueConfigFields(options).shape).map(([name, field]) => [name, patchOf(field as z.ZodType)]);
  return z.object(Object.fromEntries(fields)).strict();
}

/** What a bearer token may look like (admin and publish tokens alike): anything else is refused unread. */
export const TOKEN_PATTERN = /^[\x21-\x7E]{16,256}$/;
const publishTokenSchema = z.string().regex(TOKEN_PATTERN, 'publish tokens are 16-256 visible ASCII characters');

const signingSecretSchema = z
  .string()
  .max(512)
  .refine(isSigningSecret, 'a signing secret is whsec_ followed by the base64 of at least 16 bytes');

export type QueueConfigInput = z.input<ReturnType<typeof queueConfigSchema>>;
type ParsedConfig = z.output<ReturnType<typeof queueConfigSchema>>;

/**
 * The config as stored in Redis: publish tokens only as hashes. A partition of a partitioned
 * queue stores its index and its shares of the queue-wide limits (src/core/engine/partitions.ts).
 */
export type StoredConfig = Omit<ParsedConfig, 'publishTokens'> & {
  publishTokenHashes: string[];
  partition?: number;
  /** One more than the config it replaced (src/lua/put-queue.lua); absent in one stored before revisions. */
  revision?: number;
};

/**
 * The config as the API shows it: publish tokens are write-only, shown as a count; signing
 * secrets too, shown as whether they are set.
 */
export type QueueConfig = Omit<ParsedConfig, 'publishTokens' | 'signingSecret' | 'signingSecretNext'> & {
  publishTokens: number;
  signingSecret: boolean;
  signingSecretNext: boolean;
};

export async function toStoredConfig(config: ParsedConfig): Promise<StoredConfig> {
  const { publishTokens, ...rest } = config;
  return { ...rest, publishTokenHashes: await Promise.all(publishTokens.map(sha256Hex)) };
}

export function toPublicConfig(stored: StoredConfig): QueueConfig {
  const { publishTokenHashes, signingSecret, signingSecretNext, partition: _partition, revision: _revision, ...rest } = stored;
  return {
    ...rest,
    publishTokens: publishTokenHashes.length,
    signingSecret: signingSecret !== undefined,
    signingSecretNext: signingSecretNext !== undefined,
  };
}

/** A stored config's JSON, with the defaults of the fields added since it was stored. */
export function readStoredConfig(json: string): StoredConfig {
  const stored = JSON.parse(json) as Record<string, unknown>;
  for (const [field, value] of Object.entries(ADDED_DEFAULTS)) if (!(field in stored)) stored[field] = value;
  return stored as StoredConfig;
}
