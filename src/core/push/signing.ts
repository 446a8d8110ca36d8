// Standard Webhooks signatures: HMAC-SHA256 over "<webhook-id>.<webhook-timestamp>.<body>",
// keyed by the bytes of a `whsec_<base64>` secret, sent as "v1,<base64>". With a second secret
// (rotation) both signatures are sent, space separated, so receivers on either secret accept.
// Each queue signs with its own secrets when it has them, else with the deployment's
// (GROUPQ_SIGNING_SECRET). The webhook-id names the kind of message (delivery-body.ts,
// outcome-body.ts), so that neither kind can be replayed as the other.

import { fromBase64, toBase64 } from '../../protocol/encoding';
import { type QueueSecrets, SECRET_PREFIX } from '../../protocol/signing-secret';

function keyBytes(secret: string): Uint8Array<ArrayBuffer> {
  return fromBase64(secret.slice(SECRET_PREFIX.length));
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
      return signatures.map((signature) => `v1,${toBase64(signature)}`).join(' ');
    },
  };
}

/** The secrets a queue's messages are signed with, current first (docs/delivery.md#verifying-the-signature). */
function secretsOf(queue: QueueSecrets, deployment: readonly string[]): string[] {
  // signingSecretNext alone rotates from the deployment's secret to the queue's own.
  const current = queue.signingSecret ? [queue.signingSecret] : deployment;
  return queue.signingSecretNext ? [...current, queue.signingSecretNext] : [...current];
}

/** Signers by secrets, kept per isolate: the HMAC keys are imported once, not per message. */
export interface Signers {
  /** The signer for a queue's secrets (the deployment's when the queue has none). */
  of(queue: QueueSecrets): Signer;
}

/** Signers kept at once; a deployment with more queues of their own re-imports keys now and then. */
const MAX_SIGNERS = 1000;

export function createSigners(deployment: readonly string[]): Signers {
  const byDeployment = createSigner([...deployment]);
  // Keyed by the secrets themselves, not the queue's name: a changed secret is a new entry at
  // once, never a stale signer. In memory only; never logged or shown.
  const cache = new Map<string, Signer>();
  return {
    of(queue) {
      if (!queue.signingSecret && !queue.signingSecretNext) return byDeployment;
      const secrets = secretsOf(queue, deployment);
      const key = secrets.join(' ');
      let signer = cache.get(key);
      if (signer) {
        cache.delete(key); // most recently used last
      } else {
        signer = createSigner(secrets);
        if (cache.size >= MAX_SIGNERS) cache.delete(cache.keys().next().value!);
      }
      cache.set(key, signer);
      return signer;
    },
  };
}
