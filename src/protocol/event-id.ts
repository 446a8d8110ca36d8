// The SSE `id:` of a job event (docs/events.md): `<ms>-<seq>`, the shape of a Redis stream entry
// id. A plain module, no zod: the client kit compares ids to resume without a repeat, and
// dist/client.js must import nothing (events.ts, which has the schemas, imports zod).
//
// Why this shape:
// - it is a Redis stream id as XADD makes it, so a Last-Event-ID is an XRANGE/XREAD start as it
//   is, with no table from our ids to the store's (and so no command to translate one);
// - its time part says how old a position is: whether it is still inside the retention window
//   is one comparison with the oldest id held, and a gap is detected without reading events;
// - it is only ASCII digits and "-": never CR, LF or NUL (which SSE forbids in an id), and it
//   goes in a `Last-Event-ID` header and in `?lastEventId=` without any escaping.
// Clients treat it as opaque: compare with compareEventIds, never by hand. Plain string order is
// wrong ("9-0" > "10-0"): the parts are numbers of any length.

/**
 * `ms`: epoch milliseconds (14 digits at most, like epochMsSchema); `seq`: the event's rank among
 * those of the same millisecond (up to 20 digits, a Redis stream's 64-bit sequence). Canonical
 * decimal, no leading zeros, so two ids are the same event exactly when the strings are equal.
 */
export const EVENT_ID_PATTERN = /^(0|[1-9]\d{0,13})-(0|[1-9]\d{0,19})$/;

export function isEventId(value: unknown): value is string {
  return typeof value === 'string' && EVENT_ID_PATTERN.test(value);
}

/** The id of the `seq`-th event (0-based) of millisecond `ms`. */
export function formatEventId(ms: number, seq: number): string {
  if (!Number.isSafeInteger(ms) || ms < 0 || ms > 99_999_999_999_999) throw new RangeError(`not an event time: ${ms}`);
  if (!Number.isSafeInteger(seq) || seq < 0) throw new RangeError(`not an event sequence: ${seq}`);
  return `${ms}-${seq}`;
}

function partsOf(id: string): [string, string] {
  const match = EVENT_ID_PATTERN.exec(id);
  if (!match) throw new RangeError(`not an event id: ${JSON.stringify(id)}`);
  return [match[1]!, match[2]!];
}

/** When the event was appended, in epoch ms: the retention window is checked on it. */
export function eventIdTime(id: string): number {
  return Number(partsOf(id)[0]);
}

/** Canonical decimals of any length: the longer is the larger, and equal lengths compare as text. */
function compareDecimals(a: string, b: string): number {
  if (a.length !== b.length) return a.length < b.length ? -1 : 1;
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * Negative when `a` comes before `b` in its stream, positive after, 0 for the same event: a sort
 * comparator. Throws a RangeError on a string that is not an event id (check with isEventId).
 */
export function compareEventIds(a: string, b: string): number {
  const [msA, seqA] = partsOf(a);
  const [msB, seqB] = partsOf(b);
  return compareDecimals(msA, msB) || compareDecimals(seqA, seqB);
}
