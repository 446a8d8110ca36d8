// Outcome callbacks, their HTTP half (docs/delivery.md#outcome-callbacks): one attempt, POSTed to the
// callback URL and signed like a delivery (the queue's secrets come with each leased outcome).
// Settling attempts is src/core/engine/outcome-attempts.ts.
import { wholeUtf8 } from '../../protocol/encoding';
import { OUTCOME_ID_PREFIX, type OutcomeCallback } from '../../protocol/outcome-body';
import { addressKind } from '../../protocol/private-address';
import { traceHeaders } from '../../protocol/trace-context';
import type { OutcomeToSend } from '../store/leased';
import { type DeliveryOptions, readBody, requestIdHeader, signedHeaders } from './delivery';

/** An attempt is aborted after this; its lease (outcome.lua, OUTCOME_LEASE_MS) lasts 5 s longer. */
export const OUTCOME_TIMEOUT_MS = 10_000;
/**
 * An attempt is started only while its lease has this much left: time for the request (aborted
 * at OUTCOME_TIMEOUT_MS) and then its settle, before the tick may lease the outcome to another.
 */
const SEND_BEFORE_LEASE_END_MS = OUTCOME_TIMEOUT_MS + 2_000;
/** The error settle-outcomes.lua reads as "not sent": the attempt is given back, uncounted. */
export const NOT_SENT = '-';
/** How much of a refusing callback's answer the record's last error quotes. */
const ERROR_BODY_CHARS = 200;

/** The last moment an attempt may start: its request and settle then end before its lease does. */
export function lastStartAt(outcome: OutcomeToSend): number {
  return outcome.record.t - SEND_BEFORE_LEASE_END_MS;
}

/** The callback's body; a result is spliced in as stored, never re-encoded. */
export function outcomeBody({ queue, id, record }: OutcomeToSend): string {
  const head: Partial<OutcomeCallback> = { id, queue, group: record.g, state: record.s };
  const tail: Partial<OutcomeCallback> = { attempts: record.a, finishedAt: record.f };
  if (record.rt) tail.resultTruncated = true;
  if (record.e !== undefined) tail.error = record.e;
  const result = record.r === undefined ? '' : `,"result":${record.r}`;
  return `${JSON.stringify(head).slice(0, -1)}${result},${JSON.stringify(tail).slice(1)}`;
}

/** Its webhook-id; a record written before records kept one goes out under the id it had then. */
function outcomeWebhookId({ id, record }: OutcomeToSend): string {
  return `${OUTCOME_ID_PREFIX}${record.w ?? id}`;
}

/**
 * Why a stored callback URL must not be sent to, or null. The URL was judged when it was stored,
 * but one stored before internal addresses were refused (or while loopback was allowed) may aim
 * at one: it is judged again, as callbackUrlSchema does (config.ts), before every attempt.
 */
function refusedCallbackUrl(url: string, allowHttpLoopback: boolean): string | null {
  let host: string;
  try {
    host = new URL(url).hostname;
  } catch {
    return null; // not a URL: fetch says so
  }
  const kind = addressKind(host);
  if (kind === 'public' || (kind === 'loopback' && allowHttpLoopback)) return null;
  return `not sent: the callback URL's host ${host} is an internal address${kind === 'loopback' ? ' (loopback)' : ''}`;
}

/**
 * One attempt: '' when the callback URL answered 2xx, else what went wrong (a callback URL on an
 * internal address is a failed attempt, never fetched).
 */
export async function sendOutcome(
  outcome: OutcomeToSend,
  options: Pick<DeliveryOptions, 'signers' | 'now' | 'allowHttpLoopback' | 'requestId'>,
): Promise<string> {
  const refused = refusedCallbackUrl(outcome.record.u, options.allowHttpLoopback === true);
  if (refused !== null) return refused;
  const body = outcomeBody(outcome);
  const signal = AbortSignal.timeout(OUTCOME_TIMEOUT_MS);
  try {
    const headers = {
      ...(await signedHeaders(options.signers.of(outcome.secrets), outcomeWebhookId(outcome), body, options.now())),
      'groupq-queue': outcome.queue,
      'groupq-outcome': outcome.record.s,
      ...requestIdHeader(options),
      ...traceHeaders({ traceparent: outcome.record.tp, tracestate: outcome.record.ts }),
    };
    const response = await fetch(outcome.record.u, {
      method: 'POST',
      headers,
      body,
      redirect: 'manual',
      signal,
    });
    if (response.status >= 200 && response.status < 300) {
      await response.body?.cancel().catch(() => {});
      return '';
    }
    const { bytes, truncated } = await readBody(response, ERROR_BODY_CHARS);
    const text = new TextDecoder().decode(truncated ? wholeUtf8(bytes) : bytes).trim();
    return `HTTP ${response.status}${text === '' ? '' : `: ${text}`}`;
  } catch (error) {
    if (signal.aborted) return `timeout after ${OUTCOME_TIMEOUT_MS} ms`;
    return `network error: ${error instanceof Error ? error.message : String(error)}`;
  }
}
