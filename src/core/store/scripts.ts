// Runs the bundled Lua scripts: EVALSHA first, EVAL when Redis answers NOSCRIPT (after a restart
// or SCRIPT FLUSH), so a flushed script cache costs one extra round trip, never an outage.
// A script's KEYS are built here from the names its header lists (scripts.generated.ts), so
// their order is written once, in the script; its reply is checked and decoded by its schema in
// replies.ts, so callers get a typed value and write no cast.
import type { Redis } from '@upstash/redis';
import type { LuaScript, ScriptName } from '../../lua/scripts.generated';
import { QueueError } from '../../protocol/errors';
import { luaError } from './refusals';
import { type QueueKeys, REGISTRY_KEY, groupKey, queueKeys, rateKey } from './keys';
import { type ArgsOf, type ReplyOf, decodeReply } from './replies';

/** What the engine needs of a Redis client: scripts, the due index's commands, and the HGET a waiting read polls with. */
export type ScriptRunner = Pick<Redis, 'evalsha' | 'eval' | 'zadd' | 'zrange' | 'zrem' | 'hget'>;

export type Reply = readonly unknown[];

// A script that failed while running (a bug of ours) is INTERNAL. Anything else (no answer,
// HTTP 5xx, LOADING, BUSY, OOM) means Redis is not usable right now: REDIS_UNAVAILABLE.
const SCRIPT_ERROR = /^(ERR|WRONGTYPE)\b.*script/i;

// @upstash/redis wraps Redis' words ("Command failed: ..." when auto-pipelined, "..., command
// was: <the whole command>" otherwise); judge Redis' own words only, never the command's.
function redisMessageOf(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return (message.split(', command was:')[0] ?? '').replace(/^Command failed: /, '');
}

/** A Redis failure as the engine reports it: INTERNAL for a script's own error, else unavailable. */
export function asQueueError(error: unknown): QueueError {
  const redisMessage = redisMessageOf(error);
  const code = SCRIPT_ERROR.test(redisMessage) ? 'INTERNAL' : 'REDIS_UNAVAILABLE';
  // The message holds the whole command (script and arguments): keep it as the cause only.
  const wrapped = new QueueError(code, code === 'INTERNAL' ? 'internal error' : 'redis is unavailable');
  (wrapped as { cause?: unknown }).cause = error;
  return wrapped;
}

export interface ScriptOptions {
  /**
   * Send scripts with Upstash's `allow-key-locking` flag, so Upstash locks only their keys.
   * Off for a Redis that refuses the flag (plain redis-server). @default true
   */
  keyLocking?: boolean;
}

/** Runs a script and returns its raw reply; a negative status becomes the matching QueueError. */
export async function runScript(
  redis: ScriptRunner,
  script: LuaScript,
  keys: string[],
  args: readonly (string | number)[],
  { keyLocking = true }: ScriptOptions = {},
): Promise<Reply> {
  const argv = args.map(String);
  const [sha1, source] = keyLocking ? [script.sha1, script.source] : [script.plainSha1, script.plainSource];
  let reply: unknown;
  try {
    reply = await redis.evalsha(sha1, keys, argv);
  } catch (error) {
    if (!redisMessageOf(error).startsWith('NOSCRIPT')) throw asQueueError(error);
    try {
      reply = await redis.eval(source, keys, argv);
    } catch (retryError) {
      throw asQueueError(retryError);
    }
  }
  if (!Array.isArray(reply)) throw new QueueError('INTERNAL', `${script.name}: unexpected reply`);
  if (Number(reply[0]) < 0) throw luaError(reply);
  return reply;
}

/** Where a script's named keys point: a queue, and the group(s) its header asks for. */
export interface ScriptTarget {
  queue?: string;
  /** The group of a script whose fixed keys include `group` (omitted: that last key is left out). */
  group?: string;
  /** One group per item, for a script with a per-item `group` key. */
  groups?: readonly string[];
  /** Whose publish rate limit a script's `rate` key counts (enqueue; unused for the admin). */
  client?: string;
}

const QUEUE_KEY_FIELDS: Record<string, keyof QueueKeys> = {
  meta: 'meta',
  jobs: 'jobs',
  ready: 'ready',
  active: 'active',
  held: 'held',
  delayed: 'delayed',
  completed: 'completed',
  failed: 'failed',
  cancelled: 'cancelled',
  revoked: 'revoked',
  'paused-groups': 'pausedGroups',
  repeats: 'repeats',
  'repeat-due': 'repeatDue',
  'tick-lock': 'tickLock',
  outcomes: 'outcomes',
  'outcome-records': 'outcomeRecords',
  prioritized: 'prioritized',
  starts: 'starts',
  dedup: 'dedup',
  debounce: 'debounce',
};

const GLOBAL_KEYS: Record<string, string> = { 'gq:queues': REGISTRY_KEY };

/** The KEYS array of `script` for `target`, in the order the script's header lists them. */
export function keysFor(script: LuaScript, { queue, group, groups = [], client = '' }: ScriptTarget): string[] {
  const k = queue === undefined ? null : queueKeys(queue);
  const keys: string[] = [];
  for (const name of script.keys) {
    if (name === 'group') {
      if (group !== undefined) keys.push(groupKey(queue!, group));
      continue;
    }
    if (name === 'rate') {
      keys.push(rateKey(queue!, client));
      continue;
    }
    const global = GLOBAL_KEYS[name];
    const field = QUEUE_KEY_FIELDS[name];
    if (global) keys.push(global);
    else if (k && field) keys.push(k[field]);
    else throw new Error(`${script.name}: no key named ${name}`);
  }
  for (const each of groups) keys.push(groupKey(queue!, each));
  return keys;
}

/** What callScript needs: the client, and whether to send Upstash's key-locking flag. */
export interface ScriptContext {
  redis: ScriptRunner;
  keyLocking?: boolean;
}

/**
 * Runs `script` with the KEYS its header names, for `target`, and returns its reply decoded by
 * its schema (replies.ts): a reply of another shape is INTERNAL.
 */
export async function callScript<N extends ScriptName, const A extends ArgsOf<N>>(
  ctx: ScriptContext,
  script: LuaScript<N>,
  target: ScriptTarget,
  args: A,
): Promise<ReplyOf<N, A>> {
  const reply = await runScript(ctx.redis, script, keysFor(script, target), args, { keyLocking: ctx.keyLocking });
  return decodeReply(script.name, args[0], reply) as ReplyOf<N, A>;
}
