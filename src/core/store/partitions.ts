// Partitioned queues (docs/scaling-out.md#partitioned-queues): a queue of P > 1 partitions keeps
// its config at its root (hash tag `{<queue>}`) and its jobs in P partitions, each a hash tag of
// its own, `{<queue>:<p>}`, whose keys are laid out as a queue's are (keys.ts): every script runs
// on one partition, or on one queue of one partition, the same code. A group lives in partition
// fnv1a32(group) % P, so its jobs, its order and its lease are all in one place. The tag of a
// queue of one partition is its name: that queue is exactly what it was before partitions.
// Queue names never hold ':' (job-input.ts), so no name is another queue's partition.

/** The bits of a 32-bit FNV-1a hash of `text`'s UTF-8 bytes (src/lua/includes/partition.lua has the same). */
export function fnv1a32(text: string): number {
  let hash = 0x811c9dc5;
  for (const byte of new TextEncoder().encode(text)) {
    hash ^= byte;
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash;
}

/** The partition of `group` in a queue of `partitions`. */
export function partitionOf(group: string, partitions: number): number {
  return partitions === 1 ? 0 : fnv1a32(group) % partitions;
}

/** The hash tag of partition `p` of `queue` (of `partitions`): the queue's name when it has one. */
export function partitionTag(queue: string, p: number, partitions: number): string {
  return partitions === 1 ? queue : `${queue}:${p}`;
}

/** Every partition tag of `queue`, in partition order. */
export function partitionTags(queue: string, partitions: number): string[] {
  return Array.from({ length: partitions }, (_, p) => partitionTag(queue, p, partitions));
}

const TAG = /^([^:]+):(\d{1,3})$/;

/** The queue a tag belongs to (`orders:3` -> orders; `orders` -> orders). */
export function queueOfTag(tag: string): string {
  return TAG.exec(tag)?.[1] ?? tag;
}

/** The partition a tag names, or null for a queue of one partition. */
export function partitionOfTag(tag: string): number | null {
  const p = TAG.exec(tag)?.[2];
  return p === undefined ? null : Number(p);
}

/**
 * Partition `p`'s share of a queue-wide `total` (concurrency, a rate limit's max, maxJobs): an
 * equal split, the first `total % partitions` partitions one more. The shares add up to the
 * total, and none is 0 while total >= partitions (config.ts requires it).
 */
export function shareOf(total: number, p: number, partitions: number): number {
  return Math.floor(total / partitions) + (p < total % partitions ? 1 : 0);
}

/**
 * A lease token as a partitioned queue's endpoint sees it: `<p>.<token>`, so that its lease
 * callbacks name their partition (a queue of one partition: the token as it is).
 */
export function publicLease(tag: string, token: string): string {
  const p = partitionOfTag(tag);
  return p === null ? token : `${p}.${token}`;
}

const LEASE = /^(\d{1,3})\.(.+)$/;

/** Where a lease callback of `queue` goes: the partition its token names, else the queue itself. */
export function leaseTag(queue: string, lease: string): string {
  const { partition } = splitLease(lease);
  return partition === null ? queue : `${queue}:${partition}`;
}

/** A lease token as sent back: its partition (null: none named) and the token as stored. */
export function splitLease(lease: string): { partition: number | null; token: string } {
  const match = LEASE.exec(lease);
  return match ? { partition: Number(match[1]), token: match[2]! } : { partition: null, token: lease };
}

/** Queues whose count an isolate keeps at once: names a stranger makes up cannot grow it. */
const MAX_KNOWN = 10_000;

/** Per isolate: each queue's partition count as last learned; a queue not known has one. */
export class PartitionCounts {
  private readonly known = new Map<string, number>();

  of(queue: string): number {
    return this.known.get(queue) ?? 1;
  }

  set(queue: string, partitions: number): void {
    this.known.delete(queue);
    if (partitions === 1) return;
    this.known.set(queue, partitions);
    if (this.known.size > MAX_KNOWN) this.known.delete(this.known.keys().next().value!);
  }
}

