// One error type for the whole engine, mapped to HTTP statuses through one table.

export const ERROR_STATUS = {
  VALIDATION_FAILED: 400,
  BAD_JSON: 400,
  UNAUTHORIZED: 401,
  /** A publish token sent a job field its queue does not allow it (details.fields names them). */
  FIELD_NOT_ALLOWED: 403,
  QUEUE_NOT_FOUND: 404,
  JOB_NOT_FOUND: 404,
  GROUP_NOT_FOUND: 404,
  REPEAT_NOT_FOUND: 404,
  /** No such route. */
  NOT_FOUND: 404,
  /** A known path, but no route for the method (the Allow header lists those it takes). */
  METHOD_NOT_ALLOWED: 405,
  INVALID_STATE: 409,
  LEASE_LOST: 409,
  /** A lease callback of a job that was cancelled under it. */
  JOB_CANCELLED: 409,
  /** A lease callback of a batch's job while a job ahead of it in its batch has not ended (docs/batches.md). */
  OUT_OF_ORDER: 409,
  /** Another move of the same partition is under way (docs/scaling-out.md#one-move-at-a-time). */
  MOVE_IN_PROGRESS: 409,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  /** The enqueue would pass the queue's maxJobs (waiting + delayed). */
  QUEUE_FULL: 429,
  /** A publish token's client is past the queue's publishRateLimit. */
  RATE_LIMITED: 429,
  INTERNAL: 500,
  REDIS_UNAVAILABLE: 503,
  /** The partition (or queue) is moving to another database of the pool: try again in a moment. */
  PARTITION_MOVING: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export class QueueError extends Error {
  override readonly name = 'QueueError';
  readonly status: number;

  /** How long to wait before trying again: sent as the answer's Retry-After (whole seconds). */
  retryAfterMs?: number;

  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: unknown,
  ) {
    super(message);
    this.status = ERROR_STATUS[code];
  }
}

/** What an error answer says: `{"error":{code,message,details,requestId}}` (errorBodySchema in responses.ts). */
export interface ErrorAnswer {
  /** A code of ERROR_STATUS; a string, since a newer Worker may answer codes this side does not know. */
  code: string;
  message: string;
  details?: unknown;
  /** The request's id (its x-request-id); an older Worker's answers have none. */
  requestId?: string;
}

/**
 * The error of an answer's body, read by the client and the receiver alike; null when the body
 * is not groupq's error shape (a proxy's page, an empty 503, text that is not JSON).
 */
export function parseErrorAnswer(text: string): ErrorAnswer | null {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return null;
  }
  const error = (body as { error?: { code?: unknown; message?: unknown; details?: unknown; requestId?: unknown } } | null)?.error;
  if (!error || typeof error.code !== 'string' || typeof error.message !== 'string') return null;
  const answer: ErrorAnswer = { code: error.code, message: error.message, details: error.details };
  if (typeof error.requestId === 'string') answer.requestId = error.requestId;
  return answer;
}
