// Standard Webhooks signatures: HMAC-SHA256 over "<webhook-id>.<webhook-timestamp>.<body>",
// keyed by the bytes of a `whsec_<base64>` secret, sent as "v1,<base64>". With a second secret
// (rotation) both signatures are sent, space separated, so receivers on either secret accept.

const SECRET_PREFIX = 'whsec_';

/** A `whsec_` secret holding at least 16 bytes of base64 key material. */
export function isSigningSecret(secret: string): boolean {
  if (!secret.startsWith(SECRET_PREFIX)) return false;
  try {
    return atob(secret.slice(SECRET_PREFIX.length)).length >= 16;
  } catch {
    return false;
  }
}

function keyBytes(secret: string): Uint8Array<ArrayBuffer> {
  return Uint8Array.from(atob(secret.slice(SECRET_PREFIX.length)), (c) => c.charCodeAt(0));
}

function base64(bytes: ArrayBuffer): string {
  let binary = '';
  for (const byte of new Uint8Array(bytes)) binary += String.fromCharCode(byte);
  return btoa(binary);
}

export interface Signer {
  /** The `webhook-signature` header for one delivery. */
  sign(id: string, timestampSec: number, body: string): Promise<string>;
}

/** Signs with every given secret (the current one first); keys are imported once. */
export function createSigner(secrets: string[]): Signer {
  const encoder = new TextEncoder();
  const keys = Promise.all(
    secrets.map((secret) =>
      crypto.subtle.importKey('raw', keyBytes(secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']),
    ),
  );
  return {
    async sign(id, timestampSec, body) {
      const content = encoder.encode(`${id}.${timestampSec}.${body}`);
      const signatures = await Promise.all((await keys).map((key) => crypto.subtle.sign('HMAC', key, content)));
      return signatures.map((signature) => `v1,${base64(signature)}`).join(' ');
    },
  };
}
