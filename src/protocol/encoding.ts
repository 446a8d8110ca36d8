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

/** Lower-case hex, two digits a byte. */
export function toHex(bytes: Uint8Array | ArrayBuffer): string {
  return Array.from(new Uint8Array(bytes), (byte) => byte.toString(16).padStart(2, '0')).join('');
}
