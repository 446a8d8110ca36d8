// Every Redis key groupq uses is built here, from one table: the catalogue below, which is
// also what docs/internals.md#redis-keys lists (a test keeps the two in sync). Keys of a queue
// share the hash tag `{<queue>}`, so each script touches one slot (Redis Cluster, Upstash).
// Scripts name the keys they take in their headers by the same names (keysFor, scripts.ts).

/** The set of queue names (GET /v1/queues): outside every queue's slot on purpose. */
export const REGISTRY_KEY = 'gq:queues' as const;

/**
 * The due index: each queue with a timer, scored by when it next needs a tick. The cron reads
 * only this, so an idle pass costs one command whatever the number of queues. Outside every
 * queue's slot: it is written beside the queue's scripts, never inside them (src/core/store/due-index.ts).
 */
export const DUE_KEY = 'gq:due' as const;

/**
 * On which database of a pool each queue lives (src/core/store/pool.ts): on the control
 * database, written once per queue by place.lua. Absent with one database.
 */
export const PLACEMENT_KEY = 'gq:placement' as const;

/**
 * The moves under way (src/core/engine/move.ts): one lease per partition being moved, so that
 * one move of it runs at a time (move-lock.lua). On the control database; a move ends its own.
 */
export const MOVES_KEY = 'gq:moves' as const;

/**
 * The control database's copy of every queue's totals (GET /metrics reads it, and only a few
 * queues per scrape: src/core/engine/scrape.ts). Written by totals-cache.lua alone.
 */
export const METRICS_KEY = 'gq:metrics' as const;

export interface KeyDescription {
  key: string;
  type: 'hash' | 'zset' | 'set' | 'string';
  holds: string;
}

/** Every key, as docs/internals.md#redis-keys lists it: `q` stands for the queue's name. */
export const KEY_CATALOGUE = [
  { key: REGISTRY_KEY, type: 'set', holds: 'names of all queues (GET /v1/queues)' },
  { key: DUE_KEY, type: 'zset', holds: "queues with a timer, by when each next needs a tick (the cron reads only this); in a pool, each database's holds its own queues" },
  { key: PLACEMENT_KEY, type: 'hash', holds: 'queue name, or partition tag `<queue>:<p>`, -> the database of the pool it lives on (control database; only with more than one database)' },
  { key: MOVES_KEY, type: 'hash', holds: "partition tag (a queue's name for a queue of one partition) -> the move of it under way: `<owner> <lease end> <database>` (control database; only while a move runs, or one was cut off)" },
  { key: METRICS_KEY, type: 'hash', holds: 'queue name, or partition tag `<queue>:<p>`, -> JSON snapshot of its totals and gauges as a scrape of GET /metrics last read them (control database)' },
  { key: 'gq:{q}:meta', type: 'hash', holds: "config JSON and counters: paused, pausedGroups, seq, active, ready, timer, outcomes ('1' while outcome callbacks may be pending), each group's jobs (`g:<group>`), limits (`l:<group>`), flow state (`f:<group>`) and batch (`b:<group>`: the ids behind its idle head, or how many jobs of its batch are out), flows, prio, hold, rs, dedup (ids in `dedup`) and dedupTrimAt, live (jobs not ended: waiting, delayed, active), bytes and pub (the data of the waiting and delayed jobs, and how many of them have `pub:` ids: maxBytes, publishMaxJobs), expiring ('1' once a job had a ttlMs: the tick reads `expiring`), ev (events wanted until, epoch ms: scripts return the job events they cause until then), per-minute outcomes (`m:<c, f or r>:<minute % 60>` -> epoch minute * 1e8 + count), lifetime totals (`n:<kind>`) and histograms (`h:w`, `h:r`) for GET /metrics; partitions (a partitioned queue's root only: its count), move (a move to another database: `to <d>` under way, `at <d>` done)" },
  { key: 'gq:{q}:jobs', type: 'hash', holds: 'job id -> record: state JSON, newline, data JSON' },
  { key: 'gq:{q}:g:<group>', type: 'zset', holds: "a group's waiting and leased jobs by orderMs (not a solo lease); member = 15-digit sequence + id" },
  { key: 'gq:{q}:ready', type: 'zset', holds: 'head member of each idle group by orderMs' },
  { key: 'gq:{q}:active', type: 'zset', holds: 'leases by deadline; member = id + space + 16-hex-digit lease token + group' },
  { key: 'gq:{q}:held', type: 'zset', holds: 'groups waiting for a retry backoff, by release time; +inf = paused' },
  { key: 'gq:{q}:delayed', type: 'zset', holds: 'delayed jobs by runAt; member = id + space + group' },
  { key: 'gq:{q}:completed', type: 'zset', holds: 'kept completed job ids by finishedAt' },
  { key: 'gq:{q}:failed', type: 'zset', holds: 'kept failed job ids by finishedAt' },
  { key: 'gq:{q}:cancelled', type: 'zset', holds: 'kept cancelled job ids by finishedAt' },
  { key: 'gq:{q}:expired', type: 'zset', holds: 'kept expired job ids (not started by their deadline) by finishedAt' },
  { key: 'gq:{q}:expiring', type: 'zset', holds: "jobs with a ttlMs that have not started: '<id> <group>' by their deadline to start (enqueue + ttlMs)" },
  { key: 'gq:{q}:revoked', type: 'zset', holds: "leases a cancel ended (`<id> <token>`), by when they are forgotten (an hour past the lease's end, at most 1,000)" },
  { key: 'gq:{q}:paused-groups', type: 'set', holds: 'paused group names' },
  { key: 'gq:{q}:repeats', type: 'hash', holds: 'repeat key -> repeat spec JSON' },
  { key: 'gq:{q}:repeat-due', type: 'zset', holds: 'repeat keys by next run' },
  { key: 'gq:{q}:tick-lock', type: 'string', holds: "a request's opportunistic tick holds it for a second" },
  { key: 'gq:{q}:outcomes', type: 'zset', holds: 'pending outcome callbacks: job id by the next attempt (or the end of the one under way)' },
  { key: 'gq:{q}:prioritized', type: 'zset', holds: 'head members of idle groups whose head has a priority other than 0, by -priority; member = 15-digit orderMs + group-zset member' },
  { key: 'gq:{q}:starts', type: 'zset', holds: 'lease members of the deliveries started lately, by start time (the queue rate limit)' },
  { key: 'gq:{q}:dedup', type: 'zset', holds: 'ids of ended jobs (given by their producer) remembered for dedupWindowMs, by expiry * 4 + how the job ended' },
  { key: 'gq:{q}:results', type: 'zset', holds: 'ids of completed jobs a waiter asked for, kept 5 minutes on a queue that keeps no completed jobs (their records stay in `jobs`), by expiry' },
  { key: 'gq:{q}:debounce', type: 'hash', holds: 'debounce key -> id of the waiting or delayed job it collapses into' },
  { key: 'gq:{q}:rate:<client>', type: 'string', holds: "jobs a publish token's client (`ip:<IPv4>`, `ip6:<prefix>`, `local` in local development, else `token:<SHA-256>`) enqueued in the current publishRateLimit window, on the queue's root whatever its partitions; expires with the window" },
  { key: 'gq:{q}:token-rate:<token>', type: 'string', holds: "jobs all clients of one publish token (its SHA-256) enqueued in the current publishTokenRateLimit window, on the queue's root; expires with the window" },
  { key: 'gq:{q}:outcome-records', type: 'hash', holds: 'job id -> its pending outcome callback: URL, body fields, attempts, last error' },
] as const satisfies readonly KeyDescription[];

/** How the catalogue writes a queue's prefix `gq:{<queue>}:`. */
const SAMPLE_PREFIX = 'gq:{q}:';

/** The prefix every key of `queue` starts with: its hash tag puts them all in one slot. */
export function queuePrefix(queue: string): string {
  return `gq:{${queue}}:`;
}

/**
 * A queue's fixed keys, each by its name: what follows its prefix, and what scripts' headers
 * call it (`KEYS[1] meta`). Taken from the catalogue, so each name is written once in
 * TypeScript. `repeat-due` (repeats by their next run) keeps the name it is stored under,
 * although "due" in the code means the due index only.
 */
export type QueueKeyName = FixedName<(typeof KEY_CATALOGUE)[number]['key']>;
type FixedName<Key> = Key extends `${typeof SAMPLE_PREFIX}${infer Name}` ? (Name extends `${string}<${string}` ? never : Name) : never;

export const QUEUE_KEY_NAMES: readonly QueueKeyName[] = KEY_CATALOGUE.flatMap(({ key }) => {
  const name = key.slice(SAMPLE_PREFIX.length);
  return key.startsWith(SAMPLE_PREFIX) && !name.includes('<') ? [name as QueueKeyName] : [];
});

const QUEUE_KEY_SET: ReadonlySet<string> = new Set(QUEUE_KEY_NAMES);

export function isQueueKeyName(name: string): name is QueueKeyName {
  return QUEUE_KEY_SET.has(name);
}

/** Key `name` of `queue`, e.g. `gq:{orders}:paused-groups`. */
export function queueKey(queue: string, name: QueueKeyName): string {
  return queuePrefix(queue) + name;
}

type CamelCase<S extends string> = S extends `${infer Head}-${infer Tail}` ? `${Head}${Capitalize<CamelCase<Tail>>}` : S;

/** Every fixed key of a queue, by its name in camelCase (`pausedGroups`), and its prefix. */
export type QueueKeys = { prefix: string } & { [Name in QueueKeyName as CamelCase<Name>]: string };

export function queueKeys(queue: string): QueueKeys {
  const prefix = queuePrefix(queue);
  const keys: Record<string, string> = { prefix };
  for (const name of QUEUE_KEY_NAMES) keys[name.replace(/-(.)/g, (_, letter: string) => letter.toUpperCase())] = prefix + name;
  return keys as QueueKeys;
}

/**
 * The publish rate limit's count of one client (an address, or a token's hash where none is
 * known): a string that expires with its window (src/lua/includes/publish-rate.lua).
 */
export function rateKey(queue: string, client: string): string {
  return `${queuePrefix(queue)}rate:${client}`;
}

/** The publish token ceiling's count of one token (its SHA-256), all its clients together. */
export function tokenRateKey(queue: string, tokenHash: string): string {
  return `${queuePrefix(queue)}token-rate:${tokenHash}`;
}

/** A group's zset. Scripts never build it: callers pass it in KEYS (Upstash key locking). */
export function groupKey(queue: string, group: string): string {
  return `${queuePrefix(queue)}g:${group}`;
}
