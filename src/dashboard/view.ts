// What the views of a queue, of a job and of a group share (app.ts routes to them): the context
// their parts act through (actions.ts), made for the view's queue; their head (the link back, the
// title, the view's own buttons); and the refresh. A refresh reads all the view shows, draws it
// only if no newer refresh started meanwhile (an older answer may arrive last), and stops for good
// once what the view shows is gone: the view says so once and sends no request after that. Which
// event streams a view follows (app.ts's live feed) is the view's to say, from what it last read.
import type { GroupqClient } from '../client';
import { GroupqError } from '../client';
import type { QueueContext } from './actions';
import { type Child, h, render } from './dom';
import { queueHref } from './links';

/** What a view's head shows; the link back leads to the queue's view unless `back` says otherwise. */
interface Head {
  back?: { href: string; text: string };
  /** The h1's content: app.ts focuses the h1 when the view opens. */
  title: Child[];
  /** Next to the title (a paused queue's badge). */
  badge?: Child;
  /** The view's own buttons; null or left out: none (yet). */
  actions?: Child[] | null;
}

export abstract class View<Answer> {
  abstract readonly element: HTMLElement;
  /** What the view shows no longer exists: nothing left to refresh. */
  gone = false;
  /** The least time between two re-reads caused by events: a queue's view reads five routes. */
  readonly liveGapMs: number = 1000;
  /** Called after each read that drew (or found the view gone): app.ts follows `streams()` then. */
  onRead: (() => void) | null = null;
  /** The back link, the title and the view's own buttons. */
  protected readonly head = h('div', { class: 'view-head' });
  protected readonly ctx: QueueContext;
  /** Answers of an older refresh that arrive after a newer one started are dropped. */
  private generation = 0;

  constructor(client: GroupqClient, readonly queueName: string, fail: (error: unknown) => void) {
    this.ctx = { client, queue: client.queue(queueName), refresh: () => this.refresh().then(() => undefined), fail };
  }

  /** Re-reads and redraws the view; false when that failed (the error went to `fail`). */
  async refresh(): Promise<boolean> {
    if (this.gone) return true;
    const generation = ++this.generation;
    try {
      const answer = await this.read();
      if (generation === this.generation && !this.gone) {
        this.show(answer);
        this.onRead?.();
      }
      return true;
    } catch (error) {
      if (generation !== this.generation) return true;
      if (error instanceof GroupqError && this.showGone(error.code)) {
        this.gone = true;
        this.onRead?.();
        return true;
      }
      this.ctx.fail(error);
      return false;
    }
  }

  /** The event streams to follow now (paths on this origin; `job`: a job's, which ends with it). */
  streams(): { paths: string[]; job?: boolean } {
    return this.gone ? { paths: [] } : this.liveStreams();
  }

  /** The view's streams while it shows something; none by default: the view only polls. */
  protected liveStreams(): { paths: string[]; job?: boolean } {
    return { paths: [] };
  }

  /** Draws the head, with `extra` after it (a notice that what the view shows is gone). */
  protected drawHeadOf({ back, title, badge, actions }: Head, ...extra: Child[]): void {
    const { href, text } = back ?? { href: queueHref(this.queueName), text: `← Queue ${this.queueName}` };
    render(
      this.head,
      h('a', { class: 'back', href, 'data-focus-key': 'back' }, text),
      h('div', { class: 'title-row' }, h('h1', { tabindex: '-1', 'data-focus-key': 'title' }, ...title), badge),
      actions ? h('div', { class: 'head-actions' }, ...actions) : null,
      ...extra,
    );
  }

  /** Everything the view shows, read in parallel where it takes several requests. */
  protected abstract read(): Promise<Answer>;

  /** Draws what `read` answered. */
  protected abstract show(answer: Answer): void;

  /** Says that what the view shows is gone and answers true, when the API's error `code` means so. */
  protected abstract showGone(code: string): boolean;
}
