// Each queue's stored config as this isolate read it a moment ago, so that what strangers can
// send for free costs Redis nothing past the first request: bogus publish tokens and CORS
// preflights on enqueue routes are checked against it, and a queue that does not exist is
// remembered as such (null), tokens it lacks included. A config changed by a PUT in this isolate
// is forgotten at once (`forget`); other isolates see the change within CONFIG_CACHE_MS.
import type { StoredConfig } from '../../protocol/config';
import { QueueError } from '../../protocol/errors';

/** How long a config (or a queue's absence) is trusted. */
export const CONFIG_CACHE_MS = 5_000;
/** Queues remembered at once: names a stranger makes up cannot grow the isolate's memory. */
const MAX_ENTRIES = 1_000;

interface Entry {
  /** Shared by concurrent requests, so a burst costs one read. */
  config: Promise<StoredConfig | null>;
  until: number;
}

export class ConfigCache {
  private readonly entries = new Map<string, Entry>();

  constructor(private readonly now: () => number = Date.now) {}

  /**
   * The queue's config, null for a queue that does not exist (`read` throws QUEUE_NOT_FOUND);
   * other errors reach the caller and are not kept.
   */
  get(queue: string, read: () => Promise<StoredConfig>): Promise<StoredConfig | null> {
    const now = this.now();
    const cached = this.entries.get(queue);
    if (cached && cached.until > now) return cached.config;
    if (cached) this.entries.delete(queue);
    const config = read().catch((error: unknown) => {
      if (error instanceof QueueError && error.code === 'QUEUE_NOT_FOUND') return null;
      if (this.entries.get(queue) === entry) this.entries.delete(queue);
      throw error;
    });
    const entry: Entry = { config, until: now + CONFIG_CACHE_MS };
    this.entries.set(queue, entry);
    // Maps iterate in insertion order: the first key is the oldest entry.
    if (this.entries.size > MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value!);
    return config;
  }

  /** Drops what is known of a queue whose config just changed (or was deleted) in this isolate. */
  forget(queue: string): void {
    this.entries.delete(queue);
  }
}
