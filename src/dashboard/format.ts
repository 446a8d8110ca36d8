// Text for the dashboard: instants (local time plus "in 5 s" / "3 min ago"), durations, numbers
// and counted nouns ("1 job", "2 jobs"), and short previews of job data. Every instant from the
// API is epoch milliseconds, and every duration milliseconds: the three ways of saying one (how
// far an instant is, a configured interval, how long a job has waited) take their unit from the
// one function, durationIn.

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

/** The units of a duration, largest first, each with its length. */
const UNITS = [
  { unit: 'd', ms: 86_400_000 },
  { unit: 'h', ms: 3_600_000 },
  { unit: 'min', ms: 60_000 },
  { unit: 's', ms: 1000 },
] as const;

/**
 * `ms` (0 or more) in the largest unit it holds once, seconds at least: how many of that unit,
 * not rounded (each caller rounds its own way), and the whole units of the next smaller one in
 * what is left over (`rest`; none below seconds).
 */
function durationIn(ms: number): { amount: number; unit: string; rest: { amount: number; unit: string } | null } {
  const found = UNITS.findIndex((u) => ms >= u.ms);
  const index = found === -1 ? UNITS.length - 1 : found;
  const { unit, ms: length } = UNITS[index]!;
  const smaller = UNITS[index + 1];
  return { amount: ms / length, unit, rest: smaller ? { amount: Math.floor((ms % length) / smaller.ms), unit: smaller.unit } : null };
}

/** "in 12 s", "3 min ago", "2 h ago", "in 4 d"; "now" within a second. */
export function formatRelative(at: number, now = Date.now()): string {
  const diff = at - now;
  const abs = Math.abs(diff);
  if (abs < 1000) return 'now';
  const { amount, unit } = durationIn(abs);
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

/** "1 job", "0 jobs", "1,200 jobs": a count and its noun, singular for exactly one. */
export function countOf(n: number, noun: string, plural = `${noun}s`): string {
  return `${formatCount(n)} ${n === 1 ? noun : plural}`;
}

/**
 * "0.5 s", "5 s", "2 min", "1.5 h", "1 d" for a configured interval (a timeout, a backoff, a rate
 * limit's period, a repeat's): exact in seconds, one decimal in the larger units.
 */
export function formatDuration(ms: number): string {
  const { amount, unit } = durationIn(ms);
  return `${unit === 's' ? amount : +amount.toFixed(1)} ${unit}`;
}

/** How long something has waited: "0 s", "42 s", "4 min 12 s", "2 h 5 min", "3 d 4 h". */
export function formatAge(ms: number): string {
  const { amount, unit, rest } = durationIn(Math.max(0, ms));
  const text = `${Math.floor(amount)} ${unit}`;
  return rest === null || rest.amount === 0 ? text : `${text} ${rest.amount} ${rest.unit}`;
}

/** Compact JSON for a table cell, and the full pretty JSON when the preview had to be cut. */
export function previewJson(value: unknown, max = 80): { preview: string; full: string | null } {
  const compact = JSON.stringify(value) ?? 'null';
  if (compact.length <= max) return { preview: compact, full: null };
  return { preview: `${compact.slice(0, max - 1)}…`, full: JSON.stringify(value, null, 2) };
}
