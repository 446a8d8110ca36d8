// Replays: a captured delivery sent again while its timestamp is still within the tolerance
// window passes every other check. groupq gives each delivery attempt a webhook-id of its own, so
// a receiver that remembers the ids it accepted refuses a copy. The default memory is this
// process's, shared by every verifier in it (ids are random, never reused across queues), and
// forgets an id once its timestamp is out of the window anyway: memory stays bounded.

/**
 * Says whether a delivery's webhook-id was seen before, and records it (true: a replay). May be
 * async, e.g. `SET id 1 NX EX 600` in a shared Redis answering whether it was set.
 */
export type SeenHook = (webhookId: string) => boolean | Promise<boolean>;

/**
 * The most ids remembered at once: past it the oldest is forgotten early. At ~100 bytes an id,
 * about 10 MB; a receiver taking more than this many deliveries per tolerance window (5 min by
 * default) plugs in a shared store.
 */
const MAX_REMEMBERED = 100_000;

/** Ids accepted lately, in the order they came, each with when it may be forgotten (epoch ms). */
const remembered = new Map<string, number>();

/** Forgets ids whose timestamp is out of the window, oldest first (they come roughly in order). */
function forgetExpired(now: number): void {
  for (const [id, until] of remembered) {
    if (until >= now) return;
    remembered.delete(id);
  }
}

/** The default `seen`: true if `id` is remembered, else remembers it until `untilMs`. */
export function rememberDelivery(id: string, untilMs: number, now: number): boolean {
  forgetExpired(now);
  const until = remembered.get(id);
  if (until !== undefined && until >= now) return true;
  if (remembered.size >= MAX_REMEMBERED) remembered.delete(remembered.keys().next().value!);
  remembered.set(id, untilMs);
  return false;
}
