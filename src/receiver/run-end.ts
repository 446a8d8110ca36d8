// How a job function's run ended (its return or throw, captured), and what that tells groupq, in
// the two ways it can be told: as the HTTP answer to the delivery (synchronous) or as the
// complete/fail callback (after a 202). NonRetryableError → no more attempts; RetryAfterError →
// the next attempt after its delay.
import { type DeliveryVerificationError, NonRetryableError, RetryAfterError } from './errors';
import type { FailBody } from './callbacks';
import type { RunEnd } from './lease';

/** A function's run, captured: its value, or what it threw. */
export type Captured = { ok: true; value: unknown } | { ok: false; error: unknown };

/** Runs `fn` to a Captured; a synchronous throw counts like a rejection. */
export async function capture(fn: () => unknown): Promise<Captured> {
  try {
    return { ok: true, value: await fn() };
  } catch (error) {
    return { ok: false, error };
  }
}

/** The text groupq stores as the job's error. */
export function errorText(error: unknown): string {
  if (error instanceof Error) return error.message || error.name;
  return typeof error === 'string' ? error : String(error);
}

/** What a data parser threw: a zod-style error as "path: message" per issue, else its message. */
export function parseErrorText(error: unknown): string {
  const issues = (error as { issues?: unknown } | null)?.issues;
  if (!Array.isArray(issues) || issues.length === 0) return errorText(error);
  const shown = issues.slice(0, 5).map((issue: { path?: unknown[]; message?: unknown }) => {
    const where = Array.isArray(issue.path) && issue.path.length > 0 ? issue.path.join('.') : 'data';
    return `${where}: ${String(issue.message)}`;
  });
  return issues.length > shown.length ? `${shown.join('; ')}; and ${issues.length - shown.length} more` : shown.join('; ');
}

/** The complete or fail callback a captured run makes. */
export function endOf(run: Captured): RunEnd {
  return run.ok ? { kind: 'complete', result: run.value } : { kind: 'fail', ...failOf(run.error) };
}

/** The failure a thrown value reports: its text, and whether (or when) the job is tried again. */
export function failOf(thrown: unknown): FailBody {
  const error = errorText(thrown);
  if (thrown instanceof NonRetryableError) return { error, retry: false };
  if (thrown instanceof RetryAfterError) return { error, retryAfterMs: thrown.retryAfterMs };
  return { error };
}

/** The status a handler answers a request it refused with: 409 a replay, 413 a body too large, else 401. */
export function refusalStatus(error: DeliveryVerificationError): number {
  if (error.reason === 'replayed') return 409;
  return error.reason === 'body_too_large' ? 413 : 401;
}

/** A plain-text answer. */
export function textResponse(status: number, text: string, headers: Record<string, string> = {}): Response {
  return new Response(text, { status, headers: { 'content-type': 'text/plain; charset=utf-8', ...headers } });
}

/**
 * The synchronous answer: 200 with the result as JSON (no body for undefined, which groupq
 * stores as null), or 500 with the error's message, marked with groupq-retry: false or
 * Retry-After (whole seconds, rounded up) as the error asks.
 */
export function responseOf(run: Captured): Response {
  if (run.ok) {
    if (run.value === undefined) return new Response(null, { status: 200 });
    let json: string;
    try {
      json = JSON.stringify(run.value);
    } catch (error) {
      // Not JSON (a BigInt, a cycle): the same result would fail every attempt.
      return textResponse(500, `the result is not JSON: ${errorText(error)}`, { 'groupq-retry': 'false' });
    }
    return new Response(json, { status: 200, headers: { 'content-type': 'application/json' } });
  }
  const headers: Record<string, string> = {};
  if (run.error instanceof NonRetryableError) headers['groupq-retry'] = 'false';
  if (run.error instanceof RetryAfterError) headers['retry-after'] = String(Math.ceil(run.error.retryAfterMs / 1000));
  return textResponse(500, errorText(run.error), headers);
}
