// A list in one of a queue's panels, read a page at a time with the API's cursor
// (docs/http-api.md#paging): the jobs of a tab, the groups. It holds what is shown and the cursor
// after it; a refresh reads as many as are shown, and "Load more" the next page, its button busy
// meanwhile. The answer to a Load more sent before the list was cleared (another tab, another
// group) is dropped.
import type { QueueContext } from '../actions';
import { h } from '../dom';

/** A page as a panel hands it over: its items and the cursor after them (null: the last page). */
export interface Page<T> {
  items: T[];
  cursor: string | null;
}

export const PAGE = 25;
/** The API's largest page: a refresh re-reads at most this many. */
export const MAX_PAGE = 1000;

export class Pager<T> {
  items: T[] = [];
  cursor: string | null = null;
  /** Bumped by `clear`: a Load more answer of an older list is dropped. */
  private generation = 0;

  constructor(
    private readonly ctx: QueueContext,
    /** Reads the PAGE items after `cursor`. */
    private readonly next: (cursor: string) => PromiseLike<Page<T>>,
    /** Draws the panel again. */
    private readonly draw: () => void,
  ) {}

  /** How many a refresh reads: as many as are shown, at least a page. */
  get refreshLimit(): number {
    return Math.min(MAX_PAGE, Math.max(PAGE, this.items.length));
  }

  /** Nothing shown and nothing more: a page of a hash walk may hold none and still have more after it. */
  get empty(): boolean {
    return this.items.length === 0 && this.cursor === null;
  }

  /** What a refresh read, in place of what was shown. */
  show(page: Page<T>): void {
    this.items = page.items;
    this.cursor = page.cursor;
  }

  /** Empties the list (it will list something else) and drops a Load more under way. */
  clear(): void {
    this.generation++;
    this.show({ items: [], cursor: null });
  }

  /** "Load more <what>", or null after the last page. */
  moreButton(label: string, focusKey: string): HTMLButtonElement | null {
    if (this.cursor === null) return null;
    return h('button', { type: 'button', class: 'load-more', 'data-focus-key': focusKey, onclick: (e: Event) => void this.loadMore(e.currentTarget as HTMLButtonElement) }, label);
  }

  private async loadMore(button: HTMLButtonElement): Promise<void> {
    const { cursor, generation } = this;
    if (cursor === null) return;
    button.setAttribute('aria-disabled', 'true');
    try {
      const page = await this.next(cursor);
      if (generation !== this.generation) return;
      this.items = [...this.items, ...page.items];
      this.cursor = page.cursor;
      this.draw();
    } catch (error) {
      this.ctx.fail(error);
    } finally {
      button.removeAttribute('aria-disabled');
    }
  }
}
