// Random identifiers. Web Crypto exists in Workers and in Node 20 alike.
import { toBase64Url, toHex } from './encoding';

/** A URL-safe job id: 96 random bits in 16 characters. */
export function randomId(): string {
  return toBase64Url(crypto.getRandomValues(new Uint8Array(12)));
}

/** A random hex seed for a script call: lease tokens and jitter derive from it in Lua. */
export function randomSeed(): string {
  return toHex(crypto.getRandomValues(new Uint8Array(16)));
}

export async function sha256Hex(text: string): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text));
  return toHex(digest);
}
