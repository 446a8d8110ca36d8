// Replays: a captured delivery sent again while its timestamp is still within the tolerance
// window passes every other check. A delivery's webhook-id is the same on every attempt of its
// job (Standard Webhooks: a resend keeps its id), so the id alone cannot tell a replay from a
// retry: each attempt is signed anew, with a new webhook-timestamp. What a replay repeats, and
// no attempt does, is the signed request itself, so the memory keys on the webhook-id, the
// webhook-timestamp and the signature (the HMAC the verifier computed with its first secret):
// all signed, none forgeable. The signature is in the key because two attempts can fall in the
// same second (a backoff of 0): their bodies differ (attempt, lease), so their signatures do.
// The default memory is this process's, shared by every verifier in it (ids are unique across
// queues and partitions), and forgets a key once its timestamp is out of the window, when the
// verifier refuses the request as stale anyway: memory stays bounded.

/**
 * Says whether a delivery was accepted before, and records it (true: a replay). `key` is
 * `<webhook-id>.<webhook-timestamp>.<signature>`, the same only for a copy of one request; a
 * retry of the job has another. May be async, e.g. `SET key 1 NX EX 600` in a shared Redis
 * answering whether it was set. It is no idempotency key: dedupe the work on `webhookId`.
 */
export type SeenHook = (key: string, delivery: { webhookId: string; timestampSec: number }) => boolean | Promise<boolean>;

/**
 * The most keys remembered at once: past it the oldest is forgotten early. At ~150 bytes a key,
 * about 15 MB; a receiver taking more than this many deliveries per tolerance window (5 min by
 * default) plugs in a shared store.
 */
const MAX_REMEMBERED = 100_000;

/** Keys accepted lately, in the order they came, each with when it may be forgotten (epoch ms). */
const remembered = new Map<string, number>();

/** Forgets keys whose timestamp is out of the window, oldest first (they come roughly in order). */
function forgetExpired(now: number): void {
  for (const [key, until] of remembered) {
    if (until >= now) return;
    remembered.delete(key);
  }
}

/** The default `seen`: true if `key` is remembered, else remembers it until `untilMs`. */
export function rememberDelivery(key: string, untilMs: number, now: number): boolean {
  forgetExpired(now);
  const until = remembered.get(key);
  if (until !== undefined && until >= now) return true;
  if (remembered.size >= MAX_REMEMBERED) remembered.delete(remembered.keys().next().value!);
  remembered.set(key, untilMs);
  return false;
}
