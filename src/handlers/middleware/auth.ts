// Bearer auth. The admin token opens every route; a queue's publish tokens open only its two
// enqueue routes (a job's events URL, which is no bearer token, opens only that job's GET and
// stream: src/handlers/capabilities.ts). No token is 401 with details.reason `missing`; any
// other token that does not open the route (unknown, malformed, or a publish token off its
// enqueue routes) is the same 401 with reason `unrecognised`, so an answer never tells which
// strings are tokens. No check costs a Redis command: the admin token is a binding, and publish
// tokens are checked against the queue's config as this isolate cached it
// (src/core/store/config-cache.ts). Secrets are compared in constant time (Hono's timingSafeEqual).
import type { Context } from 'hono';
import { createMiddleware } from 'hono/factory';
import { timingSafeEqual } from 'hono/utils/buffer';
import { type StoredConfig, TOKEN_PATTERN } from '../../protocol/config';
import { QueueError } from '../../protocol/errors';
import { sha256Hex } from '../../protocol/ids';
import type { AppEnv } from '../scope';

export function bearerOf(c: Context): string | null {
  return bearerIn(c.req.header('authorization'));
}

/** The token of an Authorization header's `Bearer <token>`, or null. */
function bearerIn(authorization: string | null | undefined): string | null {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '');
  return match ? match[1]! : null;
}

/**
 * Whether a request of a Worker whose bindings do not parse carries the admin token: only then
 * does its 500 name the broken binding (src/index.ts). An admin token that itself does not parse
 * opens nothing.
 */
export async function sentRawAdminToken(request: Request, env: Env): Promise<boolean> {
  const token = bearerIn(request.headers.get('authorization'));
  const admin = env.GROUPQ_ADMIN_TOKEN;
  if (token === null || typeof admin !== 'string' || !TOKEN_PATTERN.test(admin)) return false;
  return timingSafeEqual(token, admin);
}

const missing = () =>
  new QueueError('UNAUTHORIZED', 'no bearer token: send Authorization: Bearer <token>', { reason: 'missing' });
const unrecognised = () =>
  new QueueError('UNAUTHORIZED', 'the bearer token is not recognised: no admin or publish token matches it', {
    reason: 'unrecognised',
  });

/** The admin token, or UNAUTHORIZED: any other token is unrecognised, unread. */
export async function checkAdmin(c: Context<AppEnv>): Promise<void> {
  const token = bearerOf(c);
  if (token === null) throw missing();
  if (!(await timingSafeEqual(token, c.var.settings.adminToken))) throw unrecognised();
}

/** Admin routes: the admin token only. */
export const adminAuth = createMiddleware<AppEnv>(async function adminAuth(c, next) {
  await checkAdmin(c);
  await next();
});

/** Who sent an enqueue: the admin, or a holder of one of the queue's publish tokens. */
export type Producer =
  | { kind: 'admin' }
  /** `config`: the queue's config the token matched; it says what the token may send. */
  | { kind: 'publish'; tokenHash: string; config: StoredConfig };

/**
 * Enqueue routes: the admin token, or a publish token of this queue, checked against the
 * queue's own config (`config`: read from the isolate's cache, which the CORS check may have
 * filled). A token that no publish token could be (TOKEN_PATTERN) is refused before the config
 * is looked at.
 */
export async function checkPublisher(c: Context<AppEnv>, config: () => Promise<StoredConfig | null>): Promise<Producer> {
  const token = bearerOf(c);
  if (token === null) throw missing();
  if (await timingSafeEqual(token, c.var.settings.adminToken)) return { kind: 'admin' };
  if (!TOKEN_PATTERN.test(token)) throw unrecognised();
  const hash = await sha256Hex(token);
  // Hashes are compared, not tokens: equal hashes mean equal tokens, and a timing leak of a
  // SHA-256 prefix tells nothing about the token.
  const stored = await config();
  if (stored?.publishTokenHashes.includes(hash)) return { kind: 'publish', tokenHash: hash, config: stored };
  throw unrecognised();
}
