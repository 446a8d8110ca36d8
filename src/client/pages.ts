// A paged list you can await (one page) or iterate with `for await` (every item, following
// the cursor until the server says there is no more).

export interface Page {
  cursor: string | null;
}

export class PagedList<P extends Page, Item> implements PromiseLike<P>, AsyncIterable<Item> {
  constructor(
    private readonly load: (cursor: string | undefined) => Promise<P>,
    private readonly itemsOf: (page: P) => Item[],
    private readonly cursor?: string,
  ) {}

  then<A = P, B = never>(
    onFulfilled?: ((page: P) => A | PromiseLike<A>) | null,
    onRejected?: ((reason: unknown) => B | PromiseLike<B>) | null,
  ): Promise<A | B> {
    return this.load(this.cursor).then(onFulfilled, onRejected);
  }

  async *[Symbol.asyncIterator](): AsyncIterator<Item> {
    let cursor = this.cursor;
    do {
      const page = await this.load(cursor);
      yield* this.itemsOf(page);
      cursor = page.cursor ?? undefined;
    } while (cursor !== undefined);
  }
}
