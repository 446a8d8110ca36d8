// The cursors of GET /jobs and GET /groups: opaque to users, positions by key to the scripts.
// A cursor is base64url of a JSON array: the listing it belongs to, then where its next page
// starts: after [score, member] of a sorted set (zset-page.lua), or at an HSCAN position of a
// hash, [position] or [batch start, batch end, last field shown, COUNT] (hash-page.lua). A
// cursor that does not decode to a position of the listing asked for is VALIDATION_FAILED.
import { fromBase64Url, toBase64Url } from '../../protocol/encoding';
import { QueueError } from '../../protocol/errors';

/** What is listed: waiting jobs (of a group: `group`), jobs in another state, or groups. */
export type Listing = 'waiting' | 'group' | 'delayed' | 'active' | 'completed' | 'failed' | 'cancelled' | 'groups';

/** Listings that walk a hash with HSCAN; the others page through a sorted set. */
const HASH_LISTINGS: ReadonlySet<Listing> = new Set(['waiting', 'groups']);

// Scan cursors stay below the hash table's size: 15 digits keep them exact in Lua's numbers.
const SCAN_POSITION = /^\d{1,15}$/;


const isKey = (value: unknown): value is string => typeof value === 'string' && value !== '';

/** The position a script returned for the next page ([] = no more), as a cursor. */
export function encodeCursor(listing: Listing, next: readonly (string | number)[]): string | null {
  if (next.length === 0) return null;
  // Scores and COUNTs as numbers; scan positions stay the strings Redis gave.
  const [first, second, last, count] = next;
  const position = !HASH_LISTINGS.has(listing)
    ? [Number(first), second]
    : count === undefined
      ? [first]
      : [first, second, last, Number(count)];
  return toBase64Url(new TextEncoder().encode(JSON.stringify([listing, ...position])));
}

/** The position a cursor holds, as the script's arguments ([] without a cursor: the first page). */
export function decodeCursor(listing: Listing, cursor: string | undefined): string[] {
  if (cursor === undefined) return [];
  let parts: unknown;
  try {
    parts = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(fromBase64Url(cursor)));
  } catch {
    parts = null;
  }
  if (Array.isArray(parts) && parts[0] === listing) {
    const [, ...at] = parts as unknown[];
    if (HASH_LISTINGS.has(listing)) {
      const [start, end, last, count] = at;
      const scan = (value: unknown) => typeof value === 'string' && SCAN_POSITION.test(value);
      const isCount = typeof count === 'number' && Number.isInteger(count) && count >= 1 && count <= 1000;
      const cut = at.length === 4 && scan(end) && isKey(last) && isCount;
      if (scan(start) && (at.length === 1 || cut)) return at.map(String);
    } else {
      const [score, last] = at;
      if (at.length === 2 && typeof score === 'number' && Number.isFinite(score) && isKey(last)) return [String(score), last];
    }
  }
  const message = `not a cursor of this list of ${listing === 'groups' ? 'groups' : 'jobs'}: pass the cursor of the page before, as it came`;
  throw new QueueError('VALIDATION_FAILED', `cursor: ${message}`, [{ path: 'cursor', message }]);
}
