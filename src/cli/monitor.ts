// `groupq monitor <queue>`: frames until stopped (Ctrl-C, or io.signal in tests). On a terminal
// each frame redraws the last in place (cursor home, clear to end of line and below), so nothing
// scrolls; elsewhere frames follow one another, and with --json each one is a JSON line. A failed
// refresh keeps the last good frame on screen and says so: a monitor should ride out a blip,
// while a first frame that fails (wrong queue, token) exits 1.
//
// When to refresh comes from the queue's event stream (issue 30): a frame after each change, at
// most one per --interval, and one every LIVE_REFRESH_INTERVALS intervals anyway (a pause, a
// group's limits or the minute turning are no job events). An idle queue then costs the monitor
// 3 reads every 10 s instead of 3 a second, and the stream itself costs Redis nothing while idle.
// While the stream is not open (it is connecting or resuming, or the Worker has none: its open
// fails and the monitor gives up on it), a frame comes every --interval, as by polling.
import { GroupqError, type QueueClient } from '../client';
import { intFlag } from './args';
import type { CommandContext } from './context';
import { type FrameOptions, type MonitorSnapshot, renderFrame, snapshotJson, takeSnapshot } from './monitor-frame';
import { EXIT_OK, type TextSink } from './output';
import { STOPPED, unlessStopped } from './stop';
import { fitWidth } from './table';

const CSI = '\x1b[';
const HOME = `${CSI}H`;
const CLEAR_SCREEN = `${CSI}2J`;
const CLEAR_TO_LINE_END = `${CSI}K`;
const CLEAR_BELOW = `${CSI}J`;
const HIDE_CURSOR = `${CSI}?25l`;
const SHOW_CURSOR = `${CSI}?25h`;

export const DEFAULT_INTERVAL_MS = 1000;
/** With the stream open, a frame comes at least this many intervals apart even with no event. */
export const LIVE_REFRESH_INTERVALS = 10;
/** An hour. Also keeps the wait below 2^31 ms, past which Node's timers fire after 1 ms. */
const MAX_INTERVAL_MS = 3_600_000;

/** Redraws frames over each other on a terminal. */
class Screen {
  private drawn = false;

  constructor(private readonly sink: TextSink) {}

  draw(lines: readonly string[]): void {
    // The first frame clears what the shell left; later ones overwrite in place, line by line,
    // which does not flicker the way clearing the whole screen each time does.
    const start = this.drawn ? HOME : `${HIDE_CURSOR}${HOME}${CLEAR_SCREEN}`;
    // A frame taller or wider than the terminal would scroll it, and the next frame would start
    // at home over a shifted screen: cut it to fit (read each time: the terminal may resize).
    const { columns, rows } = this.sink;
    const shown = rows && rows > 1 ? lines.slice(0, rows - 1) : lines;
    const body = shown.map((line) => `${fitWidth(line, columns)}${CLEAR_TO_LINE_END}\n`).join('');
    this.sink.write(`${start}${body}${CLEAR_BELOW}`);
    this.drawn = true;
  }

  /** The cursor comes back, below the last frame, whatever ended the monitor. */
  restore(): void {
    if (this.drawn) this.sink.write(SHOW_CURSOR);
  }
}

/**
 * When the next frame is due: follows the queue's stream in the background, and answers false
 * once stopped. Live (the stream open): after a change, at least `intervalMs` after the last
 * frame, or LIVE_REFRESH_INTERVALS intervals after it; else every `intervalMs`.
 */
class Pace {
  live = false;
  private changed = false;
  private wake: (() => void) | undefined;
  private readonly leave = new AbortController();

  constructor(
    private readonly intervalMs: number,
    private readonly signal: AbortSignal | undefined,
  ) {
    signal?.addEventListener('abort', () => this.stop(), { once: true });
  }

  /** Reads the stream until stopped; a stream that cannot be opened leaves the polling on. */
  follow(queue: QueueClient): void {
    const events = queue.events({
      signal: this.leave.signal,
      // What changed between the last frame and the open is in no event: one frame to catch up.
      onOpen: () => {
        this.live = this.changed = true;
        this.wake?.();
      },
      onRetry: () => (this.live = false),
    });
    void (async () => {
      try {
        for await (const _event of events) {
          this.changed = true;
          this.wake?.();
        }
      } catch {
        // Stopped, or no stream to be had (an older Worker's 404, a refusal): polling it is.
      }
      this.live = false;
    })();
  }

  /** Waits for the next frame's time, counted from `lastAt`; false when stopped. */
  async next(lastAt: number): Promise<boolean> {
    for (;;) {
      if (this.signal?.aborted || this.leave.signal.aborted) return false;
      const due = lastAt + (this.live && !this.changed ? this.intervalMs * LIVE_REFRESH_INTERVALS : this.intervalMs);
      if (Date.now() >= due) {
        this.changed = false;
        return true;
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, due - Date.now());
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wake = undefined;
    }
  }

  stop(): void {
    this.leave.abort();
    this.wake?.();
  }
}

export async function monitor({ client, out, args, flags }: CommandContext): Promise<number> {
  const intervalMs = intFlag(flags, 'interval', 'monitor', 100, MAX_INTERVAL_MS) ?? DEFAULT_INTERVAL_MS;
  const queue = client.queue(args[0]!);
  const { io } = out;
  const signal = io.signal;

  const first = await unlessStopped(takeSnapshot(queue), signal);
  if (first === STOPPED) return EXIT_OK;
  if (flags.once) {
    if (out.json) out.document(snapshotJson(first));
    else out.lines(renderFrame(first));
    return EXIT_OK;
  }

  const screen = !out.json && (io.isTTY ?? io.stdout.isTTY === true) ? new Screen(io.stdout) : undefined;
  const pace = new Pace(intervalMs, signal);
  const show = (snapshot: MonitorSnapshot, error?: FrameOptions['error']) => {
    if (out.json) return out.document(snapshotJson(snapshot));
    const lines = renderFrame(snapshot, { intervalMs, live: pace.live, ...(error ? { error } : {}) });
    if (screen) screen.draw(lines);
    else out.lines([...lines, '']);
  };

  let last = first;
  let shownAt = Date.now();
  pace.follow(queue);
  try {
    show(last);
    while (await pace.next(shownAt)) {
      shownAt = Date.now();
      try {
        const next = await unlessStopped(takeSnapshot(queue), signal);
        if (next === STOPPED) break;
        last = next;
        show(last);
      } catch (error) {
        // JSON readers get the error on stderr and no stale line; people keep the last frame.
        if (out.json) {
          out.apiError(error);
          continue;
        }
        const { code, message } = error instanceof GroupqError ? error : { code: 'INTERNAL', message: String(error) };
        show(last, { at: Date.now(), code, message });
      }
    }
  } finally {
    pace.stop();
    screen?.restore();
  }
  return EXIT_OK;
}
