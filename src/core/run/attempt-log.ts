// The log lines of pushes (docs/logs.md): one per delivery attempt, one per outcome callback
// attempt. Each carries the invocation's requestId (the log's), so a job's attempts can be traced
// back to the request or cron run that pushed them, and the endpoint got the same id as its
// groupq-request-id header. A failed attempt is a warning; the rest are info.
import type { Log } from '../log';
import { NOT_SENT } from '../push/outcome-callback';
import type { LeasedJob, OutcomeToSend, Settlement } from '../store/leased';

/**
 * One delivery attempt: `settlement` as deliver() returned it (null: the endpoint answered 202),
 * or one job's of a batch (deliverBatch: `released`, the endpoint did not get to it).
 */
export function logDelivery(log: Log, job: LeasedJob, settlement: Settlement | null, durationMs: number): void {
  const failed = settlement?.kind === 'fail' ? settlement : null;
  const level = failed ? 'warn' : 'info';
  if (!log.enabled(level)) return;
  // No status: no answer came (a network error, a timeout); `error` says which.
  const status = settlement === null ? 202 : settlement.status;
  const result = settlement === null ? 'accepted' : { complete: 'completed', fail: 'failed', release: 'released' }[settlement.kind];
  const said = failed ? `failed: ${failed.error}` : `${status} ${result}`;
  log[level]('delivery', `job ${job.id} attempt ${job.attempt}: ${said}`, {
    queue: job.queue,
    job: job.id,
    group: job.group,
    attempt: job.attempt,
    maxAttempts: job.maxAttempts,
    status,
    result,
    error: failed?.error,
    // The endpoint's groupq-retry: false, and its Retry-After: what the next attempt does.
    retry: failed?.retry === false ? false : undefined,
    retryAfterMs: failed?.retryAfterMs,
    durationMs,
  });
}

/** The status sendOutcome's error names ("HTTP 500: ..."); none for a network error or a timeout. */
function statusOf(error: string): number | undefined {
  const match = /^HTTP (\d{3})\b/.exec(error);
  return match ? Number(match[1]) : undefined;
}

/** One outcome callback attempt: `error` as sendOutcome returned it ('' when delivered). */
export function logOutcome(log: Log, outcome: OutcomeToSend, error: string, durationMs: number): void {
  const fields = {
    queue: outcome.queue,
    job: outcome.id,
    group: outcome.record.g,
    state: outcome.record.s,
    attempt: outcome.record.n,
  };
  if (error === NOT_SENT) {
    // No push slot came while its lease lasted: given back uncounted, tried again later.
    log.debug('outcome', `outcome callback of job ${outcome.id} not sent: no push slot`, { ...fields, result: 'not_sent' });
    return;
  }
  const level = error === '' ? 'info' : 'warn';
  if (!log.enabled(level)) return;
  const said = error === '' ? 'delivered' : `failed: ${error}`;
  log[level]('outcome', `outcome callback of job ${outcome.id} attempt ${outcome.record.n}: ${said}`, {
    ...fields,
    status: error === '' ? undefined : statusOf(error),
    result: error === '' ? 'delivered' : 'failed',
    error: error === '' ? undefined : error,
    durationMs,
  });
}
