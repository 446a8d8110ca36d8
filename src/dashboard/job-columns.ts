// What a jobs table shows, in a queue's jobs tabs and in a group's view: for each state the
// columns that matter there (the result of a completed job, the error of a failed one and how it
// ended, progress and lease expiry of an active one) and the cells of one job. Job ids link to
// the job's own view, with a job's priority and debounce key as badges next to the id; groups
// link to the group's view.
import type { Job, JobState } from '../client';
import { stateBadge } from './badges';
import { h, jsonText } from './dom';
import { flowBadges } from './flow-format';
import { countOf, formatWhen, previewJson } from './format';
import { groupLink, jobHref } from './links';

export interface Column {
  label: string;
  cell(job: Job): Node | string;
}

const muted = (text: string) => h('span', { class: 'muted' }, text);
const when = (at: number | undefined, otherwise = '—') => (at === undefined ? muted(otherwise) : formatWhen(at));

/** Short JSON inline; long JSON as a disclosure that opens to the whole value. */
export function jsonCell(value: unknown, key: string): HTMLElement {
  const { preview, full } = previewJson(value);
  if (full === null) return h('code', { class: 'json' }, ...jsonText(preview));
  return h(
    'details',
    { class: 'json', 'data-open-key': key },
    h('summary', { 'data-focus-key': key }, h('code', {}, ...jsonText(preview))),
    h('pre', {}, h('code', {}, ...jsonText(full))),
  );
}

/** The job's id, linking to its view, and its flow badges. */
const job: Column = {
  label: 'Job',
  cell: (j) => {
    const link = h('a', { class: 'id job-link', href: jobHref(j.queue, j.id), 'data-focus-key': `open:${j.id}` }, h('code', {}, j.id));
    const badges = flowBadges(j);
    return badges.length === 0 ? link : h('span', { class: 'job-cell' }, link, ...badges);
  },
};
const group: Column = { label: 'Group', cell: (j) => groupLink(j.queue, j.group, `group-of:${j.id}`) };
const attempts: Column = { label: 'Attempts', cell: (j) => `${j.attempts} / ${j.maxAttempts}` };
/**
 * How a failed job ended, told apart by its attempts: "after 3 attempts" when it used them all;
 * "not retried" when it used fewer, failed for good at once (its endpoint said not to retry:
 * a NonRetryableError, `groupq-retry: false`). A retry by hand starts the count again.
 */
export function failedHow(j: Job): HTMLElement {
  const outOfAttempts = j.attempts >= j.maxAttempts;
  const text = outOfAttempts ? `after ${countOf(j.attempts, 'attempt')}` : `not retried, after ${j.attempts} of ${countOf(j.maxAttempts, 'attempt')}`;
  return h('span', { class: 'failed-how', 'data-failed': outOfAttempts ? 'out-of-attempts' : 'not-retried' }, text);
}
const data: Column = { label: 'Data', cell: (j) => jsonCell(j.data, `data:${j.id}`) };
const runsAt: Column = { label: 'Runs at', cell: (j) => when(j.runAt, j.state === 'waiting' ? 'when its turn comes' : '—') };
const finished: Column = { label: 'Finished', cell: (j) => when(j.finishedAt) };

const COLUMNS: Record<JobState, Column[]> = {
  waiting: [job, group, attempts, data, runsAt],
  delayed: [job, group, attempts, data, runsAt],
  active: [
    job, group, attempts, data,
    { label: 'Progress', cell: (j) => (j.progress === undefined ? muted('—') : jsonCell(j.progress, `progress:${j.id}`)) },
    { label: 'Started', cell: (j) => when(j.startedAt) },
    { label: 'Lease expires', cell: (j) => when(j.leaseExpiresAt) },
  ],
  completed: [
    job, group, attempts, data,
    {
      label: 'Result',
      cell: (j) => (j.result === undefined ? muted(j.resultTruncated ? 'too large to keep' : '—') : jsonCell(j.result, `result:${j.id}`)),
    },
    finished,
  ],
  failed: [job, group, { label: 'Attempts', cell: failedHow }, data, { label: 'Error', cell: (j) => h('span', { class: 'error-text' }, j.error ?? '—') }, finished],
  cancelled: [job, group, attempts, data, finished],
  expired: [job, group, data, finished],
};

export function columnsOf(state: JobState): Column[] {
  return COLUMNS[state];
}

/** A group's jobs in the order they run: waiting and active ones side by side. */
export const GROUP_JOB_COLUMNS: Column[] = [
  job,
  { label: 'State', cell: (j) => stateBadge(j.state) },
  attempts,
  data,
  runsAt,
];
