// The streams one open view follows (app.ts makes a feed per view, and closes it when the view is
// left, the tab hidden or the user signed out): the view says which (follow), the feed opens the
// new ones and closes those no longer wanted, and turns their events into re-reads of the view,
// at most one per `gapMs` and never two at once. An event is not drawn from its data: the view's
// own read draws it, so a live view and a polled one show the same page. The feed also sums its
// streams up for the indicator and for app.ts's timer: a view is live when every stream it wants
// is open; otherwise it keeps polling as it did before streams existed.
import { EventStream, type StreamStatus } from './event-stream';

export type LiveState = 'live' | 'connecting' | 'polling';

export interface LiveSummary {
  state: LiveState;
  /** Streams held open, and streams the view would follow without the cap. */
  followed: number;
  wanted: number;
}

export interface FeedOptions {
  token: string;
  /** The least time between two re-reads caused by events. */
  gapMs: number;
  /** Re-read when a stream opens afresh (not for a view that polls anyway, as the list does). */
  readOnOpen: boolean;
  /** Re-reads the view. */
  read(): Promise<unknown>;
  /** The summary changed. */
  summarized(summary: LiveSummary): void;
}

export class LiveFeed {
  private readonly streams = new Map<string, EventStream>();
  private wanted = 0;
  private closed = false;
  private last: LiveSummary | null = null;
  /** The throttle: when the last read started, the timer of the next, one running, one asked for. */
  private lastReadAt = 0;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private reading = false;
  private asked = false;

  constructor(private readonly options: FeedOptions) {}

  /** Everything is followed and open: the view may stop polling. */
  get live(): boolean {
    return this.summary().state === 'live' && this.streams.size === this.wanted;
  }

  /**
   * Follows `paths` (stream routes on this origin), the first `cap` of them; `job` tells a
   * job's stream, which ends with the job. A path already followed keeps its connection (and an
   * ended one stays ended: it is not reopened while the view still names it).
   */
  follow(paths: string[], { cap = Infinity, job = false }: { cap?: number; job?: boolean } = {}): void {
    if (this.closed) return;
    this.wanted = paths.length;
    const keep = new Set(paths.slice(0, cap));
    for (const [path, stream] of this.streams) {
      if (keep.has(path)) continue;
      stream.close();
      this.streams.delete(path);
    }
    for (const path of keep) {
      if (this.streams.has(path)) continue;
      const owner = { changed: (why: string) => this.changed(why), statusChanged: () => this.report() };
      this.streams.set(path, new EventStream(path, this.options.token, job, owner));
    }
    this.report();
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
    for (const stream of this.streams.values()) stream.close();
    this.streams.clear();
  }

  summary(): LiveSummary {
    const statuses = new Set<StreamStatus>([...this.streams.values()].map((s) => s.status));
    let state: LiveState;
    if (statuses.has('failing')) state = 'polling';
    else if (statuses.has('connecting')) state = 'connecting';
    // Every stream open; none at all (a finished job) or an ended one is a view that polls.
    else state = statuses.size === 1 && statuses.has('open') ? 'live' : 'polling';
    return { state, followed: this.streams.size, wanted: this.wanted };
  }

  private report(): void {
    if (this.closed) return;
    const now = this.summary();
    const { last } = this;
    if (last && last.state === now.state && last.followed === now.followed && last.wanted === now.wanted) return;
    this.last = now;
    this.options.summarized(now);
  }

  private changed(why: string): void {
    if (why === 'opened' && !this.options.readOnOpen) return;
    this.asked = true;
    if (this.closed || this.reading || this.timer !== undefined) return;
    const wait = Math.max(0, this.lastReadAt + this.options.gapMs - Date.now());
    this.timer = setTimeout(() => void this.read(), wait);
  }

  private async read(): Promise<void> {
    this.timer = undefined;
    this.asked = false;
    this.reading = true;
    this.lastReadAt = Date.now();
    try {
      await this.options.read();
    } catch {
      // The read reports its own failures (app.ts's fail): nothing to add here.
    } finally {
      this.reading = false;
      // Events that came during the read may not be in what it read: one more read for them.
      if (this.asked) this.changed('event');
    }
  }
}
