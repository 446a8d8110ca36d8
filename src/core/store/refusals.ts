// A script's refusals: the negative statuses Lua scripts lead their replies with, turned into the
// QueueError the API answers with.
import { type ErrorCode, QueueError } from '../../protocol/errors';

/**
 * The statuses a Lua script leads its reply with when it refuses, by the names the scripts use
 * (src/lua/includes/errors.lua; a test keeps the two equal).
 */
export const LuaStatus = {
  QUEUE_NOT_FOUND: -1,
  JOB_NOT_FOUND: -2,
  LEASE_LOST: -3,
  /** {status, the job's state} */
  INVALID_STATE: -4,
  /** {status, item (1-based), limit in bytes, its name: maxPayloadBytes or publishMaxDataBytes} */
  PAYLOAD_TOO_LARGE: -5,
  GROUP_NOT_FOUND: -6,
  REPEAT_NOT_FOUND: -7,
  /** A deletion of the queue is under way (putQueue finishes it, then creates). */
  QUEUE_DELETING: -8,
  /** {status, the most repeatable jobs a queue may hold} */
  TOO_MANY_REPEATS: -9,
  /** {status, group}: the job named by id is in another group than the caller read (job-ops.ts retries). */
  JOB_CHANGED_GROUP: -10,
  JOB_CANCELLED: -11,
  /** {status, the limit, its name: maxJobs, maxBytes or publishMaxJobs} */
  QUEUE_FULL: -12,
  /** {status, ms until the window ends, max, periodMs, the limit's name: publishRateLimit or publishTokenRateLimit} */
  RATE_LIMITED: -13,
  /** {status, item (1-based), maxDelayMs}: producer.ts names the field (delayMs, runAt, debounce) */
  DELAY_TOO_LONG: -14,
  /** {status, the queue's partitions}: a config asked for another count (they never change) */
  PARTITIONS_FIXED: -15,
  /** The config changed since its writer read it (put-queue.lua): the writer reads it again. */
  CONFIG_CHANGED: -16,
  /** A lease callback of a batch's job while a job ahead of it in its batch is still leased (settle.lua). */
  OUT_OF_ORDER: -17,
} as const;

export type LuaStatusName = keyof typeof LuaStatus;

/** What each refusal is to the API. */
const LUA_ERRORS: Record<LuaStatusName, [ErrorCode, string]> = {
  QUEUE_NOT_FOUND: ['QUEUE_NOT_FOUND', 'queue not found'],
  JOB_NOT_FOUND: ['JOB_NOT_FOUND', 'job not found'],
  LEASE_LOST: ['LEASE_LOST', 'the lease is not held: wrong or stale token, or the job was finished'],
  INVALID_STATE: ['INVALID_STATE', 'the job is not in a state that allows this'],
  PAYLOAD_TOO_LARGE: ['PAYLOAD_TOO_LARGE', 'job data is larger than the queue allows'],
  GROUP_NOT_FOUND: ['GROUP_NOT_FOUND', 'group not found'],
  REPEAT_NOT_FOUND: ['REPEAT_NOT_FOUND', 'repeatable job not found'],
  QUEUE_DELETING: ['INVALID_STATE', 'the queue is being deleted'],
  TOO_MANY_REPEATS: ['VALIDATION_FAILED', 'the queue holds the most repeatable jobs it may'],
  JOB_CHANGED_GROUP: ['INTERNAL', 'job changed group'],
  JOB_CANCELLED: ['JOB_CANCELLED', 'the job was cancelled: this lease is no longer held'],
  QUEUE_FULL: ['QUEUE_FULL', 'the queue holds as many jobs as its limit allows: try again later'],
  RATE_LIMITED: ['RATE_LIMITED', "too many jobs from this client or token: past the queue's publish rate limit"],
  DELAY_TOO_LONG: ['VALIDATION_FAILED', "the job would start later than the queue's maxDelayMs allows"],
  PARTITIONS_FIXED: ['VALIDATION_FAILED', "partitions: a queue's partitions are fixed when it is created"],
  CONFIG_CHANGED: ['INVALID_STATE', "the queue's config kept changing while this change was written: try again"],
  OUT_OF_ORDER: ['OUT_OF_ORDER', 'a job ahead of this one in its batch has not ended: end the jobs of a batch in order'],
};

const NAME_OF = new Map(Object.entries(LuaStatus).map(([name, status]) => [status as number, name as LuaStatusName]));

/** A QueueError that a script's status raised; `luaStatus` tells which. */
export class ScriptRefusal extends QueueError {
  constructor(
    readonly luaStatus: LuaStatusName,
    details?: unknown,
    message = LUA_ERRORS[luaStatus][1],
  ) {
    super(LUA_ERRORS[luaStatus][0], message, details);
  }
}

/**
 * What a full queue's Retry-After asks: no one knows when jobs will end, and a producer retrying
 * sooner only spends requests.
 */
const QUEUE_FULL_RETRY_MS = 30_000;

function withRetryAfter(error: QueueError, ms: number): QueueError {
  error.retryAfterMs = ms;
  return error;
}

/** The error of a script's reply `{status, ...}` whose status is negative. */
export function luaError(reply: readonly unknown[]): QueueError {
  const status = Number(reply[0]);
  const name = NAME_OF.get(status);
  if (name === undefined) return new QueueError('INTERNAL', `unexpected script status ${status}`);
  if (name === 'PAYLOAD_TOO_LARGE') {
    // A publish token's bound (publishMaxDataBytes) is named as such; the admin's keeps its old shape.
    const limit = reply[3] === 'publishMaxDataBytes' ? 'publishMaxDataBytes' : 'maxPayloadBytes';
    return new ScriptRefusal(name, { index: Number(reply[1]) - 1, [limit]: Number(reply[2]) }, `job data is larger than the queue's ${limit} (${Number(reply[2])} bytes)`);
  }
  if (name === 'TOO_MANY_REPEATS') return new ScriptRefusal(name, { maxRepeats: Number(reply[1]) });
  if (name === 'QUEUE_FULL') {
    // details.limit names the limit reached, and its value rides under its own name.
    const limit = typeof reply[2] === 'string' ? reply[2] : 'maxJobs';
    const what = limit === 'maxBytes' ? 'bytes of waiting and delayed data' : limit === 'publishMaxJobs' ? 'published jobs' : 'waiting and delayed jobs';
    const message = `the queue holds as many ${what} as its ${limit} (${Number(reply[1])}) allows: try again later`;
    return withRetryAfter(new ScriptRefusal(name, { limit, [limit]: Number(reply[1]) }, message), QUEUE_FULL_RETRY_MS);
  }
  if (name === 'RATE_LIMITED') {
    const limit = typeof reply[4] === 'string' ? reply[4] : 'publishRateLimit';
    const message = limit === 'publishTokenRateLimit'
      ? "too many jobs from this publish token: past the queue's publishTokenRateLimit"
      : "too many jobs from this client: past the queue's publishRateLimit";
    return withRetryAfter(new ScriptRefusal(name, { limit, max: Number(reply[2]), periodMs: Number(reply[3]) }, message), Math.max(1000, Number(reply[1])));
  }
  if (name === 'PARTITIONS_FIXED') {
    const message = `partitions: fixed when the queue was created (it has ${Number(reply[1])}); to change it, create another queue`;
    return new ScriptRefusal(name, [{ path: 'partitions', message }], message);
  }
  if (name === 'DELAY_TOO_LONG') return new ScriptRefusal(name, { index: Number(reply[1]) - 1, maxDelayMs: Number(reply[2]) });
  if (name === 'INVALID_STATE' && typeof reply[1] === 'string') {
    return new ScriptRefusal(name, { state: reply[1] }, `the job is ${reply[1]}, which does not allow this`);
  }
  return new ScriptRefusal(name);
}

/** A script's DELAY_TOO_LONG as the 400 of the field (`path`) that asked for the start. */
export function startTooLate(path: string, refusal: QueueError): QueueError {
  const { maxDelayMs } = refusal.details as { maxDelayMs: number };
  const message = `the job would start more than the queue's maxDelayMs (${maxDelayMs}) from now`;
  return new QueueError('VALIDATION_FAILED', `${path}: ${message}`, [{ path, message }]);
}

/** Whether `error` is the refusal `name` of a script. */
export function isRefusal(error: unknown, name: LuaStatusName): boolean {
  return error instanceof ScriptRefusal && error.luaStatus === name;
}

/**
 * A script ran where a queue's partitions say it must not: on a partitioned queue's root, or on
 * a partition that does not hold the group (errors.lua refuseRoot, partition.lua). The engine
 * routes the call again by `partitions` (src/core/engine/partitions.ts); it never reaches a user.
 */
export class Partitioned extends Error {
  constructor(readonly partitions: number) {
    super(`groupq: the queue has ${partitions} partitions`);
  }
}

/** The Partitioned that a script's error message carries, or null. */
export function partitionedOf(message: string): Partitioned | null {
  const count = /PARTITIONED (\d+)/.exec(message)?.[1];
  return count === undefined ? null : new Partitioned(Number(count));
}

/** How long a caller of a partition being moved waits before trying again. */
const MOVING_RETRY_MS = 1000;

/** A partition's move to another database is under way (errors.lua refuseMoving): 503, try again. */
export function partitionMoving(): QueueError {
  return withRetryAfter(new QueueError('PARTITION_MOVING', 'the partition is moving to another database of the pool: try again in a moment'), MOVING_RETRY_MS);
}
