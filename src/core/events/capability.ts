// Event capabilities: the `cap` of an `eventsUrl` (docs/events.md#following-a-job-from-a-browser).
// A capability is `<payload>.<mac>`: payload = base64url of the compact JSON {q, id, exp, see},
// mac = base64url of HMAC-SHA256 over the payload's text. The HMAC key is derived with HKDF from
// the admin token, so rotating the admin token revokes every capability at once, and the key is
// never the token itself (a capability leaks nothing that opens an admin route). Nothing is
// stored: checking one costs no Redis command.
//
// One answer for every refusal (401, details.reason `capability`, "not valid for this job"),
// whatever check failed, so a refusal tells nobody which strings come close to a capability.
// The one exception is `expired`, and only after the MAC verified and the capability named this
// very job: its holder could read exp from the payload anyway, and it tells a client to ask for
// a new URL rather than give up.
import * as z from 'zod';
import { fromBase64Url, toBase64Url } from '../../protocol/encoding';
import { QueueError } from '../../protocol/errors';
import { epochMsSchema, isJobId, isQueueName, jobIdSchema, queueNameSchema } from '../../protocol/job-input';

/** What a capability's holder sees of the job: its states only, or its results and errors too. */
export type CapabilitySee = 'state' | 'result';

/** How long a capability lasts when the mint asks for no other lifetime (Trigger.dev's scoped tokens). */
export const CAPABILITY_TTL_MS = 15 * 60_000;
/** The longest lifetime a capability may have; a longer one is refused even with a good MAC. */
export const CAPABILITY_MAX_TTL_MS = 24 * 3600_000;

/**
 * The longest capability read: refused before any crypto. The longest one minted (a 64-character
 * queue, a 256-character id all of `"` and `\`, escaped to 512 in the JSON) is 882 characters.
 */
export const CAPABILITY_MAX_LENGTH = 1024;

/** HKDF's info: binds the derived key to this one use of the admin token. */
const HKDF_INFO = 'groupq events capability';

/** base64url, unpadded; the MAC is 32 bytes, exactly 43 characters. */
const TOKEN_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/;

const payloadSchema = z.strictObject({
  q: queueNameSchema,
  id: jobIdSchema,
  exp: epochMsSchema,
  see: z.enum(['state', 'result']),
});

const encoder = new TextEncoder();

/** Keys derived in this isolate, by admin token: a Worker has one, a rotation briefly two. */
const keys = new Map<string, Promise<CryptoKey>>();
/** Enough for a rotation and for tests that mint under several tokens; the oldest goes first. */
const MAX_KEYS = 8;

async function deriveKey(adminToken: string): Promise<CryptoKey> {
  const secret = await crypto.subtle.importKey('raw', encoder.encode(adminToken), 'HKDF', false, ['deriveKey']);
  // No salt (RFC 5869 §3.1: the token is already a high-entropy secret); the info separates this
  // key from any other that may be derived from the admin token later.
  return crypto.subtle.deriveKey(
    { name: 'HKDF', hash: 'SHA-256', salt: new Uint8Array(0), info: encoder.encode(HKDF_INFO) },
    secret,
    { name: 'HMAC', hash: 'SHA-256', length: 256 },
    false, // not extractable: the key never leaves Web Crypto
    ['sign', 'verify'],
  );
}

/** The HMAC key of capabilities under `adminToken`, derived once per isolate. */
export function capabilityKey(adminToken: string): Promise<CryptoKey> {
  let key = keys.get(adminToken);
  if (!key) {
    // The promise is kept, not the key: concurrent first requests share one derivation.
    const derived = deriveKey(adminToken);
    // A failed derivation is not kept: the next request tries again.
    derived.catch(() => keys.get(adminToken) === derived && keys.delete(adminToken));
    key = derived;
    if (keys.size >= MAX_KEYS) keys.delete(keys.keys().next().value!);
    keys.set(adminToken, key);
  }
  return key;
}

export interface MintInput {
  key: CryptoKey;
  queue: string;
  id: string;
  see: CapabilitySee;
  /** Epoch ms; the capability is valid while `now < expiresAt`. */
  expiresAt: number;
}

/** A capability to `id` of `queue` until `expiresAt`, as `<payload>.<mac>`. */
export async function mintCapability({ key, queue, id, see, expiresAt }: MintInput): Promise<string> {
  // Errors of the caller, not of a request: routes have checked their parameters already.
  if (!isQueueName(queue) || !isJobId(id)) throw new Error(`no capability for queue ${queue} job ${id}: not a queue name and job id`);
  if (!epochMsSchema.safeParse(expiresAt).success) throw new Error(`no capability expiring at ${expiresAt}: not an epoch ms`);
  const payload = toBase64Url(encoder.encode(JSON.stringify({ q: queue, id, exp: expiresAt, see })));
  const mac = toBase64Url(await crypto.subtle.sign('HMAC', key, encoder.encode(payload)));
  return `${payload}.${mac}`;
}

export interface CheckInput {
  key: CryptoKey;
  /** The `cap` the request sent. */
  token: string;
  /** The queue and job of the route the capability is sent to. */
  queue: string;
  id: string;
  now: number;
}

const notValid = () =>
  new QueueError('UNAUTHORIZED', 'the capability is not valid for this job', { reason: 'capability' });
const expired = () =>
  new QueueError('UNAUTHORIZED', 'the capability has expired: ask for a new events URL', { reason: 'capability' });

/** The claims of a payload whose MAC verified, or null when they are not what mint writes. */
function readPayload(payload: string): z.output<typeof payloadSchema> | null {
  try {
    const json: unknown = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(fromBase64Url(payload)));
    const claims = payloadSchema.safeParse(json);
    return claims.success ? claims.data : null;
  } catch {
    return null;
  }
}

/**
 * What the capability `token` lets its holder see of job `id` of `queue` at `now`; a token that
 * does not open that job is UNAUTHORIZED with details.reason `capability`.
 */
export async function checkCapability({ key, token, queue, id, now }: CheckInput): Promise<{ see: CapabilitySee }> {
  // Length first: no regex or crypto runs over an unbounded string.
  if (token.length > CAPABILITY_MAX_LENGTH || !TOKEN_SHAPE.test(token)) throw notValid();
  const dot = token.indexOf('.');
  const payload = token.slice(0, dot);
  const mac = token.slice(dot + 1);
  const macBytes = fromBase64Url(mac);
  // 43 characters carry 258 bits: 4 spellings decode to the same 32 bytes. Only the one mint
  // writes is a capability, so that no second string opens the same job.
  if (toBase64Url(macBytes) !== mac) throw notValid();
  // verify compares in constant time; the MAC covers the payload's text, so it is checked
  // before the payload is decoded or parsed.
  if (!(await crypto.subtle.verify('HMAC', key, macBytes, encoder.encode(payload)))) throw notValid();
  const claims = readPayload(payload);
  // Queue and job are compared plainly: they are in the URL and the payload, no secret.
  if (!claims || claims.q !== queue || claims.id !== id) throw notValid();
  // An exp no mint would write (a bug of units at a mint site) opens nothing.
  if (claims.exp > now + CAPABILITY_MAX_TTL_MS) throw notValid();
  if (claims.exp <= now) throw expired();
  return { see: claims.see };
}
