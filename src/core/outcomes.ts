// Outcome callbacks (README, Outcome callbacks): the scripts that end a job record its outcome
// and lease it to their caller (src/lua/includes/outcome.lua); this module sends one attempt,
// signed like a delivery (the queue's secrets come with each leased outcome), and settles
// attempts: delivered, failed and retried by the schedule in settle-outcomes.lua, or not sent
// (given back uncounted).
import { scripts } from '../lua/scripts.generated';
import type { EngineContext } from './context';
import { type DeliveryOptions, readBody, signedHeaders } from './delivery';
import { noteDue } from './due-index';
import { type OutcomeCallback, outcomeWebhookId } from './outcome-body';
import { addressKind } from './private-address';
import { callScript } from './scripts';
import type { QueueSecrets } from './signing';

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

/** An outcome record as outcome.lua writes it (short field names: they are stored). */
interface OutcomeRecord {
  u: string;
  g: string;
  s: OutcomeCallback['state'];
  r?: string;
  rt?: boolean;
  e?: string;
  a: number;
  f: number;
  n: number;
  /** The end of this attempt's lease. */
  t: number;
}

/** One attempt at an outcome callback, leased to whoever holds this. */
export interface OutcomeToSend {
  queue: string;
  id: string;
  record: OutcomeRecord;
  /** The queue's own signing secrets (none: the deployment's). */
  secrets: QueueSecrets;
}

/** The {id, record JSON, signingSecret, signingSecretNext} tuples a script hands over ('' for none). */
export function toOutcomesToSend(queue: string, tuples: readonly (readonly [string, string, string, string])[] = []): OutcomeToSend[] {
  return tuples.map(([id, json, secret, next]) => ({
    queue,
    id,
    record: JSON.parse(json) as OutcomeRecord,
    secrets: { signingSecret: secret || undefined, signingSecretNext: next || undefined },
  }));
}

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
  options: Pick<DeliveryOptions, 'signers' | 'now' | 'allowHttpLoopback'>,
): Promise<string> {
  const refused = refusedCallbackUrl(outcome.record.u, options.allowHttpLoopback === true);
  if (refused !== null) return refused;
  const body = outcomeBody(outcome);
  const signal = AbortSignal.timeout(OUTCOME_TIMEOUT_MS);
  try {
    const headers = {
      ...(await signedHeaders(options.signers.of(outcome.secrets), outcomeWebhookId(outcome.id), body, options.now())),
      'groupq-queue': outcome.queue,
      'groupq-outcome': outcome.record.s,
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
    const text = new TextDecoder().decode((await readBody(response, ERROR_BODY_CHARS)).bytes).trim();
    return `HTTP ${response.status}${text === '' ? '' : `: ${text}`}`;
  } catch (error) {
    if (signal.aborted) return `timeout after ${OUTCOME_TIMEOUT_MS} ms`;
    return `network error: ${error instanceof Error ? error.message : String(error)}`;
  }
}

/**
 * How attempts went, each fenced by the record's attempt and finishedAt (settle-outcomes.lua):
 * '' delivered, NOT_SENT never sent (no push slot in time), else the error.
 */
export async function settleOutcomes(
  ctx: EngineContext,
  queue: string,
  attempts: readonly { outcome: OutcomeToSend; error: string }[],
): Promise<void> {
  if (attempts.length === 0) return;
  const args: (string | number)[] = [ctx.now(), attempts.length];
  for (const { outcome, error } of attempts) args.push(outcome.id, outcome.record.n, outcome.record.f, error);
  const { dueAt } = await callScript(ctx, scripts.settleOutcomes, { queue }, args);
  await noteDue(ctx, queue, dueAt); // a retry's time
}
