// Bulk actions above the jobs of a finished state: "Retry all failed", "Clean completed" /
// "Clean failed". Each asks first (Confirmer), then runs through the client, which repeats the
// API's bounded steps until done; the count of what it did is announced and stays in the bar.
import type { CleanOptions, JobState } from '../../client';
import { FINISHED_STATES } from '../../protocol/constants';
import { type QueueContext, act } from '../actions';
import type { Confirmer } from '../confirm';
import { h } from '../dom';
import { countOf } from '../format';

/** The tabs with bulk actions; cleaning one more finished state is one more entry. */
const CLEANABLE: readonly CleanOptions['state'][] = FINISHED_STATES;

/** "1,000 failed jobs", "1 completed job". */
const jobs = (n: number, state: string) => countOf(n, `${state} job`);

export class BulkActions {
  /** What the last bulk action did, per state: shown until the next one. */
  private readonly last = new Map<JobState, string>();

  constructor(
    private readonly ctx: QueueContext,
    private readonly confirmer: Confirmer,
  ) {}

  /** The bar for `state`, which holds `count` jobs (null: nothing to show there). */
  bar(state: JobState, count: number): HTMLElement | null {
    const cleanable = CLEANABLE.find((s) => s === state);
    if (cleanable === undefined) return null;
    const last = this.last.get(state);
    const controls = count === 0 ? [] : this.controls(state, cleanable, count);
    if (controls.length === 0 && last === undefined) return null;
    return h('div', { class: 'bulk-bar' }, ...controls, last ? h('span', { class: 'bulk-result', 'data-bulk-result': state }, last) : null);
  }

  private controls(state: JobState, cleanable: CleanOptions['state'], count: number): HTMLElement[] {
    const { queue } = this.ctx;
    const controls: HTMLElement[] = [];
    if (state === 'failed') {
      controls.push(
        this.confirmer.control({
          key: 'bulk:retry',
          action: 'retry-all',
          label: 'Retry all failed',
          question: `Run all ${jobs(count, 'failed')} again?`,
          confirmLabel: 'Retry all',
          run: (button) => this.run(button, state, async () => `Retried ${jobs((await queue.retryAll({ state: 'failed' })).count, 'failed')}.`),
        }),
      );
    }
    controls.push(
      this.confirmer.control({
        key: `bulk:clean:${cleanable}`,
        action: 'clean',
        label: `Clean ${cleanable}`,
        question: `Delete all ${jobs(count, cleanable)}? It cannot be undone.`,
        confirmLabel: `Delete ${cleanable} jobs`,
        run: (button) => this.run(button, state, async () => `Deleted ${jobs((await queue.clean({ state: cleanable })).count, cleanable)}.`),
      }),
    );
    return controls;
  }

  private run(button: HTMLButtonElement, state: JobState, work: () => Promise<string>): Promise<void> {
    return act(this.ctx, button, async () => {
      const said = await work();
      this.last.set(state, said);
      return said;
    });
  }
}
