// The one error the client throws: the API's error shape, NETWORK_ERROR when no answer came, or
// BAD_RESPONSE when a 2xx answer was not JSON (something other than groupq answered).
import { type ErrorCode, parseErrorAnswer } from '../protocol/errors';
import { parseRetryAfter } from '../protocol/retry-after';

/**
 * What `GroupqError.code` may be: a code of the API (docs/http-api.md#errors), NETWORK_ERROR (no
 * answer came), ABORTED (the caller's signal), BAD_RESPONSE (a 2xx answer that was not JSON), or,
 * for an answer without groupq's error body, a code read from its status (FORBIDDEN, HTTP_<status>).
 */
export type GroupqErrorCode = ErrorCode | 'NETWORK_ERROR' | 'ABORTED' | 'BAD_RESPONSE' | 'FORBIDDEN' | `HTTP_${number}`;

export class GroupqError extends Error {
  override readonly name = 'GroupqError';
  /**
   * The id of the request that failed, from the answer's x-request-id (or its error body): what
   * finds its lines in the Worker's log (docs/logs.md). Undefined when no answer came.
   */
  readonly requestId?: string;

  constructor(
    readonly code: GroupqErrorCode,
    /** The HTTP status; 0 when no answer came. */
    readonly status: number,
    message: string,
    readonly details?: unknown,
    /** How long the answer's Retry-After asked to wait (ms), when it carried one. */
    readonly retryAfterMs?: number,
    /** `cause`: what failed underneath (a network error), as it was thrown; `requestId`: the answer's. */
    options?: { cause?: unknown; requestId?: string },
  ) {
    super(message, options && 'cause' in options ? { cause: options.cause } : undefined);
    if (options?.requestId !== undefined) this.requestId = options.requestId;
  }

  /** Trying the same call again later may succeed: no answer came, or the answer was a 503. */
  get retryable(): boolean {
    return this.code === 'NETWORK_ERROR' || this.status === 503;
  }
}

/** Codes for answers that carry no groupq error body (a proxy's page, an empty 503). */
const CODE_OF_STATUS: Record<number, GroupqErrorCode> = {
  400: 'VALIDATION_FAILED',
  401: 'UNAUTHORIZED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  405: 'METHOD_NOT_ALLOWED',
  409: 'INVALID_STATE',
  413: 'PAYLOAD_TOO_LARGE',
  415: 'UNSUPPORTED_MEDIA_TYPE',
  429: 'RATE_LIMITED',
  503: 'REDIS_UNAVAILABLE',
};

/** Reads `{"error":{code,message,details}}` from a failed answer, whatever the body holds. */
export async function errorFromResponse(response: Response): Promise<GroupqError> {
  const text = await response.text().catch(() => '');
  const retryAfterMs = parseRetryAfter(response.headers.get('retry-after'), Date.now());
  const error = parseErrorAnswer(text);
  // The header, else the body: a proxy between may drop a header it does not know.
  const requestId = response.headers.get('x-request-id') ?? error?.requestId;
  const options = requestId === undefined ? undefined : { requestId };
  if (error) return new GroupqError(error.code as GroupqErrorCode, response.status, error.message, error.details, retryAfterMs, options);
  // Not groupq's error body: a message built from the status.
  const code = CODE_OF_STATUS[response.status] ?? (response.status >= 500 ? 'INTERNAL' : `HTTP_${response.status}`);
  const body = text.trim().slice(0, 200);
  return new GroupqError(code, response.status, `HTTP ${response.status}${body ? `: ${body}` : ''}`, undefined, retryAfterMs, options);
}
