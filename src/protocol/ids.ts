// Random identifiers. Web Crypto exists in Workers and in Node 20 alike.
import { toBase64Url, toHex } from './encoding';

/**
 * A URL-safe job id: 16 characters, about 96 random bits. Never led by '-', which a command line
 * reads as a flag: '-' is base64url's digit for 62, so a first byte whose top six bits are 62 is
 * drawn again, and the first character is one of the other 63, each as likely.
 */
export function randomId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(12));
  while (bytes[0]! >>> 2 === 62) bytes[0] = crypto.getRandomValues(new Uint8Array(1))[0]!;
  return toBase64Url(bytes);
}

/** A random hex seed for a script call: lease tokens and jitter derive from it in Lua. */
export function randomSeed(): string {
  return toHex(crypto.getRandomValues(new Uint8Array(16)));
}

export async function sha256Hex(text: string): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text));
  return toHex(digest);
}
