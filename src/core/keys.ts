// Every Redis key groupq uses is built here. Keys of a queue share the hash tag `{<queue>}`, so
// each script touches one slot (Redis Cluster, Upstash). The catalogue below is what the README's
// "Under the hood" lists; a test keeps the two in sync.

/** The set of queue names the scheduler walks: outside every queue's slot on purpose. */
export const REGISTRY_KEY = 'gq:queues';

/** SHA-256 of each publish token -> its queue: tells a token of another queue (403) from an unknown one (401). */
export const PUBLISH_TOKENS_KEY = 'gq:publish-tokens';

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
  pausedGroups: string;
  repeats: string;
  repeatDue: string;
  tickLock: string;
  metrics: string;
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
    pausedGroups: `${prefix}paused-groups`,
    repeats: `${prefix}repeats`,
    repeatDue: `${prefix}repeat-due`,
    tickLock: `${prefix}tick-lock`,
    metrics: `${prefix}metrics`,
  };
}

/** A group's zset. Lua scripts build the same name from the meta key's prefix (job.lua). */
export function groupKey(queue: string, group: string): string {
  return `${queueKeys(queue).prefix}g:${group}`;
}

export interface KeyDescription {
  key: string;
  type: 'hash' | 'zset' | 'set' | 'string';
  holds: string;
}

export const KEY_CATALOGUE: readonly KeyDescription[] = [
  { key: 'gq:queues', type: 'set', holds: 'names of all queues (walked by the cron)' },
  { key: 'gq:publish-tokens', type: 'hash', holds: 'SHA-256 of a publish token -> its queue (to answer 403, not 401)' },
  { key: 'gq:{q}:meta', type: 'hash', holds: 'config JSON, paused flag, enqueue sequence, paused-group count' },
  { key: 'gq:{q}:jobs', type: 'hash', holds: 'job id -> record: state JSON, newline, data JSON' },
  { key: 'gq:{q}:g:<group>', type: 'zset', holds: "a group's waiting and leased jobs by orderMs; member = 15-digit sequence + id" },
  { key: 'gq:{q}:ready', type: 'zset', holds: 'head member of each idle group by orderMs, plus the ~timers marker (earliest timer)' },
  { key: 'gq:{q}:active', type: 'zset', holds: 'leased job ids by lease deadline' },
  { key: 'gq:{q}:held', type: 'zset', holds: 'groups waiting for a retry backoff, by release time; +inf = paused' },
  { key: 'gq:{q}:delayed', type: 'zset', holds: 'delayed job ids by runAt' },
  { key: 'gq:{q}:completed', type: 'zset', holds: 'kept completed job ids by finishedAt' },
  { key: 'gq:{q}:failed', type: 'zset', holds: 'kept failed job ids by finishedAt' },
  { key: 'gq:{q}:paused-groups', type: 'set', holds: 'paused group names' },
  { key: 'gq:{q}:repeats', type: 'hash', holds: 'repeat key -> repeat spec JSON' },
  { key: 'gq:{q}:repeat-due', type: 'zset', holds: 'repeat keys by next run' },
  { key: 'gq:{q}:tick-lock', type: 'string', holds: "a request's opportunistic tick holds it for a second" },
  { key: 'gq:{q}:metrics', type: 'hash', holds: 'completed (c), failed (f), retried (r) per minute, a ring of 60: `<c, f or r>:<minute % 60>` -> epoch minute * 1e8 + count' },
];
