// The one error shape, {"error":{code,message,details,requestId}}, for every failure: domain
// errors map to their status through ERROR_STATUS; anything else is INTERNAL and only the log
// sees it (an UpstashError's message holds the script and its arguments). The requestId is the
// answer's x-request-id: what to quote when asking what happened (docs/logs.md).
import type { Context } from 'hono';
import { fallbackLog } from '../../core/log';
import { QueueError } from '../../protocol/errors';
import type { ErrorBody } from '../../protocol/api/types';
import type { AppEnv } from '../scope';

export function errorResponse(c: Context<AppEnv>, error: QueueError): Response {
  const body: ErrorBody['error'] = { code: error.code, message: error.message };
  if (error.details !== undefined) body.details = error.details;
  // Set by requestLog, which runs before every route.
  if (c.var.requestId !== undefined) body.requestId = c.var.requestId;
  // Whole seconds, rounded up: waiting what it says is always long enough (RFC 9110 delta-seconds).
  // Every 503 says when to come back: a second, unless the error knows better.
  const retryAfterMs = error.retryAfterMs ?? (error.status === 503 ? 1000 : undefined);
  if (retryAfterMs !== undefined) c.header('retry-after', String(Math.max(1, Math.ceil(retryAfterMs / 1000))));
  return c.json({ error: body }, error.status as 400);
}

/**
 * The app's error handler. What the caller could not have caused (Redis down, a bug) is logged
 * with its cause; a refusal (a 4xx) is the request line's status, nothing more.
 */
export function onError(error: Error, c: Context<AppEnv>): Response {
  const log = c.var.log ?? fallbackLog;
  if (error instanceof QueueError) {
    if (error.code === 'REDIS_UNAVAILABLE' || error.code === 'INTERNAL') {
      log.error('request_failed', error.message, { code: error.code, error: error.cause ?? error });
    }
    return errorResponse(c, error);
  }
  log.error('unexpected_error', `unexpected error: ${error.message}`, { code: 'INTERNAL', error });
  return errorResponse(c, new QueueError('INTERNAL', 'internal error'));
}
