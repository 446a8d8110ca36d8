// One error type for the whole engine, mapped to HTTP statuses through one table.

export const ERROR_STATUS = {
  VALIDATION_FAILED: 400,
  BAD_JSON: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  QUEUE_NOT_FOUND: 404,
  JOB_NOT_FOUND: 404,
  GROUP_NOT_FOUND: 404,
  REPEAT_NOT_FOUND: 404,
  /** No such route. */
  NOT_FOUND: 404,
  INVALID_STATE: 409,
  LEASE_LOST: 409,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  INTERNAL: 500,
  REDIS_UNAVAILABLE: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export class QueueError extends Error {
  override readonly name = 'QueueError';
  readonly status: number;

  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: unknown,
  ) {
    super(message);
    this.status = ERROR_STATUS[code];
  }
}

/** The negative status codes Lua scripts lead their replies with. */
const LUA_ERRORS: Record<number, [ErrorCode, string]> = {
  [-1]: ['QUEUE_NOT_FOUND', 'queue not found'],
  [-2]: ['JOB_NOT_FOUND', 'job not found'],
  [-3]: ['LEASE_LOST', 'the lease is not held: wrong or stale token, or the job was finished'],
  [-4]: ['INVALID_STATE', 'the job is not in a state that allows this'],
  [-5]: ['PAYLOAD_TOO_LARGE', 'job data is larger than the queue allows'],
  [-6]: ['GROUP_NOT_FOUND', 'group not found'],
  [-7]: ['REPEAT_NOT_FOUND', 'repeatable job not found'],
  [-8]: ['INVALID_STATE', 'the queue is being deleted'],
  [-9]: ['VALIDATION_FAILED', 'the queue holds the most repeatable jobs it may'],
  // Internal: the job named by id is in another group than the caller read (job-ops.ts retries).
  [-10]: ['INTERNAL', 'job changed group'],
};

export function luaError(reply: readonly unknown[]): QueueError {
  const status = Number(reply[0]);
  const known = LUA_ERRORS[status];
  if (!known) return new QueueError('INTERNAL', `unexpected script status ${status}`);
  const [code, message] = known;
  if (code === 'PAYLOAD_TOO_LARGE') {
    return new QueueError(code, message, { index: Number(reply[1]) - 1, maxPayloadBytes: Number(reply[2]) });
  }
  if (status === -9) return new QueueError(code, message, { maxRepeats: Number(reply[1]) });
  return new QueueError(code, message);
}
