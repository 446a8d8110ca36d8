// Checks that a request is a genuine, fresh groupq request (Standard Webhooks): an HMAC-SHA256
// signature over "<webhook-id>.<webhook-timestamp>.<raw body>" keyed by the `whsec_` secret, a
// timestamp within the tolerance, the kind the signed webhook-id names (`msg_` a delivery,
// `out_` an outcome callback: neither is accepted as the other), then the body parsed against
// its shared schema; a delivery last of all must carry a webhook-id not seen before (a
// replay). One verifier for both kinds; Web Crypto only, so it runs on Workers, Node 20, Deno
// and Bun alike.
import type * as z from 'zod';
import { DELIVERY_ID_PREFIX, type Delivery, deliveryBodySchema } from '../protocol/delivery-body';
import { fromBase64 } from '../protocol/encoding';
import { OUTCOME_ID_PREFIX, type OutcomeCallback, outcomeBodySchema, outcomeWebhookId } from '../protocol/outcome-body';
import { SECRET_PREFIX } from '../protocol/signing-secret';
import { DeliveryVerificationError } from './errors';
import { type SeenHook, rememberDelivery } from './replays';

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
}

/** How deliveries are checked: as any request, and against replays. */
export interface DeliveryVerifyOptions extends VerifyOptions {
  /**
   * Says whether a delivery's `webhook-id` was seen before, and records it: a seen one is refused
   * as a replay (reason `replayed`). Plug in a shared store when several processes or instances
   * take deliveries. @default in memory, for this process, each id for the tolerance window
   */
  seen?: SeenHook;
}

/**
 * A received message as frameworks without a Web `Request` hold it: its headers (a `Headers`, or
 * a record as Node, Express, Fastify and Lambda give them, names in any case) and its body
 * exactly as received, as text or bytes. A body parsed and encoded again is not what was signed.
 */
export interface RawMessage {
  headers: Headers | Record<string, string | string[] | undefined>;
  body: string | Uint8Array | ArrayBuffer;
}

/** Reads and checks a delivery (the same checks as verifyDelivery, keys imported once). */
export type Verifier = <T = unknown>(message: Request | RawMessage) => Promise<Delivery<T>>;

/** Reads and checks an outcome callback (the same checks as verifyOutcome, keys imported once). */
export type OutcomeVerifier = (message: Request | RawMessage) => Promise<OutcomeCallback>;

// Requests and Headers are told apart by their methods, not instanceof: a framework may hand over
// those of another fetch implementation (undici's own copy, node-fetch) than the global ones.
const isRequest = (message: Request | RawMessage): message is Request => typeof (message as Request).arrayBuffer === 'function';

/** A header of the message, by its lower-case name; the first of a repeated one. */
export function headerOf(message: Request | RawMessage, name: string): string | null {
  const { headers } = message;
  if (typeof headers.get === 'function') return (headers as Headers).get(name);
  const record = headers as Record<string, string | string[] | undefined>;
  const key = Object.keys(record).find((key) => key.toLowerCase() === name);
  const value = key === undefined ? undefined : record[key];
  return (Array.isArray(value) ? value[0] : value) ?? null;
}

/** The body's bytes as received (a Request's is read, once). */
async function bodyOf(message: Request | RawMessage): Promise<Uint8Array> {
  if (isRequest(message)) return new Uint8Array(await message.arrayBuffer());
  const { body } = message;
  if (typeof body === 'string') return new TextEncoder().encode(body);
  if (body instanceof Uint8Array) return body;
  if (body instanceof ArrayBuffer) return new Uint8Array(body);
  throw new TypeError('body must be the raw body as received: a string, a Uint8Array (a Buffer) or an ArrayBuffer');
}

/**
 * What a verified request must carry: its webhook-id's prefix (the kind), its body's schema,
 * named for messages, and whether its body's id fits the webhook-id.
 */
interface Expected<B> {
  what: string;
  prefix: string;
  schema: z.ZodType<B>;
  fits(body: B, webhookId: string): boolean;
}

/** A delivery's webhook-id is new on every attempt: nothing in its body repeats it. */
const DELIVERY: Expected<Delivery> = { what: 'delivery', prefix: DELIVERY_ID_PREFIX, schema: deliveryBodySchema, fits: () => true };
const OUTCOME: Expected<OutcomeCallback> = {
  what: 'outcome callback',
  prefix: OUTCOME_ID_PREFIX,
  schema: outcomeBodySchema,
  fits: (body, webhookId) => outcomeWebhookId(body.id) === webhookId,
};
/** The kinds by prefix, to name what a request of the wrong kind is. */
const KINDS = [DELIVERY, OUTCOME];

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

/** The bytes of a base64 signature, or null when it is not base64 (such a signature never matches). */
function signatureBytes(value: string): Uint8Array<ArrayBuffer> | null {
  try {
    return fromBase64(value);
  } catch {
    return null;
  }
}

/** The "v1,<base64>" entries of a webhook-signature header; other versions are skipped. */
function v1Signatures(header: string): Uint8Array<ArrayBuffer>[] {
  const found: Uint8Array<ArrayBuffer>[] = [];
  for (const entry of header.split(' ')) {
    const comma = entry.indexOf(',');
    if (comma < 0 || entry.slice(0, comma) !== 'v1') continue;
    const bytes = signatureBytes(entry.slice(comma + 1));
    if (bytes) found.push(bytes);
  }
  return found;
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

/**
 * A check of requests carrying `expected`'s body, for the given secrets. The secrets are checked
 * here (a TypeError for a malformed one) and their HMAC keys imported once, for every request it
 * then verifies. `seen`: the replay check, last of all (deliveries only).
 */
function createChecker<B>(
  options: VerifyOptions,
  expected: Expected<B>,
  seen?: (webhookId: string, timestampSec: number) => Promise<boolean>,
): (message: Request | RawMessage) => Promise<B> {
  const secrets = secretsOf(options);
  const raw = secrets.map(secretBytes);
  const keys = Promise.all(
    raw.map((bytes) => crypto.subtle.importKey('raw', bytes, { name: 'HMAC', hash: 'SHA-256' }, false, ['verify'])),
  );
  const toleranceSec = options.toleranceSec ?? DEFAULT_TOLERANCE_SEC;
  if (!(toleranceSec >= 0)) throw new TypeError('toleranceSec must be a number >= 0');
  const now = options.now ?? Date.now;

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

    // The signature covers the body's exact bytes: read them as sent, never a re-encoded parse.
    const body = await bodyOf(message);
    const signed = concat(new TextEncoder().encode(`${id}.${timestamp}.`), body);
    const given = v1Signatures(signature!);
    if (given.length === 0) {
      throw new DeliveryVerificationError('bad_signature', 'webhook-signature holds no "v1,<base64>" signature');
    }
    // crypto.subtle.verify compares in constant time. Every pair is tried, even after a match,
    // so the time taken says nothing about which secret or which entry matched.
    const checks = await Promise.all(
      (await keys).flatMap((key) => given.map((sig) => crypto.subtle.verify('HMAC', key, sig, signed))),
    );
    if (!checks.includes(true)) {
      throw new DeliveryVerificationError(
        'bad_signature',
        `no signature matches the ${secrets.length > 1 ? 'signing secrets' : 'signing secret'} (wrong secret, or the body was changed)`,
      );
    }

    if (!id!.startsWith(expected.prefix)) {
      const other = KINDS.find((kind) => id!.startsWith(kind.prefix));
      throw new DeliveryVerificationError(
        'wrong_kind',
        other
          ? `this is a groupq ${other.what} (webhook-id ${other.prefix}...), not a groupq ${expected.what}`
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
    if (!expected.fits(parsed.data, id!)) {
      throw new DeliveryVerificationError('bad_body', 'webhook-id does not match the id in the body');
    }
    if (seen && (await seen(id!, Number(timestamp)))) {
      throw new DeliveryVerificationError('replayed', `webhook-id ${id} was seen before: a replayed ${expected.what}`);
    }
    return parsed.data;
  };
}

/** A delivery verifier for the given secrets (checked at once; keys imported once). */
export function createVerifier(options: DeliveryVerifyOptions): Verifier {
  const { seen } = options;
  if (seen !== undefined && typeof seen !== 'function') throw new TypeError('seen must be a function (webhookId) => boolean');
  const toleranceSec = options.toleranceSec ?? DEFAULT_TOLERANCE_SEC;
  const now = options.now ?? Date.now;
  const check = createChecker(options, DELIVERY, async (id, timestampSec) =>
    seen ? (await seen(id)) === true : rememberDelivery(id, (timestampSec + toleranceSec) * 1000, now()),
  );
  return async <T>(message: Request | RawMessage) => (await check(message)) as Delivery<T>;
}

/** An outcome callback verifier for the given secrets (checked at once; keys imported once). */
export function createOutcomeVerifier(options: VerifyOptions): OutcomeVerifier {
  return createChecker(options, OUTCOME);
}

/**
 * Reads a delivery request and checks it: the three webhook headers, a timestamp within
 * `toleranceSec` of now (either way), a v1 signature made with `secret` or `nextSecret`, a
 * webhook-id of a delivery (`msg_`), the body's shape, and a webhook-id not `seen` before.
 * Returns the parsed delivery; throws DeliveryVerificationError saying why not. Takes a Web
 * `Request` (its body is consumed) or `{ headers, body }` with the raw body (RawMessage).
 */
export async function verifyDelivery<T = unknown>(message: Request | RawMessage, options: DeliveryVerifyOptions): Promise<Delivery<T>> {
  return createVerifier(options)<T>(message);
}

/**
 * Reads an outcome callback (docs/delivery.md#outcome-callbacks) and checks it as verifyDelivery checks a
 * delivery: headers, timestamp, signature, a webhook-id of an outcome (`out_`), then the body,
 * whose id must be the one webhook-id names (`out_<job id>`). Its webhook-id is the same on every
 * attempt, so it is no replay check: dedupe on it. Returns the parsed outcome; throws
 * DeliveryVerificationError saying why not. Takes a `Request` or a RawMessage, as verifyDelivery.
 */
export async function verifyOutcome(message: Request | RawMessage, options: VerifyOptions): Promise<OutcomeCallback> {
  return createOutcomeVerifier(options)(message);
}
