// The parts of a job's own view under their headings, and the two drawn only when GET /jobs/{id}
// has them: its attempt history (the last attempts, oldest first, with the batch each ran in on a
// queue with batches) and its outcome callback (the URL, and how delivering the outcome there went). The shapes are the API's (docs/http-api.md#jobs).
import type { Job } from '../../client';
import { stateBadge } from '../badges';
import { dataTable, fieldList, h } from '../dom';
import { formatWhen } from '../format';

export interface AttemptRecord {
  attempt: number;
  startedAt: number;
  finishedAt: number;
  outcome: 'completed' | 'failed' | 'expired' | 'cancelled';
  /** The endpoint's HTTP status, when there was one. */
  status?: number;
  error?: string;
  /** The batch delivery this attempt was part of: its webhook-id, the job's place (0 first), its size. */
  batch?: { id: string; index: number; size: number };
}

export interface OutcomeRecord {
  state: 'pending' | 'delivered' | 'abandoned';
  attempts: number;
  nextAttemptAt?: number;
  lastError?: string;
  deliveredAt?: number;
}

/** A job as its own route shows it: listings leave these out. */
export type JobDetail = Job & { history?: AttemptRecord[]; callbackUrl?: string; outcome?: OutcomeRecord };

/** One part of a job's view under its heading, marked `data-part` with its id. */
export function detailPart(id: string, title: string, ...content: (Node | null)[]): HTMLElement {
  return h('section', { class: 'detail-part', 'aria-labelledby': id, 'data-part': id }, h('h2', { id }, title), ...content);
}

/** "3 of 10" with the batch's id under it; a dash for an attempt delivered alone. */
function batchCell(batch: AttemptRecord['batch']): HTMLElement {
  if (batch === undefined) return h('td', { 'data-label': 'Batch', class: 'muted' }, '—');
  return h(
    'td',
    { 'data-label': 'Batch', 'data-batch': batch.id },
    `${batch.index + 1} of ${batch.size}`,
    h('div', { class: 'muted' }, h('code', {}, batch.id)),
  );
}

export function historyPart(job: JobDetail): HTMLElement | null {
  if (job.history === undefined) return null;
  if (job.history.length === 0) return detailPart('job-history', 'Attempts', h('p', { class: 'muted' }, 'No attempt has ended yet.'));
  // The column only when an attempt ran in a batch: on a queue without batches it would be all dashes.
  const batched = job.history.some((a) => a.batch !== undefined);
  return detailPart(
    'job-history',
    'Attempts',
    dataTable(
      'stack history-table',
      'Attempts, oldest first',
      ['Attempt', 'Started', 'Finished', 'Outcome', 'Status', 'Error', ...(batched ? ['Batch'] : [])],
      job.history.map((a) =>
        h(
          'tr',
          { 'data-attempt': a.attempt },
          h('td', { 'data-label': 'Attempt' }, String(a.attempt)),
          h('td', { 'data-label': 'Started' }, formatWhen(a.startedAt)),
          h('td', { 'data-label': 'Finished' }, formatWhen(a.finishedAt)),
          h('td', { 'data-label': 'Outcome' }, stateBadge(a.outcome)),
          h('td', { 'data-label': 'Status' }, a.status === undefined ? '—' : String(a.status)),
          h('td', { 'data-label': 'Error', class: a.error ? 'error-text' : 'muted' }, a.error ?? '—'),
          batched ? batchCell(a.batch) : null,
        ),
      ),
    ),
  );
}

export function callbackPart(job: JobDetail): HTMLElement | null {
  if (job.callbackUrl === undefined && job.outcome === undefined) return null;
  const { outcome } = job;
  const rows: [string, Node | string][] = [];
  if (job.callbackUrl !== undefined) rows.push(['URL', h('code', { class: 'url' }, job.callbackUrl)]);
  if (outcome) {
    rows.push(['Delivery', stateBadge(outcome.state)], ['Attempts', String(outcome.attempts)]);
    if (outcome.deliveredAt !== undefined) rows.push(['Delivered', formatWhen(outcome.deliveredAt)]);
    if (outcome.nextAttemptAt !== undefined) rows.push(['Next attempt', formatWhen(outcome.nextAttemptAt)]);
    if (outcome.lastError !== undefined) rows.push(['Last error', h('span', { class: 'error-text' }, outcome.lastError)]);
  } else {
    rows.push(['Delivery', h('span', { class: 'muted' }, 'when the job ends')]);
  }
  return detailPart('job-callback', 'Outcome callback', fieldList(rows));
}
