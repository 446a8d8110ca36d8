// Bearer auth. The admin token opens every route; a queue's publish tokens open only its two
// enqueue routes. A publish token elsewhere, or for another queue, is 403; no token or one
// nobody issued is 401, whose details.reason tells the two apart (`missing`, `unrecognised`).
// Secrets are compared in constant time.
import type { Context } from 'hono';
import { createMiddleware } from 'hono/factory';
import type { StoredConfig } from '../core/config';
import { QueueError } from '../core/errors';
import { sha256Hex } from '../core/ids';
import { type AppEnv, scopeOf } from './scope';

export function bearerOf(c: Context): string | null {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(c.req.header('authorization') ?? '');
  return match ? match[1]! : null;
}

/** Equal strings, in time that depends only on their lengths, not on where they differ. */
export function constantTimeEqual(a: string, b: string): boolean {
  const x = new TextEncoder().encode(a);
  const y = new TextEncoder().encode(b);
  let diff = x.byteLength ^ y.byteLength;
  for (let i = 0; i < Math.max(x.byteLength, y.byteLength); i++) diff |= (x[i] ?? 0) ^ (y[i] ?? 0);
  return diff === 0;
}

const missing = () =>
  new QueueError('UNAUTHORIZED', 'no bearer token: send Authorization: Bearer <token>', { reason: 'missing' });
const unrecognised = () =>
  new QueueError('UNAUTHORIZED', 'the bearer token is not recognised: no admin or publish token matches it', {
    reason: 'unrecognised',
  });
const forbidden = () => new QueueError('FORBIDDEN', 'this token may not do this');

/** A non-admin token: 403 if it is some queue's publish token, else 401. */
async function rejectToken(c: Context<AppEnv>, tokenHash: string): Promise<never> {
  throw (await scopeOf(c).service.queueOfPublishToken(tokenHash)) === null ? unrecognised() : forbidden();
}

/** Admin routes: the admin token only. */
export const adminAuth = createMiddleware<AppEnv>(async function adminAuth(c, next) {
  const token = bearerOf(c);
  if (token === null) throw missing();
  if (!constantTimeEqual(token, scopeOf(c).settings.adminToken)) await rejectToken(c, await sha256Hex(token));
  await next();
});

/** Who sent an enqueue: the admin, or a holder of one of the queue's publish tokens. */
export type Producer = { kind: 'admin' } | { kind: 'publish'; tokenHash: string };

/**
 * Enqueue routes: the admin token, or a publish token of this queue, checked against the
 * queue's own config (`config` is what the CORS check already read, if anything).
 */
export async function checkPublisher(c: Context<AppEnv>, config: () => Promise<StoredConfig | null>): Promise<Producer> {
  const token = bearerOf(c);
  if (token === null) throw missing();
  if (constantTimeEqual(token, scopeOf(c).settings.adminToken)) return { kind: 'admin' };
  const hash = await sha256Hex(token);
  // Hashes are compared, not tokens: equal hashes mean equal tokens, and a timing leak of a
  // SHA-256 prefix tells nothing about the token.
  if ((await config())?.publishTokenHashes.includes(hash)) return { kind: 'publish', tokenHash: hash };
  return rejectToken(c, hash);
}
