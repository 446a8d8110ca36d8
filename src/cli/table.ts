// Plain-text tables and the short time phrases the CLI prints ("in 5s", "3m ago"). Widths are
// terminal columns (display-width.ts): a cell of CJK text or emoji lines up with ASCII ones.
import { displayWidth, sliceToWidth } from './display-width';

export interface Column {
  header: string;
  /** Numbers read best right-aligned. */
  align?: 'left' | 'right';
}

/**
 * Rows under a header, columns padded to their widest cell and two spaces apart. The last column
 * is not padded, so a long error message does not push trailing blanks.
 */
export function table(columns: readonly Column[], rows: readonly (readonly string[])[]): string[] {
  const widths = columns.map((column, i) => Math.max(displayWidth(column.header), ...rows.map((row) => displayWidth(row[i] ?? ''))));
  const render = (cells: readonly string[]) =>
    columns
      .map((column, i) => {
        const cell = cells[i] ?? '';
        if (i === columns.length - 1 && column.align !== 'right') return cell;
        const pad = ' '.repeat(widths[i]! - displayWidth(cell));
        return column.align === 'right' ? pad + cell : cell + pad;
      })
      .join('  ');
  return [render(columns.map((column) => column.header)), ...rows.map(render)];
}

/**
 * One line of at most `max` characters: error messages come from endpoints and can hold
 * newlines, stack traces, even terminal escape sequences (shown as "?", never sent raw).
 */
export function oneLine(text: string, max = 80): string {
  // eslint-disable-next-line no-control-regex
  const flat = text.replace(/\s+/g, ' ').replace(/[\u0000-\u001F\u007F-\u009F]/g, '?').trim();
  return displayWidth(flat) > max ? `${sliceToWidth(flat, max - 1)}…` : flat;
}

/** Cuts a line to the terminal's width, so a redrawn frame never wraps and scrolls. */
export function fitWidth(line: string, columns: number | undefined): string {
  if (!columns || displayWidth(line) <= columns) return line;
  return columns > 1 ? `${sliceToWidth(line, columns - 1)}…` : sliceToWidth(line, columns);
}

/** A duration in its largest whole unit: 850ms, 12s, 4m, 3h, 2d. */
export function shortDuration(ms: number): string {
  const abs = Math.abs(ms);
  if (abs < 1000) return `${Math.round(abs)}ms`;
  if (abs < 60_000) return `${Math.floor(abs / 1000)}s`;
  if (abs < 3_600_000) return `${Math.floor(abs / 60_000)}m`;
  if (abs < 86_400_000) return `${Math.floor(abs / 3_600_000)}h`;
  return `${Math.floor(abs / 86_400_000)}d`;
}

/** "in 5s" for an instant ahead of `now`, "3m ago" for one behind it. */
export function relativeTime(at: number, now: number): string {
  const delta = at - now;
  return delta >= 0 ? `in ${shortDuration(delta)}` : `${shortDuration(delta)} ago`;
}

/** HH:MM:SS in local time, for the monitor's header. */
export function clockTime(at: number): string {
  const d = new Date(at);
  return [d.getHours(), d.getMinutes(), d.getSeconds()].map((n) => String(n).padStart(2, '0')).join(':');
}
