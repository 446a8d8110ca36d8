// Checks that a request is a genuine, fresh groupq request (Standard Webhooks): an HMAC-SHA256
// signature over "<webhook-id>.<webhook-timestamp>.<raw body>" keyed by the `whsec_` secret, a
// timestamp within the tolerance, the kind the signed webhook-id names (`msg_` a delivery of one
// job, `bat_` a batch of them, `out_` an outcome callback: none is accepted as another), then the
// body parsed against its shared schema; a delivery or batch last of all must not be a copy of
// one accepted before (a replay: same webhook-id, timestamp and signature; a retry keeps its
// webhook-id but is signed anew). Whatever a request holds, it costs at most `maxBodyBytes` read
// and one HMAC per secret (message.ts, signature.ts). One verifier for every kind; Web Crypto
// only, so it runs on Workers, Node 20, Deno and Bun alike.
import type * as z from 'zod';
import { BATCH_ID_PREFIX, type Batch, batchBodySchema } from '../protocol/batch-body';
import { DELIVERY_ID_PREFIX, type Delivery, deliveryBodySchema } from '../protocol/delivery-body';
import { fromBase64, toBase64 } from '../protocol/encoding';
import { OUTCOME_ID_PREFIX, type OutcomeCallback, outcomeBodySchema } from '../protocol/outcome-body';
import { SECRET_PREFIX } from '../protocol/signing-secret';
import { DeliveryVerificationError } from './errors';
import { DEFAULT_MAX_BODY_BYTES, type RawMessage, bodyOf, headerOf } from './message';
import { type SeenHook, rememberDelivery } from './replays';
import { MAX_SIGNATURE_ENTRIES, anyMatches, candidateSignatures, digestsOf } from './signature';

export { type RawMessage, headerOf } from './message';

export interface VerifyOptions {
  /**
   * The secret the queue signs with, `whsec_<base64>`: the queue's own `signingSecret` when it
   * has one, else the deployment's GROUPQ_SIGNING_SECRET.
   */
  secret: string;
  /** The next secret while rotating (the queue's signingSecretNext, else GROUPQ_SIGNING_SECRET_NEXT): either one verifies. */
  nextSecret?: string;
  /** Largest distance, either way, between webhook-timestamp and now. @default 300 */
  toleranceSec?: number;
  /** The clock, epoch ms. @default Date.now */
  now?: () => number;
  /**
   * The largest body read, in bytes: a longer one is refused (`body_too_large`) before any
   * HMAC, and a body declared longer is not read at all. @default 1048576 (1 MiB)
   */
  maxBodyBytes?: number;
}

/** How deliveries are checked: as any request, and against replays. */
export interface DeliveryVerifyOptions extends VerifyOptions {
  /**
   * Says whether a delivery was accepted before, by its replay key (`<webhook-id>.<webhook-timestamp>.<signature>`),
   * and records it: a seen one is refused as a replay (reason `replayed`); a retry of the job has
   * a new key. Plug in a shared store when several processes or instances take deliveries.
   * @default in memory, for this process, each key for the tolerance window
   */
  seen?: SeenHook;
}

/** Reads and checks a delivery (the same checks as verifyDelivery, keys imported once). */
export type Verifier = <T = unknown>(message: Request | RawMessage) => Promise<Delivery<T>>;

/** Reads and checks a batch (the same checks as verifyBatch, keys imported once). */
export type BatchVerifier = <T = unknown>(message: Request | RawMessage) => Promise<Batch<T>>;

/** Reads and checks an outcome callback (the same checks as verifyOutcome, keys imported once). */
export type OutcomeVerifier = (message: Request | RawMessage) => Promise<OutcomeCallback>;

/**
 * What a verified request must carry: its webhook-id's prefix (the kind) and its body's schema,
 * named for messages. An id is `msg_`, `bat_` or `out_` and 32 hex digits of groupq's, the same
 * on every attempt and unique per job (per batch, per outcome).
 */
interface Expected<B> {
  what: string;
  prefix: string;
  schema: z.ZodType<B>;
  /**
   * For the two forms of delivery only: what takes this kind, said when it reaches the other
   * form's verifier. The queue's `batch` setting and the endpoint's handler then disagree, and
   * the job's error (`HTTP 401: ...`) is where its owner reads which to change.
   */
  takenBy?: string;
}

const DELIVERY: Expected<Delivery> = {
  what: 'delivery',
  prefix: DELIVERY_ID_PREFIX,
  schema: deliveryBodySchema,
  takenBy: 'the queue sends one job per delivery (its `batch` is null): take them with createHandler or verifyDelivery',
};
const BATCH: Expected<Batch> = {
  what: 'batch',
  prefix: BATCH_ID_PREFIX,
  schema: batchBodySchema,
  takenBy: 'the queue sends batches (its `batch` is set): take them with createBatchHandler or verifyBatch',
};
const OUTCOME: Expected<OutcomeCallback> = { what: 'outcome callback', prefix: OUTCOME_ID_PREFIX, schema: outcomeBodySchema };
/** The kinds by prefix, to name what a request of the wrong kind is. */
const KINDS = [DELIVERY, BATCH, OUTCOME];

const DEFAULT_TOLERANCE_SEC = 300;

/** The key bytes of a secret; the `whsec_` prefix is optional, as in other Standard Webhooks libraries. */
function secretBytes(secret: string): Uint8Array<ArrayBuffer> {
  const encoded = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret;
  let bytes: Uint8Array<ArrayBuffer>;
  try {
    bytes = fromBase64(encoded);
  } catch {
    throw new TypeError('a signing secret is "whsec_" followed by base64');
  }
  // A short key is a configuration mistake (an empty env var, a truncated paste): say so early.
  if (bytes.length < 16) throw new TypeError('a signing secret holds at least 16 bytes of base64 key material');
  return bytes;
}

function concat(head: Uint8Array, tail: Uint8Array): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(head.byteLength + tail.byteLength);
  out.set(head, 0);
  out.set(tail, head.byteLength);
  return out;
}

/** Throws unless the secrets are well formed; returns them in the order they are tried. */
function secretsOf(options: VerifyOptions): string[] {
  if (typeof options?.secret !== 'string' || options.secret === '') {
    throw new TypeError('verifying deliveries needs the signing secret (options.secret)');
  }
  return options.nextSecret ? [options.secret, options.nextSecret] : [options.secret];
}

/** A replay check: true if this copy of a request was accepted before (it is recorded either way). */
type ReplayCheck = (key: string, webhookId: string, timestampSec: number) => Promise<boolean>;

/** The body cap of the options, checked. */
function maxBodyBytesOf(options: VerifyOptions): number {
  const maxBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  if (!(Number.isSafeInteger(maxBytes) && maxBytes > 0)) {
    throw new RangeError(`maxBodyBytes must be a whole number of bytes > 0, got ${maxBytes}`);
  }
  return maxBytes;
}

/**
 * A check of requests carrying `expected`'s body, for the given secrets. The secrets are checked
 * here (a TypeError for a malformed one) and their HMAC keys imported once, for every request it
 * then verifies. `seen`: the replay check, last of all (deliveries only).
 */
function createChecker<B>(options: VerifyOptions, expected: Expected<B>, seen?: ReplayCheck): (message: Request | RawMessage) => Promise<B> {
  const secrets = secretsOf(options);
  const raw = secrets.map(secretBytes);
  const keys = Promise.all(
    raw.map((bytes) => crypto.subtle.importKey('raw', bytes, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign'])),
  );
  const toleranceSec = options.toleranceSec ?? DEFAULT_TOLERANCE_SEC;
  if (!(toleranceSec >= 0)) throw new TypeError('toleranceSec must be a number >= 0');
  const now = options.now ?? Date.now;
  const maxBodyBytes = maxBodyBytesOf(options);

  return async function verify(message: Request | RawMessage): Promise<B> {
    const id = headerOf(message, 'webhook-id');
    const timestamp = headerOf(message, 'webhook-timestamp');
    const signature = headerOf(message, 'webhook-signature');
    const missing = [
      ['webhook-id', id],
      ['webhook-timestamp', timestamp],
      ['webhook-signature', signature],
    ].filter(([, value]) => !value);
    if (missing.length > 0) {
      const names = missing.map(([name]) => name).join(', ');
      throw new DeliveryVerificationError('missing_headers', `missing header${missing.length > 1 ? 's' : ''}: ${names}`);
    }
    if (!/^\d{1,15}$/.test(timestamp!)) {
      throw new DeliveryVerificationError('bad_timestamp', 'webhook-timestamp is not a number of unix seconds');
    }
    const offsetSec = Math.floor(now() / 1000) - Number(timestamp);
    if (Math.abs(offsetSec) > toleranceSec) {
      const direction = offsetSec > 0 ? 'in the past' : 'in the future';
      throw new DeliveryVerificationError(
        'timestamp_out_of_tolerance',
        `webhook-timestamp is ${Math.abs(offsetSec)} s ${direction}, more than the ${toleranceSec} s tolerated`,
      );
    }
    // Only the first few entries are looked at, so a header of thousands costs no more than one.
    const given = candidateSignatures(signature!);
    const unread = given.unread ? ` (only the first ${MAX_SIGNATURE_ENTRIES} entries of webhook-signature are looked at)` : '';
    if (given.signatures.length === 0) {
      throw new DeliveryVerificationError('bad_signature', `webhook-signature holds no "v1,<base64>" signature of 32 bytes${unread}`);
    }

    // The signature covers the body's exact bytes: read them as sent, never a re-encoded parse,
    // and no more of them than the cap.
    const body = await bodyOf(message, maxBodyBytes, expected.what);
    const signed = concat(new TextEncoder().encode(`${id}.${timestamp}.`), body);
    const digests = await digestsOf(await keys, signed);
    if (!anyMatches(digests, given.signatures)) {
      throw new DeliveryVerificationError(
        'bad_signature',
        `no signature matches the ${secrets.length > 1 ? 'signing secrets' : 'signing secret'} (wrong secret, or the body was changed)${unread}`,
      );
    }

    if (!id!.startsWith(expected.prefix)) {
      const other = KINDS.find((kind) => id!.startsWith(kind.prefix));
      const hint = other?.takenBy && expected.takenBy ? `: ${other.takenBy}` : '';
      throw new DeliveryVerificationError(
        'wrong_kind',
        other
          ? `this is a groupq ${other.what} (webhook-id ${other.prefix}...), not a groupq ${expected.what}${hint}`
          : `webhook-id does not start with ${expected.prefix}: not a groupq ${expected.what}`,
      );
    }

    let json: unknown;
    try {
      json = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(body));
    } catch {
      throw new DeliveryVerificationError('bad_body', `the ${expected.what} body is not JSON`);
    }
    const parsed = expected.schema.safeParse(json);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      const where = issue.path.length > 0 ? issue.path.join('.') : 'body';
      throw new DeliveryVerificationError('bad_body', `the ${expected.what} body is not a groupq ${expected.what}: ${where}: ${issue.message}`);
    }
    // The replay key: what only a copy of this very request repeats. The digest under the first
    // secret, not the entry that matched: dropping an entry of a two-secret header must not make
    // a copy look new.
    if (seen && (await seen(`${id}.${timestamp}.${toBase64(digests[0]!)}`, id!, Number(timestamp)))) {
      throw new DeliveryVerificationError(
        'replayed',
        `this ${expected.what} (webhook-id ${id}, webhook-timestamp ${timestamp}) was accepted before: a replayed copy`,
      );
    }
    return parsed.data;
  };
}

/** The replay check of deliveries and batches: the `seen` hook, else this process's memory (replays.ts). */
function replayCheckOf(options: DeliveryVerifyOptions): ReplayCheck {
  const { seen } = options;
  if (seen !== undefined && typeof seen !== 'function') throw new TypeError('seen must be a function (key, delivery) => boolean');
  const toleranceSec = options.toleranceSec ?? DEFAULT_TOLERANCE_SEC;
  const now = options.now ?? Date.now;
  return async (key, webhookId, timestampSec) =>
    seen ? (await seen(key, { webhookId, timestampSec })) === true : rememberDelivery(key, (timestampSec + toleranceSec) * 1000, now());
}

/** A delivery verifier for the given secrets (checked at once; keys imported once). */
export function createVerifier(options: DeliveryVerifyOptions): Verifier {
  const check = createChecker(options, DELIVERY, replayCheckOf(options));
  return async <T>(message: Request | RawMessage) => (await check(message)) as Delivery<T>;
}

/** A batch verifier for the given secrets: createVerifier's options and replay check, for `bat_` requests. */
export function createBatchVerifier(options: DeliveryVerifyOptions): BatchVerifier {
  const check = createChecker(options, BATCH, replayCheckOf(options));
  return async <T>(message: Request | RawMessage) => (await check(message)) as Batch<T>;
}

/** An outcome callback verifier for the given secrets (checked at once; keys imported once). */
export function createOutcomeVerifier(options: VerifyOptions): OutcomeVerifier {
  return createChecker(options, OUTCOME);
}

/**
 * Reads a delivery request and checks it: the three webhook headers, a timestamp within
 * `toleranceSec` of now (either way), a body of at most `maxBodyBytes`, a v1 signature made with
 * `secret` or `nextSecret`, a webhook-id of a delivery (`msg_`), the body's shape, and last that
 * it is no copy of a request accepted before (`seen`). A retry of the job (same webhook-id, new
 * timestamp and signature) passes: dedupe the work on the webhook-id or the body's `id`.
 * Returns the parsed delivery; throws DeliveryVerificationError saying why not. Takes a Web
 * `Request` (its body is consumed) or `{ headers, body }` with the raw body (RawMessage).
 */
export async function verifyDelivery<T = unknown>(message: Request | RawMessage, options: DeliveryVerifyOptions): Promise<Delivery<T>> {
  return createVerifier(options)<T>(message);
}

/**
 * Reads a batch (the delivery of a queue with `batch` set, docs/batches.md) and checks it as
 * verifyDelivery checks a delivery, replays included, but for a webhook-id of a batch (`bat_`;
 * a single job's `msg_` is refused as `wrong_kind`, as a batch is by verifyDelivery) and a
 * batch's body: `{ id, queue, group, jobs }`, each job a delivery. Returns the parsed batch.
 */
export async function verifyBatch<T = unknown>(message: Request | RawMessage, options: DeliveryVerifyOptions): Promise<Batch<T>> {
  return createBatchVerifier(options)<T>(message);
}

/**
 * Reads an outcome callback (docs/delivery.md#outcome-callbacks) and checks it as verifyDelivery checks a
 * delivery: headers, timestamp, body size, signature, a webhook-id of an outcome (`out_`), then
 * the body. Its webhook-id is the same on every attempt and unique per job, and there is no
 * replay check: dedupe on the webhook-id, which also absorbs a replayed copy. Returns the
 * parsed outcome; throws DeliveryVerificationError saying why not. Takes a `Request` or a
 * RawMessage, as verifyDelivery.
 */
export async function verifyOutcome(message: Request | RawMessage, options: VerifyOptions): Promise<OutcomeCallback> {
  return createOutcomeVerifier(options)(message);
}
