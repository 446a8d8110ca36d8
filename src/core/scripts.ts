// Runs the bundled Lua scripts: EVALSHA first, EVAL when Redis answers NOSCRIPT (after a restart
// or SCRIPT FLUSH), so a flushed script cache costs one extra round trip, never an outage.
import type { Redis } from '@upstash/redis';
import type { LuaScript } from '../lua/scripts.generated';
import { QueueError, luaError } from './errors';

/** What the engine needs of a Redis client. */
export type ScriptRunner = Pick<Redis, 'evalsha' | 'eval'>;

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

function asQueueError(error: unknown): QueueError {
  const redisMessage = redisMessageOf(error);
  const code = SCRIPT_ERROR.test(redisMessage) ? 'INTERNAL' : 'REDIS_UNAVAILABLE';
  // The message holds the whole command (script and arguments): keep it as the cause only.
  const wrapped = new QueueError(code, code === 'INTERNAL' ? 'internal error' : 'redis is unavailable');
  (wrapped as { cause?: unknown }).cause = error;
  return wrapped;
}

/** Runs a script and returns its reply; a negative status becomes the matching QueueError. */
export async function runScript(
  redis: ScriptRunner,
  script: LuaScript,
  keys: string[],
  args: (string | number)[],
): Promise<Reply> {
  const argv = args.map(String);
  let reply: unknown;
  try {
    reply = await redis.evalsha(script.sha1, keys, argv);
  } catch (error) {
    if (!redisMessageOf(error).startsWith('NOSCRIPT')) throw asQueueError(error);
    try {
      reply = await redis.eval(script.source, keys, argv);
    } catch (retryError) {
      throw asQueueError(retryError);
    }
  }
  if (!Array.isArray(reply)) throw new QueueError('INTERNAL', `${script.name}: unexpected reply`);
  if (Number(reply[0]) < 0) throw luaError(reply);
  return reply;
}
