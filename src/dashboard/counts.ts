// A queue's counts by state, as the list's cards and the queue's own view both show them: one
// number per state and the groups, the finished states marked as what the queue keeps.
import type { QueueCounts } from '../client';
import { h } from './dom';
import { formatCount } from './format';

export const COUNT_LABELS: [keyof QueueCounts, string][] = [
  ['waiting', 'Waiting'],
  ['delayed', 'Delayed'],
  ['active', 'Active'],
  ['completed', 'Completed'],
  ['failed', 'Failed'],
  ['cancelled', 'Cancelled'],
  ['expired', 'Expired'],
  ['groups', 'Groups'],
];

/**
 * What a finished state's count is: the jobs the queue keeps in it, not how many ended (the chart
 * counts those). A queue that keeps no completed jobs (keepCompleted 0, the default) shows 0.
 */
const KEPT: Partial<Record<keyof QueueCounts, string>> = {
  completed: 'Completed jobs the queue keeps (keepCompleted); the chart counts every job that completed',
  failed: 'Failed jobs the queue keeps (keepFailed); the chart counts every job that failed',
  cancelled: 'Cancelled jobs the queue keeps; the chart does not count cancels',
  expired: 'Jobs that did not start by their deadline (ttlMs), kept like failed ones; the chart does not count them',
};

/** The counts (COUNT_LABELS) as a description list (label, number). */
export function countsList(counts: QueueCounts): HTMLElement {
  return h(
    'dl',
    { class: 'counts' },
    ...COUNT_LABELS.map(([key, label]) =>
      h(
        'div',
        { class: `count count-${key}${counts[key] > 0 ? ' nonzero' : ''}`, 'data-count': key },
        h('dt', KEPT[key] ? { title: KEPT[key] } : {}, KEPT[key] ? `${label} (kept)` : label),
        h('dd', {}, formatCount(counts[key])),
      ),
    ),
  );
}
