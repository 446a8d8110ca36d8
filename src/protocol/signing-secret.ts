// What a signing secret looks like (Standard Webhooks' `whsec_<base64>`): the queue config checks
// it, the Worker signs with it (src/core/push/signing.ts).
import { fromBase64 } from './encoding';

export const SECRET_PREFIX = 'whsec_';

/** A `whsec_` secret holding at least 16 bytes of base64 key material. */
export function isSigningSecret(secret: string): boolean {
  if (!secret.startsWith(SECRET_PREFIX)) return false;
  try {
    return fromBase64(secret.slice(SECRET_PREFIX.length)).length >= 16;
  } catch {
    return false;
  }
}

/** A queue's own signing secrets, as its stored config holds them (write-only fields). */
export interface QueueSecrets {
  signingSecret?: string;
  signingSecretNext?: string;
}
