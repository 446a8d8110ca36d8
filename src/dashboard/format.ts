// Text for the dashboard: instants (local time plus "in 5 s" / "3 min ago"), numbers, and short
// previews of job data. Every instant from the API is epoch milliseconds.

const clock = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit', second: '2-digit' });
const dateAndClock = new Intl.DateTimeFormat(undefined, {
  month: 'short',
  day: 'numeric',
  hour: '2-digit',
  minute: '2-digit',
  second: '2-digit',
});
const count = new Intl.NumberFormat();

/** "14:03:07" today, "Mar 4, 14:03:07" on another day. */
export function formatInstant(at: number, now = Date.now()): string {
  const sameDay = new Date(at).toDateString() === new Date(now).toDateString();
  return (sameDay ? clock : dateAndClock).format(at);
}

/** "in 12 s", "3 min ago", "2 h ago", "in 4 d"; "now" within a second. */
export function formatRelative(at: number, now = Date.now()): string {
  const diff = at - now;
  const abs = Math.abs(diff);
  if (abs < 1000) return 'now';
  const [amount, unit] =
    abs < 60_000 ? [abs / 1000, 's'] : abs < 3_600_000 ? [abs / 60_000, 'min'] : abs < 86_400_000 ? [abs / 3_600_000, 'h'] : [abs / 86_400_000, 'd'];
  const text = `${Math.floor(amount)} ${unit}`;
  return diff > 0 ? `in ${text}` : `${text} ago`;
}

/** "14:03:07 (in 12 s)": the instant and how far it is. */
export function formatWhen(at: number, now = Date.now()): string {
  return `${formatInstant(at, now)} (${formatRelative(at, now)})`;
}

export function formatCount(n: number): string {
  return count.format(n);
}

/** "5 s", "2 min", "1.5 h", "1 d" for an interval in ms. */
export function formatDuration(ms: number): string {
  if (ms < 60_000) return `${ms / 1000} s`;
  if (ms < 3_600_000) return `${+(ms / 60_000).toFixed(1)} min`;
  if (ms < 86_400_000) return `${+(ms / 3_600_000).toFixed(1)} h`;
  return `${+(ms / 86_400_000).toFixed(1)} d`;
}

/** How long something has waited: "0 s", "42 s", "4 min 12 s", "2 h 5 min", "3 d 4 h". */
export function formatAge(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 60) return `${s} s`;
  const [big, small, bigUnit, smallUnit] =
    s < 3600 ? [Math.floor(s / 60), s % 60, 'min', 's'] : s < 86_400 ? [Math.floor(s / 3600), Math.floor(s / 60) % 60, 'h', 'min'] : [Math.floor(s / 86_400), Math.floor(s / 3600) % 24, 'd', 'h'];
  return small === 0 ? `${big} ${bigUnit}` : `${big} ${bigUnit} ${small} ${smallUnit}`;
}

/** Compact JSON for a table cell, and the full pretty JSON when the preview had to be cut. */
export function previewJson(value: unknown, max = 80): { preview: string; full: string | null } {
  const compact = JSON.stringify(value) ?? 'null';
  if (compact.length <= max) return { preview: compact, full: null };
  return { preview: `${compact.slice(0, max - 1)}…`, full: JSON.stringify(value, null, 2) };
}
