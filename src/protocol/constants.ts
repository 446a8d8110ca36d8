// Values the Worker, the client and the receiver share, each written once. Plain values, no
// zod: dist/client.js inlines what it uses and imports nothing. (The Lua scripts get theirs as
// arguments.)

/** The most jobs one call takes: an enqueued batch, and the leases one settle ends or reserves. */
export const MAX_BATCH = 1000;

/** A fail's error is at most this many characters (the fail callback refuses more; a push failure's is cut). */
export const MAX_ERROR_CHARS = 2048;

/** The longest one GET of a job may wait for it to finish (`waitMs`): Workers keep a request alive
 * longer, but clients and proxies may not. */
export const MAX_WAIT_MS = 25_000;

/** A complete's result is at most this many bytes of JSON; a delivery's answer keeps its first this many. */
export const MAX_RESULT_BYTES = 65_536;

/**
 * How long a queue's event hub holds events for a resume (`Last-Event-ID`), and how long after
 * the last stream asked for them scripts keep returning them (want-events.lua): 5 minutes, as the
 * dedup window. A resume from further back gets a `gap` event first (docs/events.md).
 */
export const EVENTS_RETENTION_MS = 5 * 60_000;

/**
 * States a job does not leave by itself: a wait for the job ends there (server and client), an
 * outcome callback says which one, and `DELETE /jobs?state=` deletes jobs in them in bulk.
 */
export const FINISHED_STATES = ['completed', 'failed', 'cancelled', 'expired'] as const;

/** A state a job does not leave by itself (FINISHED_STATES). */
export function isFinished(state: string): boolean {
  return (FINISHED_STATES as readonly string[]).includes(state);
}
