// The cursors of GET /jobs and GET /groups: opaque to users, positions by key to the scripts.
// A cursor is base64url of a JSON array: the listing it belongs to, then where its next page
// starts: after [score, member] of a sorted set (zset-page.lua), or at an HSCAN position of a
// hash, [position] or [batch start, batch end, last field shown, COUNT] (hash-page.lua). A
// cursor that does not decode to a position of the listing asked for is VALIDATION_FAILED.
import { fromBase64Url, toBase64Url } from '../../protocol/encoding';
import { QueueError } from '../../protocol/errors';

/** What is listed: waiting jobs (of a group: `group`), jobs in another state, or groups. */
export type Listing = 'waiting' | 'group' | 'delayed' | 'active' | 'completed' | 'failed' | 'cancelled' | 'expired' | 'groups';

/** Listings that walk a hash with HSCAN; the others page through a sorted set. */
const HASH_LISTINGS: ReadonlySet<Listing> = new Set(['waiting', 'groups']);

// Scan cursors stay below the hash table's size: 15 digits keep them exact in Lua's numbers.
const SCAN_POSITION = /^\d{1,15}$/;


const isKey = (value: unknown): value is string => typeof value === 'string' && value !== '';

/** A position a script returned, as a cursor holds it: scores and COUNTs as numbers, scan positions as the strings Redis gave. */
function positionParts(listing: Listing, next: readonly (string | number)[]): unknown[] {
  const [first, second, last, count] = next;
  if (!HASH_LISTINGS.has(listing)) return [Number(first), second];
  return count === undefined ? [first] : [first, second, last, Number(count)];
}

const toCursor = (parts: unknown[]) => toBase64Url(new TextEncoder().encode(JSON.stringify(parts)));

/** The position a script returned for the next page ([] = no more), as a cursor. */
export function encodeCursor(listing: Listing, next: readonly (string | number)[]): string | null {
  return next.length === 0 ? null : toCursor([listing, ...positionParts(listing, next)]);
}

/** The array a cursor encodes, or null. */
function decodeParts(cursor: string): unknown[] | null {
  try {
    const parts: unknown = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(fromBase64Url(cursor)));
    return Array.isArray(parts) ? parts : null;
  } catch {
    return null;
  }
}

/** A position of `listing` (after its name in a cursor) as the script's arguments, or null. */
function positionOf(listing: Listing, at: readonly unknown[]): string[] | null {
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
  return null;
}

function notACursor(listing: Listing): QueueError {
  const message = `not a cursor of this list of ${listing === 'groups' ? 'groups' : 'jobs'}: pass the cursor of the page before, as it came`;
  return new QueueError('VALIDATION_FAILED', `cursor: ${message}`, [{ path: 'cursor', message }]);
}

/** The position a cursor holds, as the script's arguments ([] without a cursor: the first page). */
export function decodeCursor(listing: Listing, cursor: string | undefined): string[] {
  if (cursor === undefined) return [];
  const parts = decodeParts(cursor);
  const at = parts && parts[0] === listing ? positionOf(listing, parts.slice(1)) : null;
  if (at === null) throw notACursor(listing);
  return at;
}

/**
 * A partitioned queue's listing walks its partitions in order; its cursor names the partition
 * where the next page starts (`p<index>`) before the position there ([]: its first page).
 */
export function encodePartitionCursor(listing: Listing, partition: number, next: readonly (string | number)[]): string {
  return toCursor([listing, `p${partition}`, ...(next.length === 0 ? [] : positionParts(listing, next))]);
}

/** How a partitioned queue's cursor names its partition, after the listing. */
const PARTITION = /^p(\d{1,3})$/;

/** Whether `cursor` is a partitioned queue's (whatever its listing). */
export function isPartitionCursor(cursor: string | undefined): boolean {
  const parts = cursor === undefined ? null : decodeParts(cursor);
  return parts !== null && typeof parts[1] === 'string' && PARTITION.test(parts[1]);
}

/** The partition and position a partitioned queue's cursor holds (none: partition 0, first page). */
export function decodePartitionCursor(listing: Listing, cursor: string | undefined, partitions: number): { partition: number; at: string[] } {
  if (cursor === undefined) return { partition: 0, at: [] };
  const parts = decodeParts(cursor);
  const partition = parts && parts[0] === listing && typeof parts[1] === 'string' ? PARTITION.exec(parts[1])?.[1] : undefined;
  const rest = parts?.slice(2) ?? [];
  const at = rest.length === 0 ? [] : positionOf(listing, rest);
  if (partition === undefined || Number(partition) >= partitions || at === null) throw notACursor(listing);
  return { partition: Number(partition), at };
}
