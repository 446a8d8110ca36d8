// Every Redis key groupq uses is built here. Keys of a queue share the hash tag `{<queue>}`, so
// each script touches one slot (Redis Cluster, Upstash). The catalogue below is what the README's
// "Under the hood" lists; a test keeps the two in sync.

/** The set of queue names (GET /v1/queues): outside every queue's slot on purpose. */
export const REGISTRY_KEY = 'gq:queues';

/**
 * The due index: each queue with a timer, scored by when it next needs a tick. The cron reads
 * only this, so an idle pass costs one command whatever the number of queues. Outside every
 * queue's slot: it is written beside the queue's scripts, never inside them (src/core/store/due-index.ts).
 */
export const DUE_KEY = 'gq:due';

export interface QueueKeys {
  prefix: string;
  meta: string;
  jobs: string;
  ready: string;
  active: string;
  held: string;
  delayed: string;
  completed: string;
  failed: string;
  cancelled: string;
  /** Leases a cancel ended, remembered for a while so that their callbacks hear JOB_CANCELLED. */
  revoked: string;
  pausedGroups: string;
  repeats: string;
  repeatDue: string;
  tickLock: string;
  outcomes: string;
  outcomeRecords: string;
  /** Idle group heads whose job has a priority other than 0 (README, Flow control). */
  prioritized: string;
  /** Queue-wide start times, for its rate limit. */
  starts: string;
  /** Ended job ids remembered for the dedup window. */
  dedup: string;
  /** Debounce key -> the waiting job it collapses into. */
  debounce: string;
}

export function queueKeys(queue: string): QueueKeys {
  const prefix = `gq:{${queue}}:`;
  return {
    prefix,
    meta: `${prefix}meta`,
    jobs: `${prefix}jobs`,
    ready: `${prefix}ready`,
    active: `${prefix}active`,
    held: `${prefix}held`,
    delayed: `${prefix}delayed`,
    completed: `${prefix}completed`,
    failed: `${prefix}failed`,
    cancelled: `${prefix}cancelled`,
    revoked: `${prefix}revoked`,
    pausedGroups: `${prefix}paused-groups`,
    repeats: `${prefix}repeats`,
    repeatDue: `${prefix}repeat-due`,
    tickLock: `${prefix}tick-lock`,
    outcomes: `${prefix}outcomes`,
    outcomeRecords: `${prefix}outcome-records`,
    prioritized: `${prefix}prioritized`,
    starts: `${prefix}starts`,
    dedup: `${prefix}dedup`,
    debounce: `${prefix}debounce`,
  };
}

/**
 * The publish rate limit's count of one client (an address, or a token's hash where none is
 * known): a string that expires with its window (src/lua/includes/quota.lua).
 */
export function rateKey(queue: string, client: string): string {
  return `${queueKeys(queue).prefix}rate:${client}`;
}

/** A group's zset. Scripts never build it: callers pass it in KEYS (Upstash key locking). */
export function groupKey(queue: string, group: string): string {
  return `${queueKeys(queue).prefix}g:${group}`;
}

export interface KeyDescription {
  key: string;
  type: 'hash' | 'zset' | 'set' | 'string';
  holds: string;
}

export const KEY_CATALOGUE: readonly KeyDescription[] = [
  { key: 'gq:queues', type: 'set', holds: 'names of all queues (GET /v1/queues)' },
  { key: 'gq:due', type: 'zset', holds: 'queues with a timer, by when each next needs a tick (the cron reads only this)' },
  { key: 'gq:{q}:meta', type: 'hash', holds: "config JSON and counters: paused, pausedGroups, seq, active, ready, timer, outcomes ('1' while outcome callbacks may be pending), each group's jobs (`g:<group>`), limits (`l:<group>`) and flow state (`f:<group>`), flows, prio, hold, rs, dedup (ids in `dedup`) and dedupTrimAt, live (jobs not ended: waiting, delayed, active), per-minute outcomes (`m:<c, f or r>:<minute % 60>` -> epoch minute * 1e8 + count)" },
  { key: 'gq:{q}:jobs', type: 'hash', holds: 'job id -> record: state JSON, newline, data JSON' },
  { key: 'gq:{q}:g:<group>', type: 'zset', holds: "a group's waiting and leased jobs by orderMs (not a solo lease); member = 15-digit sequence + id" },
  { key: 'gq:{q}:ready', type: 'zset', holds: 'head member of each idle group by orderMs' },
  { key: 'gq:{q}:active', type: 'zset', holds: 'leases by deadline; member = id + space + 16-hex-digit lease token + group' },
  { key: 'gq:{q}:held', type: 'zset', holds: 'groups waiting for a retry backoff, by release time; +inf = paused' },
  { key: 'gq:{q}:delayed', type: 'zset', holds: 'delayed jobs by runAt; member = id + space + group' },
  { key: 'gq:{q}:completed', type: 'zset', holds: 'kept completed job ids by finishedAt' },
  { key: 'gq:{q}:failed', type: 'zset', holds: 'kept failed job ids by finishedAt' },
  { key: 'gq:{q}:cancelled', type: 'zset', holds: 'kept cancelled job ids by finishedAt' },
  { key: 'gq:{q}:revoked', type: 'zset', holds: "leases a cancel ended (`<id> <token>`), by when they are forgotten (an hour past the lease's end, at most 1,000)" },
  { key: 'gq:{q}:paused-groups', type: 'set', holds: 'paused group names' },
  { key: 'gq:{q}:repeats', type: 'hash', holds: 'repeat key -> repeat spec JSON' },
  { key: 'gq:{q}:repeat-due', type: 'zset', holds: 'repeat keys by next run' },
  { key: 'gq:{q}:tick-lock', type: 'string', holds: "a request's opportunistic tick holds it for a second" },
  { key: 'gq:{q}:outcomes', type: 'zset', holds: 'pending outcome callbacks: job id by the next attempt (or the end of the one under way)' },
  { key: 'gq:{q}:prioritized', type: 'zset', holds: 'head members of idle groups whose head has a priority other than 0, by -priority; member = 15-digit orderMs + group-zset member' },
  { key: 'gq:{q}:starts', type: 'zset', holds: 'lease members of the deliveries started lately, by start time (the queue rate limit)' },
  { key: 'gq:{q}:dedup', type: 'zset', holds: 'ids of ended jobs (given by their producer) remembered for dedupWindowMs, by expiry * 4 + how the job ended' },
  { key: 'gq:{q}:debounce', type: 'hash', holds: 'debounce key -> id of the waiting or delayed job it collapses into' },
  { key: 'gq:{q}:rate:<client>', type: 'string', holds: "jobs a publish token's client (its address, else the token's SHA-256) enqueued in the current publishRateLimit window; expires with the window" },
  { key: 'gq:{q}:outcome-records', type: 'hash', holds: 'job id -> its pending outcome callback: URL, body fields, attempts, last error' },
];
