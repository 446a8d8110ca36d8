// The one error shape, {"error":{code,message,details}}, for every failure: domain errors map to
// their status through ERROR_STATUS; anything else is INTERNAL and only the log sees it (an
// UpstashError's message holds the script and its arguments).
import type { Context } from 'hono';
import { QueueError } from '../protocol/errors';

export function errorResponse(c: Context, error: QueueError): Response {
  const body: { code: string; message: string; details?: unknown } = { code: error.code, message: error.message };
  if (error.details !== undefined) body.details = error.details;
  // Whole seconds, rounded up: waiting what it says is always long enough (RFC 9110 delta-seconds).
  // Every 503 says when to come back: a second, unless the error knows better.
  const retryAfterMs = error.retryAfterMs ?? (error.status === 503 ? 1000 : undefined);
  if (retryAfterMs !== undefined) c.header('retry-after', String(Math.max(1, Math.ceil(retryAfterMs / 1000))));
  return c.json({ error: body }, error.status as 400);
}

export function onError(error: Error, c: Context): Response {
  if (error instanceof QueueError) {
    if (error.code === 'REDIS_UNAVAILABLE' || error.code === 'INTERNAL') console.error('groupq:', error.message, error.cause ?? '');
    return errorResponse(c, error);
  }
  console.error('groupq: unexpected error', error);
  return errorResponse(c, new QueueError('INTERNAL', 'internal error'));
}
