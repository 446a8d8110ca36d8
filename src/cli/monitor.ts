// `groupq monitor <queue>`: a frame every --interval ms until stopped (Ctrl-C, or io.signal in
// tests). On a terminal each frame redraws the last in place (cursor home, clear to end of line
// and below), so nothing scrolls; elsewhere frames follow one another, and with --json each one
// is a JSON line. A failed refresh keeps the last good frame on screen and says so: a monitor
// should ride out a blip, while a first frame that fails (wrong queue, token) exits 1.
import { GroupqError } from '../client';
import { intFlag } from './args';
import type { CommandContext } from './context';
import { type FrameOptions, type MonitorSnapshot, renderFrame, snapshotJson, takeSnapshot } from './monitor-frame';
import { EXIT_OK, type TextSink } from './output';
import { STOPPED, unlessStopped, wait } from './stop';
import { fitWidth } from './table';

const CSI = '\x1b[';
const HOME = `${CSI}H`;
const CLEAR_SCREEN = `${CSI}2J`;
const CLEAR_TO_LINE_END = `${CSI}K`;
const CLEAR_BELOW = `${CSI}J`;
const HIDE_CURSOR = `${CSI}?25l`;
const SHOW_CURSOR = `${CSI}?25h`;

export const DEFAULT_INTERVAL_MS = 1000;
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
  const show = (snapshot: MonitorSnapshot, error?: FrameOptions['error']) => {
    if (out.json) return out.document(snapshotJson(snapshot));
    const lines = renderFrame(snapshot, { intervalMs, ...(error ? { error } : {}) });
    if (screen) screen.draw(lines);
    else out.lines([...lines, '']);
  };

  let last = first;
  try {
    show(last);
    while (await wait(intervalMs, signal)) {
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
    screen?.restore();
  }
  return EXIT_OK;
}
