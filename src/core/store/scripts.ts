// Runs the bundled Lua scripts: EVALSHA first, EVAL when Redis answers NOSCRIPT (after a restart
// or SCRIPT FLUSH), so a flushed script cache costs one extra round trip, never an outage. The
// text EVAL sends is built from the bundle's one copy of the script (sourceOf), and a script's
// own error names the file and line under src/lua it comes from (sourceLineOf).
// A script's KEYS are built here from the names its header lists (scripts.generated.ts), so
// their order is written once, in the script; its reply is checked and decoded by its schema in
// replies.ts, so callers get a typed value and write no cast. A reply that reports a lowered
// timer lowers the queue's due-index entry here, so no operation has to.
import type { Redis } from '@upstash/redis';
import { type LuaScript, type ScriptName, luaIncludes } from '../../lua/scripts.generated';
import { QueueError } from '../../protocol/errors';
import { noteDue } from './due-index';
import { luaError, partitionMoving, partitionedOf } from './refusals';
import { METRICS_KEY, MOVES_KEY, PLACEMENT_KEY, REGISTRY_KEY, groupKey, isQueueKeyName, queueKey, rateKey, tokenRateKey } from './keys';
import { asQueueError, redisMessageOf } from './redis';
import { type ArgsOf, type ReplyOf, decodeReply } from './replies';
import { type EventPlace, type ScriptEvent, placeOf, toScriptEvents } from './events';

/** What the engine needs of a Redis client: scripts, the due index's commands, and the HGET a waiting read polls with. */
export type ScriptRunner = Pick<Redis, 'evalsha' | 'eval' | 'zadd' | 'zrange' | 'zrem' | 'hget'>;

export type Reply = readonly unknown[];

export interface ScriptOptions {
  /**
   * Send scripts with Upstash's `allow-key-locking` flag, so Upstash locks only their keys.
   * Off for a Redis that refuses the flag (plain redis-server). @default true
   */
  keyLocking?: boolean;
}

const KEY_LOCKING = 'allow-key-locking';

interface SourceLine {
  text: string;
  /** The file under src/lua the line comes from, and its line there. */
  file: string;
  line: number;
}

/** `text`'s lines with its includes (`@name` lines) expanded in place, each once, where first named. */
function expand(text: string, file: string, seen: Set<string>, into: SourceLine[]): SourceLine[] {
  text.split('\n').forEach((line, index) => {
    const name = line.startsWith('@') ? line.slice(1) : null;
    if (name === null || seen.has(name)) {
      into.push({ text: name === null ? line : '', file, line: index + 1 });
      return;
    }
    const include = luaIncludes[name];
    if (include === undefined) throw new Error(`src/lua/${file}:${index + 1}: no include named ${name}`);
    seen.add(name);
    expand(include, `includes/${name}.lua`, seen, into);
  });
  return into;
}

const linesOf = (script: LuaScript) => expand(script.text, `${script.name}.lua`, new Set(), []);

/**
 * The text Redis runs: the shebang, with Upstash's allow-key-locking flag or without it (a
 * plain Redis refuses it), on the script's empty first line, so both forms have the same line
 * numbers; its SHA-1 is `script.sha1` or `script.plainSha1`.
 */
export function sourceOf(script: LuaScript, keyLocking: boolean): string {
  const flags = keyLocking ? [...script.flags, KEY_LOCKING] : script.flags;
  const shebang = flags.length > 0 ? `#!lua flags=${flags.join(',')}` : '';
  return shebang + linesOf(script).map((line) => line.text).join('\n');
}

/** Where `line` of the script as Redis runs it comes from: `src/lua/<file>:<line>`, or null past its end. */
export function sourceLineOf(script: LuaScript, line: number): string | null {
  const from = linesOf(script)[line - 1];
  return from ? `src/lua/${from.file}:${from.line}` : null;
}

/**
 * `error` as the engine reports it (asQueueError); a script's own error (INTERNAL) gets as its
 * cause Redis' words (never the command, which holds the script and its arguments) led by the
 * script's name and the source file and line of `user_script:LINE`.
 */
function scriptError(script: LuaScript, error: unknown): Error {
  const partitioned = partitionedOf(redisMessageOf(error));
  if (partitioned) return partitioned;
  if (redisMessageOf(error).includes('PARTITION_MOVING')) return partitionMoving();
  const wrapped = asQueueError(error);
  if (wrapped.code !== 'INTERNAL') return wrapped;
  const redisMessage = redisMessageOf(error);
  const line = /user_script:(\d+)/.exec(redisMessage)?.[1];
  const where = line === undefined ? null : sourceLineOf(script, Number(line));
  const cause = new Error(`${script.name}${where ? ` (${where})` : ''}: ${redisMessage}`, { cause: error });
  (wrapped as { cause?: unknown }).cause = cause;
  return wrapped;
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
  let reply: unknown;
  try {
    reply = await redis.evalsha(keyLocking ? script.sha1 : script.plainSha1, keys, argv);
  } catch (error) {
    if (!redisMessageOf(error).startsWith('NOSCRIPT')) throw scriptError(script, error);
    try {
      reply = await redis.eval(sourceOf(script, keyLocking), keys, argv);
    } catch (retryError) {
      throw scriptError(script, retryError);
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
  /** Whose publish token ceiling a script's `token-rate` key counts: the token's SHA-256. */
  token?: string;
  /** The KEYS as they are, for a script that takes any key of a partition (the move's). */
  keys?: string[];
}

/** The KEYS array of `script` for `target`, in the order the script's header lists them. */
export function keysFor(script: LuaScript, { queue, group, groups = [], client = '', token = '', keys: given }: ScriptTarget): string[] {
  if (given) return given;
  const keys: string[] = [];
  for (const name of script.keys) {
    if (name === 'group') {
      if (group !== undefined) keys.push(groupKey(queue!, group));
    } else if (name === 'rate') {
      keys.push(rateKey(queue!, client));
    } else if (name === 'token-rate') {
      keys.push(tokenRateKey(queue!, token));
    } else if (name === REGISTRY_KEY || name === PLACEMENT_KEY || name === METRICS_KEY || name === MOVES_KEY) {
      keys.push(name);
    } else if (queue !== undefined && isQueueKeyName(name)) {
      keys.push(queueKey(queue, name));
    } else {
      throw new Error(`${script.name}: no key named ${name}`);
    }
  }
  for (const each of groups) keys.push(groupKey(queue!, each));
  return keys;
}

/** What callScript needs: the client, and whether to send Upstash's key-locking flag. */
export interface ScriptContext {
  redis: ScriptRunner;
  keyLocking?: boolean;
  /**
   * Where the job events a script reports go (events.ts: only while its queue's meta wants
   * them), with the tag it ran on and their place in that partition's event sequence; the
   * Worker hands them to the queue's event hub, which orders them by it.
   */
  onEvents?: (tag: string, events: ScriptEvent[], place: EventPlace) => void;
}

/**
 * Runs `script` with the KEYS its header names, for `target`, and returns its reply decoded by
 * its schema (replies.ts): a reply of another shape is INTERNAL. A script that lowered its
 * queue's timer says so in its reply (dueAt): the queue's due-index entry is lowered to it
 * before this returns, so whatever the caller does next (push the jobs it leased) is covered.
 */
export async function callScript<N extends ScriptName, const A extends ArgsOf<N>>(
  ctx: ScriptContext,
  script: LuaScript<N>,
  target: ScriptTarget,
  args: A,
): Promise<ReplyOf<N, A>> {
  const reply = await runScript(ctx.redis, script, keysFor(script, target), args, { keyLocking: ctx.keyLocking });
  const { value, dueAt, events } = decodeReply(script.name, args[0], reply);
  if (dueAt !== null && target.queue !== undefined) await noteDue(ctx, target.queue, dueAt);
  // The list's first three elements are its place (events.ts): events follow them.
  if (events && events.length > 3 && ctx.onEvents && target.queue !== undefined) {
    ctx.onEvents(target.queue, toScriptEvents(target.queue, events), placeOf(events));
  }
  return value as ReplyOf<N, A>;
}
