// A partitioned queue's partitions (docs/http-api.md#partitions), under the counts in its view: a
// disclosure, "3 partitions", that lists each partition once opened, with the database of the
// pool it lives on and its counts (GET /v1/queues/{queue}/partitions). It is read only while it
// is open: the view re-reads its routes at every change of the queue, and these counts are the
// queue's own again, split, so a closed list costs nothing. A queue of one partition shows none.
import type { PartitionInfo } from '../../client';
import { COUNT_LABELS } from '../counts';
import { dataTable, h } from '../dom';
import { countOf, formatCount } from '../format';

/** What a refresh read: the partitions, why they could not be read, or nothing (the list is closed). */
export type PartitionsAnswer = { ok: true; partitions: PartitionInfo[] } | { ok: false; reason: string } | null;

export class PartitionsPart {
  /** Whether the list is open: only then does a refresh read it. */
  open = false;

  /** `refresh` reads the view again: opening the list reads it at once. */
  constructor(private readonly refresh: () => void) {}

  /** The disclosure for a queue of `count` partitions, with what the last refresh read; null for one. */
  element(count: number, answer: PartitionsAnswer): HTMLElement | null {
    if (count <= 1) return null;
    const details = h(
      'details',
      { class: 'partitions', 'data-part': 'partitions', open: this.open },
      h('summary', { 'data-focus-key': 'partitions' }, countOf(count, 'partition')),
      this.body(answer),
    );
    // A redraw builds the element open (its attribute fires a toggle too): only a change is the user's.
    details.addEventListener('toggle', () => {
      if (details.open === this.open) return;
      this.open = details.open;
      if (this.open) this.refresh();
    });
    return details;
  }

  private body(answer: PartitionsAnswer): HTMLElement {
    if (answer === null) return h('p', { class: 'muted' }, 'Reading…');
    if (!answer.ok) return h('p', { class: 'muted' }, `Partitions unavailable: ${answer.reason}`);
    return dataTable(
      'compact partitions-table',
      'Partitions: the database each lives on and its counts',
      ['Partition', 'Database', ...COUNT_LABELS.map(([, label]) => label)],
      answer.partitions.map((p) =>
        h(
          'tr',
          { 'data-partition': p.partition },
          h('td', {}, String(p.partition)),
          h('td', { 'data-cell': 'database' }, String(p.database)),
          ...COUNT_LABELS.map(([key]) => h('td', { 'data-count': key, class: p.counts[key] > 0 ? '' : 'muted' }, formatCount(p.counts[key]))),
        ),
      ),
    );
  }
}
