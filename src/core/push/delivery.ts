// One push of a leased job to its queue's endpoint, and what the answer means
// (docs/delivery.md): 2xx completes with the body as result, 202 leaves the lease to the
// endpoint's callbacks, anything else (or no answer within timeoutMs) is a failed attempt.
import { DAY_MS } from '../../protocol/config';
import { MAX_RESULT_BYTES } from '../../protocol/constants';
import type { Delivery } from '../../protocol/delivery-body';
import type { LeasedJob, PushTarget, Settlement } from '../store/leased';
import { textHead, wholeUtf8 } from '../../protocol/encoding';
import { parseRetryAfter } from '../../protocol/retry-after';
import { traceHeaders } from '../../protocol/trace-context';
import type { Signer, Signers } from './signing';

export const USER_AGENT = 'groupq/0.1.0';
/** How much of an error response's body the job's `error` quotes. */
const ERROR_BODY_CHARS = 500;

export interface DeliveryOptions {
  /** Each queue's signer: its own secrets, else the deployment's. */
  signers: Signers;
  /** Origin the endpoint calls back (heartbeat, complete, fail, progress). */
  publicUrl: string;
  now: () => number;
  /**
   * Outcome callbacks may go to loopback (local development, GROUPQ_ALLOW_HTTP_LOOPBACK), as
   * callbackUrlSchema allows. @default false
   */
  allowHttpLoopback?: boolean;
  /**
   * The id of the request (or cron run) whose invocation pushes: sent as groupq-request-id, so
   * an endpoint's log can name the request that led to its job (docs/logs.md).
   */
  requestId?: string;
}

/** The groupq-request-id header of a push, when the invocation has an id. */
export function requestIdHeader(options: Pick<DeliveryOptions, 'requestId'>): Record<string, string> {
  return options.requestId ? { 'groupq-request-id': options.requestId } : {};
}

/** The callback URLs of one job, under the Worker's public URL. */
export function callbackUrls(publicUrl: string, queue: string, id: string) {
  const base = `${publicUrl}/v1/queues/${encodeURIComponent(queue)}/jobs/${encodeURIComponent(id)}/`;
  return { heartbeat: `${base}heartbeat`, complete: `${base}complete`, fail: `${base}fail`, progress: `${base}progress` };
}

/** The delivery body. `data` is spliced in as stored, so big payloads are never re-encoded. */
export function deliveryBody(job: LeasedJob, publicUrl: string): string {
  const head = JSON.stringify({ id: job.id, queue: job.queue, group: job.group });
  const tail = JSON.stringify({
    attempt: job.attempt,
    maxAttempts: job.maxAttempts,
    orderMs: job.orderMs,
    createdAt: job.createdAt,
    lease: job.lease,
    callbacks: callbackUrls(publicUrl, job.queue, job.id),
  } satisfies Omit<Delivery, 'id' | 'queue' | 'group' | 'data'>);
  return `${head.slice(0, -1)},"data":${job.rawData},${tail.slice(1)}`;
}

/** The Standard Webhooks headers of one signed POST (docs/delivery.md#verifying-the-signature). */
export async function signedHeaders(signer: Signer, webhookId: string, body: string, now: number): Promise<Record<string, string>> {
  const timestamp = Math.floor(now / 1000);
  return {
    'content-type': 'application/json',
    'user-agent': USER_AGENT,
    'webhook-id': webhookId,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': await signer.sign(webhookId, timestamp, body),
  };
}

/** Reads at most `limit` bytes of a body (one more tells that there was more), then lets go. */
export async function readBody(response: Response, limit: number): Promise<{ bytes: Uint8Array; truncated: boolean }> {
  if (!response.body) return { bytes: new Uint8Array(), truncated: false };
  // A body whose length is declared within the limit, and not compressed (decoding could make
  // it any size), is read in one call: a read loop costs each delivery more CPU than the rest
  // of its answer. The runtime ends a body at its declared length.
  const declared = response.headers.get('content-length');
  const encoding = response.headers.get('content-encoding');
  if (declared !== null && /^\d+$/.test(declared) && Number(declared) <= limit && (encoding === null || encoding === 'identity')) {
    // Nothing to read: the answer already ended. Its empty stream is let go at once, not left
    // for the garbage collector, so that its connection is free for the next push.
    if (Number(declared) === 0) {
      response.body.cancel().catch(() => {});
      return { bytes: new Uint8Array(), truncated: false };
    }
    const bytes = new Uint8Array(await response.arrayBuffer());
    return bytes.byteLength > limit ? { bytes: bytes.subarray(0, limit), truncated: true } : { bytes, truncated: false };
  }
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => {});
      break;
    }
  }
  const bytes = new Uint8Array(Math.min(size, limit));
  let offset = 0;
  for (const chunk of chunks) {
    const part = chunk.subarray(0, bytes.byteLength - offset);
    bytes.set(part, offset);
    offset += part.byteLength;
    if (offset === bytes.byteLength) break;
  }
  return { bytes, truncated: size > limit };
}

function resultOf(text: string, truncated: boolean, contentType: string | null): { result: unknown; resultTruncated?: true } {
  if (truncated) return { result: text, resultTruncated: true };
  if (text === '') return { result: null };
  if (contentType !== null && /^application\/([\w.+-]+\+)?json\b/i.test(contentType)) {
    try {
      return { result: JSON.parse(text) };
    } catch {
      // Declared JSON but is not: keep what was said, as text.
    }
  }
  return { result: text };
}

/** `Retry-After` as milliseconds from now, capped at one day. */
function retryAfterMs(header: string | null, now: number): number | undefined {
  const ms = parseRetryAfter(header, now);
  return ms === undefined ? undefined : Math.min(ms, DAY_MS);
}

/** How a push was answered: 202, another status with its body read, or no answer (`error`). */
export type Answer =
  | { status: 202 }
  | { status: number; text: string; truncated: boolean; headers: Headers }
  | { status?: undefined; error: string };

/** What Node's fetch (undici) puts in `cause.code`, said as what the host did. */
const CAUSES: Record<string, string> = {
  ECONNREFUSED: 'refused the connection',
  ECONNRESET: 'reset the connection',
  ENOTFOUND: 'was not found (DNS)',
  EAI_AGAIN: 'was not found (DNS, try again)',
  ETIMEDOUT: 'did not accept the connection in time',
  EHOSTUNREACH: 'is unreachable',
  ENETUNREACH: 'is on a network not reachable',
  UND_ERR_SOCKET: 'closed the connection before answering',
};

/**
 * A failed fetch, as the job's `error`: the endpoint's host and what went wrong there. workerd
 * says "Network connection lost." alike for a refused, reset or dropped connection (no cause, no
 * code: only `remote` and `retryable`), so the error says "refused or dropped", no more; Node names
 * the cause in `cause.code`. The path and query are left out: they may carry a token.
 */
export function networkError(endpoint: string, error: unknown): string {
  const host = URL.canParse(endpoint) ? new URL(endpoint).host : 'the endpoint';
  const message = error instanceof Error ? error.message : String(error);
  const code = error instanceof Error ? (error.cause as { code?: unknown } | undefined)?.code : undefined;
  if (typeof code === 'string' && CAUSES[code]) return `network error: ${host} ${CAUSES[code]}`;
  if (message === 'Network connection lost.') return `network error: ${host} refused or dropped the connection`;
  const cause = error instanceof Error && error.cause instanceof Error ? `: ${error.cause.message}` : '';
  return `network error: ${host}: ${message}${cause}`;
}

/**
 * One signed POST of `body` (its `webhook-id` is `webhookId`) and its answer, whose body is read
 * up to `limit` bytes. Aborted at `timeoutMs`, reading the answer included: the lease (timeoutMs
 * + 5 s) outlives it. Never throws: whatever went wrong (signing included) is the answer's
 * `error`, never a hung drain.
 */
export async function post(
  target: PushTarget,
  request: { webhookId: string; body: string; headers: Record<string, string>; timeoutMs: number; limit: number },
  options: DeliveryOptions,
): Promise<Answer> {
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, request.timeoutMs);
  try {
    const headers = {
      ...(await signedHeaders(options.signers.of(target), request.webhookId, request.body, options.now())),
      ...request.headers,
      ...requestIdHeader(options),
    };
    const response = await fetch(target.endpoint, { method: 'POST', headers, body: request.body, signal: controller.signal, redirect: 'manual' });
    if (response.status === 202) {
      await response.body?.cancel().catch(() => {});
      return { status: 202 };
    }
    const { bytes, truncated } = await readBody(response, request.limit);
    // A cut body keeps whole characters only: no U+FFFD for the one the cut split.
    const text = new TextDecoder().decode(truncated ? wholeUtf8(bytes) : bytes);
    return { status: response.status, text, truncated, headers: response.headers };
  } catch (error) {
    return { error: timedOut ? `timeout after ${request.timeoutMs} ms` : networkError(target.endpoint, error) };
  } finally {
    clearTimeout(timer);
  }
}

/** A failed attempt as an answer other than 2xx (or none) tells it. */
export function failureOf(answer: Answer, now: number): { error: string; status?: number; retry?: boolean; retryAfterMs?: number } {
  if (!('text' in answer)) return { error: 'error' in answer ? answer.error : 'HTTP 202' };
  const detail = textHead(answer.text, ERROR_BODY_CHARS).trim();
  return {
    status: answer.status,
    error: `HTTP ${answer.status}${detail === '' ? '' : `: ${detail}`}`,
    retry: answer.headers.get('groupq-retry')?.trim().toLowerCase() !== 'false',
    retryAfterMs: retryAfterMs(answer.headers.get('retry-after'), now),
  };
}

/**
 * Pushes one job and turns the answer into the settlement of its lease; null means the endpoint
 * took the job asynchronously (202) and will finish it through the callbacks.
 */
export async function deliver(job: LeasedJob, target: PushTarget, options: DeliveryOptions): Promise<Settlement | null> {
  const lease = { id: job.id, lease: job.lease.token };
  const headers = {
    // Unsigned hints for logs and routing proxies; a receiver dedupes and routes on signed
    // fields only (webhook-id, the body's id and queue): docs/delivery.md#deduplicating.
    'groupq-queue': job.queue,
    'groupq-job-id': job.id,
    'groupq-group': encodeURIComponent(job.group),
    'groupq-attempt': String(job.attempt),
    'groupq-lease-expires-at': String(job.lease.expiresAt),
    // The producer's trace context, unchanged: groupq runs no tracer (docs/tracing.md).
    ...traceHeaders(job),
  };
  const body = deliveryBody(job, options.publicUrl);
  const answer = await post(target, { webhookId: job.webhookId, body, headers, timeoutMs: job.timeoutMs, limit: MAX_RESULT_BYTES }, options);
  if (answer.status === 202) return null;
  if (answer.status !== undefined && answer.status >= 200 && answer.status < 300 && 'text' in answer) {
    return { kind: 'complete', ...lease, status: answer.status, ...resultOf(answer.text, answer.truncated, answer.headers.get('content-type')) };
  }
  return { kind: 'fail', ...lease, ...failureOf(answer, options.now()) };
}
