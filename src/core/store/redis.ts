// The production Redis client: @upstash/redis (its Workers build) over the Upstash REST API, and
// what its failures mean to the engine.
import { Redis } from '@upstash/redis/cloudflare';
import { QueueError } from '../../protocol/errors';

export interface RedisConnection {
  url: string;
  token: string;
}

export function createRedis({ url, token }: RedisConnection): Redis {
  return new Redis({
    url,
    token,
    // Keep replies as Redis sent them: "42" stays a string, JSON stays text.
    automaticDeserialization: false,
    // A retried request may run a script twice when only the answer was lost (a settle would
    // lease jobs nobody receives): the caller, not the client, decides whether to try again.
    retry: false,
  });
}

// A script that failed while running (a bug of ours) is INTERNAL. Anything else (no answer,
// HTTP 5xx, LOADING, BUSY, OOM) means Redis is not usable right now: REDIS_UNAVAILABLE.
const SCRIPT_ERROR = /^(ERR|WRONGTYPE)\b.*script/i;

// @upstash/redis wraps Redis' words ("Command failed: ..." when auto-pipelined, "..., command
// was: <the whole command>" otherwise); judge Redis' own words only, never the command's.
export function redisMessageOf(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return (message.split(', command was:')[0] ?? '').replace(/^Command failed: /, '');
}

/** A Redis failure as the engine reports it: INTERNAL for a script's own error, else unavailable. */
export function asQueueError(error: unknown): QueueError {
  if (error instanceof QueueError) return error; // already judged (a placement outside the pool)
  const redisMessage = redisMessageOf(error);
  const code = SCRIPT_ERROR.test(redisMessage) ? 'INTERNAL' : 'REDIS_UNAVAILABLE';
  // The message holds the whole command (script and arguments): keep it as the cause only.
  const wrapped = new QueueError(code, code === 'INTERNAL' ? 'internal error' : 'redis is unavailable');
  (wrapped as { cause?: unknown }).cause = error;
  return wrapped;
}
