// What the monitor shows: a snapshot of one queue (counts, its first groups, throughput from the
// per-minute metrics) taken through the client, rendered as text lines or as one JSON object.
// No terminal handling here: monitor.ts decides how frames reach the screen.
import type { GroupSummary, MinuteMetrics, QueueClient, QueueCounts } from '../client';
import { GroupqError } from '../client';
import { type Column, clockTime, shortDuration, table } from './table';

/** Groups shown per frame; the API lists groups with an active job first. */
export const MONITOR_GROUPS = 10;

export interface Throughput {
  completed: number;
  failed: number;
  retried: number;
}

export interface MonitorSnapshot {
  queue: string;
  /** When the snapshot was taken (the CLI's clock). */
  at: number;
  paused: boolean;
  counts: QueueCounts;
  /** The first groups holding jobs, active ones first. */
  groups: GroupSummary[];
  /**
   * `thisMinute` is the current minute so far; `lastFiveMinutes` adds the four before it.
   * null when the Worker has no metrics route (an older deployment).
   */
  throughput: { thisMinute: Throughput; lastFiveMinutes: Throughput } | null;
  /** The hour behind `throughput`, oldest minute first; not part of the JSON line. */
  minutes: MinuteMetrics[];
}

function sum(minutes: readonly MinuteMetrics[]): Throughput {
  const total = { completed: 0, failed: 0, retried: 0 };
  for (const m of minutes) {
    total.completed += m.completed;
    total.failed += m.failed;
    total.retried += m.retried;
  }
  return total;
}

/** The three reads of a frame, in parallel; a missing metrics route only blanks throughput. */
export async function takeSnapshot(queue: QueueClient, now: () => number = Date.now): Promise<MonitorSnapshot> {
  const [info, page, minutes] = await Promise.all([
    queue.get(),
    queue.groups({ limit: MONITOR_GROUPS }),
    queue.metrics().catch((error: unknown) => {
      if (error instanceof GroupqError && error.code === 'NOT_FOUND') return null;
      throw error;
    }),
  ]);
  return {
    queue: info.name,
    at: now(),
    paused: info.paused,
    counts: info.counts,
    groups: page.groups,
    throughput: minutes === null ? null : { thisMinute: sum(minutes.slice(-1)), lastFiveMinutes: sum(minutes.slice(-5)) },
    minutes: minutes ?? [],
  };
}

/** The JSON line for --json: the snapshot without the hour of minutes. */
export function snapshotJson(snapshot: MonitorSnapshot): Omit<MonitorSnapshot, 'minutes'> {
  const { minutes: _minutes, ...rest } = snapshot;
  return rest;
}

const BARS = '▁▂▃▄▅▆▇█';

/** One character per minute: blank for none, then eight heights up to the hour's busiest minute. */
export function sparkline(values: readonly number[]): string {
  const max = Math.max(0, ...values);
  return values
    .map((value) => (value <= 0 ? ' ' : BARS[Math.min(BARS.length - 1, Math.ceil((value / max) * BARS.length) - 1)]))
    .join('');
}

export interface FrameOptions {
  /** Set while refreshing: the header says how often and how to quit. */
  intervalMs?: number;
  /** The queue's event stream is open: frames follow its changes (at most one per intervalMs). */
  live?: boolean;
  /** The last refresh failed: say so above the (older) snapshot. */
  error?: { at: number; code: string; message: string };
}

const right = (header: string): Column => ({ header, align: 'right' });

export function renderFrame(s: MonitorSnapshot, options: FrameOptions = {}): string[] {
  const pace = options.live ? 'live' : `every ${shortDuration(options.intervalMs ?? 0)}`;
  const live = options.intervalMs === undefined ? '' : `  (${pace}, Ctrl-C quits)`;
  const lines = [`groupq monitor  ${s.queue}  ${s.paused ? 'PAUSED' : 'running'}  ${clockTime(s.at)}${live}`];
  if (options.error) {
    const { at, code, message } = options.error;
    lines.push(`! refresh failed at ${clockTime(at)}: ${code}: ${message} (showing the last good frame)`);
  }
  const c = s.counts;
  lines.push(
    '',
    ...table(
      [right('WAITING'), right('DELAYED'), right('ACTIVE'), right('COMPLETED'), right('FAILED'), right('CANCELLED'), right('EXPIRED'), right('GROUPS')],
      [[c.waiting, c.delayed, c.active, c.completed, c.failed, c.cancelled, c.expired, c.groups].map(String)],
    ),
    '',
  );

  if (s.throughput === null) {
    lines.push('throughput: unavailable (this Worker has no metrics route)');
  } else {
    const { thisMinute: now, lastFiveMinutes: five } = s.throughput;
    lines.push(
      ...table(
        [{ header: 'THROUGHPUT' }, right('THIS MINUTE'), right('LAST 5 MIN')],
        (['completed', 'failed', 'retried'] as const).map((key) => [key, String(now[key]), String(five[key])]),
      ),
    );
    // 62 columns: fits a default 80-column terminal next to nothing else.
    const finished = s.minutes.map((m) => m.completed + m.failed);
    lines.push('', `FINISHED PER MINUTE, LAST HOUR (busiest: ${Math.max(0, ...finished)})`, `|${sparkline(finished)}|`);
  }

  lines.push('');
  if (s.groups.length === 0) {
    // Delayed jobs join their groups only when due: a group holds waiting and active ones.
    const delayed = s.counts.delayed > 0 ? ` (${s.counts.delayed} delayed: each joins its group when due)` : '';
    lines.push(`no group holds a waiting or active job${delayed}`);
  } else {
    const shown = s.counts.groups > s.groups.length ? `, the first ${s.groups.length}` : '';
    lines.push(`GROUPS (${s.counts.groups} with jobs${shown}, active first)`);
    lines.push(
      ...table(
        // ACTIVE: in flight out of the group's concurrency.
        [{ header: 'GROUP' }, { header: 'STATE' }, right('WAITING'), right('ACTIVE')],
        s.groups.map((g) => [g.group, g.state, String(g.waiting), `${g.active}/${g.concurrency}`]),
      ),
    );
  }
  return lines;
}
