// The signature check, at a cost the sender cannot raise: `webhook-signature` may hold any
// number of entries, but only the first MAX_SIGNATURE_ENTRIES are looked at, and of those only
// `v1,` entries whose base64 is exactly 32 bytes (an HMAC-SHA256) are candidates; the others are
// skipped without any HMAC. The HMAC of the signed content is computed once per secret (two at
// most, while rotating), then compared with each candidate in constant time.
import { fromBase64 } from '../protocol/encoding';

/**
 * The most entries of `webhook-signature` looked at. groupq sends one, two while a secret
 * rotates; the rest leaves room for signatures of other versions next to them.
 */
export const MAX_SIGNATURE_ENTRIES = 4;

/** An HMAC-SHA256 is 32 bytes: 43 characters of base64, 44 padded. */
const SIGNATURE_BYTES = 32;

/** What the header offers: the candidate signatures, and whether entries past the limit were left unread. */
export interface Candidates {
  signatures: Uint8Array[];
  unread: boolean;
}

/** The bytes of a 32-byte base64 signature, or null for anything else (such an entry never matches). */
function signatureBytes(base64: string): Uint8Array | null {
  if (base64.length < 43 || base64.length > 44) return null;
  try {
    const bytes = fromBase64(base64);
    return bytes.length === SIGNATURE_BYTES ? bytes : null;
  } catch {
    return null;
  }
}

/** The candidate v1 signatures among the header's first MAX_SIGNATURE_ENTRIES entries (empty ones do not count). */
export function candidateSignatures(header: string): Candidates {
  const signatures: Uint8Array[] = [];
  let looked = 0;
  let at = 0;
  while (at < header.length && looked < MAX_SIGNATURE_ENTRIES) {
    const space = header.indexOf(' ', at);
    const end = space < 0 ? header.length : space;
    const entry = header.slice(at, end);
    at = end + 1;
    if (entry === '') continue;
    looked++;
    if (!entry.startsWith('v1,')) continue;
    const bytes = signatureBytes(entry.slice(3));
    if (bytes) signatures.push(bytes);
  }
  return { signatures, unread: header.slice(at).trim() !== '' };
}

/** Equal bytes, in a time that depends on the lengths only (both are 32 here). */
function timingSafeEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.byteLength !== b.byteLength) return false;
  let diff = 0;
  for (let i = 0; i < a.byteLength; i++) diff |= a[i]! ^ b[i]!;
  return diff === 0;
}

/** The HMAC-SHA256 of `signed` under each key: one computation per secret. */
export async function digestsOf(keys: CryptoKey[], signed: Uint8Array<ArrayBuffer>): Promise<Uint8Array[]> {
  return Promise.all(keys.map(async (key) => new Uint8Array(await crypto.subtle.sign('HMAC', key, signed))));
}

/**
 * Whether any candidate is any digest. Every pair is compared, even after a match, so the time
 * taken says nothing about which secret or which entry matched.
 */
export function anyMatches(digests: Uint8Array[], candidates: Uint8Array[]): boolean {
  let matched = false;
  for (const digest of digests) {
    for (const candidate of candidates) {
      const equal = timingSafeEqual(digest, candidate);
      matched = matched || equal;
    }
  }
  return matched;
}
