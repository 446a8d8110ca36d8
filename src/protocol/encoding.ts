// Base64, base64url and hex, written once for the Worker, the client and the receiver. Not
// Hono's encode helpers: this folder imports nothing but zod, and dist/client.js nothing at all.

/** Standard base64, padded. */
export function toBase64(bytes: Uint8Array | ArrayBuffer): string {
  let binary = '';
  for (const byte of new Uint8Array(bytes)) binary += String.fromCharCode(byte);
  return btoa(binary);
}

/** The bytes of base64 (padding optional); throws a DOMException on any other character. */
export function fromBase64(text: string): Uint8Array<ArrayBuffer> {
  return Uint8Array.from(atob(text), (char) => char.charCodeAt(0));
}

/** URL-safe base64 (RFC 4648 §5), unpadded. */
export function toBase64Url(bytes: Uint8Array | ArrayBuffer): string {
  return toBase64(bytes).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

/** The bytes of URL-safe base64; throws a DOMException on any other character. */
export function fromBase64Url(text: string): Uint8Array<ArrayBuffer> {
  return fromBase64(text.replace(/-/g, '+').replace(/_/g, '/'));
}

const HEX_DIGITS = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, '0'));

/** Lower-case hex, two digits a byte (a table, not Array.from + join: every settle makes a seed). */
export function toHex(bytes: Uint8Array | ArrayBuffer): string {
  let hex = '';
  for (const byte of new Uint8Array(bytes)) hex += HEX_DIGITS[byte];
  return hex;
}

/**
 * The first `max` UTF-16 code units of `text`, one fewer where the cut would split a surrogate
 * pair: a lone surrogate would reach Redis as U+FFFD, not as the character.
 */
export function textHead(text: string, max: number): string {
  if (text.length <= max) return text;
  const code = text.charCodeAt(max - 1);
  return text.slice(0, code >= 0xd800 && code <= 0xdbff ? max - 1 : max);
}

/**
 * `bytes` (UTF-8 cut at a byte count) without a last character the cut left incomplete, so that
 * decoding adds no U+FFFD: a truncated answer keeps only whole characters.
 */
export function wholeUtf8(bytes: Uint8Array): Uint8Array {
  let start = bytes.length - 1;
  while (start >= 0 && bytes.length - start < 4 && (bytes[start]! & 0xc0) === 0x80) start--;
  if (start < 0) return bytes;
  const lead = bytes[start]!;
  const size = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
  return bytes.length - start < size ? bytes.subarray(0, start) : bytes;
}
