// A paged list you can await (one page) or iterate with `for await` (every item, following
// the cursor until the server says there is no more).
//
// Cursors are positions by key, so acting on items inside the loop shifts nothing. An item can
// still come round again within one iteration: a job re-scored past the cursor (delayed again,
// leased again), or a job or group HSCAN repeats after the hash shrank. The iterator
// remembers what it yielded (by `keyOf`) and yields each item once.

export interface Page {
  cursor: string | null;
}

export class PagedList<P extends Page, Item> implements PromiseLike<P>, AsyncIterable<Item> {
  constructor(
    private readonly load: (cursor: string | undefined) => Promise<P>,
    private readonly itemsOf: (page: P) => Item[],
    private readonly keyOf: (item: Item) => string,
    private readonly cursor?: string,
  ) {}

  then<A = P, B = never>(
    onFulfilled?: ((page: P) => A | PromiseLike<A>) | null,
    onRejected?: ((reason: unknown) => B | PromiseLike<B>) | null,
  ): Promise<A | B> {
    return this.load(this.cursor).then(onFulfilled, onRejected);
  }

  async *[Symbol.asyncIterator](): AsyncIterator<Item> {
    const yielded = new Set<string>();
    let cursor = this.cursor;
    do {
      const page = await this.load(cursor);
      for (const item of this.itemsOf(page)) {
        const key = this.keyOf(item);
        if (yielded.has(key)) continue;
        yielded.add(key);
        yield item;
      }
      cursor = page.cursor ?? undefined;
    } while (cursor !== undefined);
  }
}
