// Random identifiers. Web Crypto exists in Workers and in Node 20 alike.

function base64url(bytes: Uint8Array): string {
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

/** A URL-safe job id: 96 random bits in 16 characters. */
export function randomId(): string {
  return base64url(crypto.getRandomValues(new Uint8Array(12)));
}

/** A random hex seed for a script call: lease tokens and jitter derive from it in Lua. */
export function randomSeed(): string {
  return Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, '0')).join('');
}

export async function sha256Hex(text: string): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text));
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, '0')).join('');
}
