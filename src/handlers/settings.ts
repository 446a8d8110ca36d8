// The Worker's configuration: its bindings parsed once with zod. Core code never reads `env`.
import * as z from 'zod';
import { isSigningSecret } from '../protocol/signing-secret';
import { LOG_LEVELS, type LogLevel } from '../core/log';

const signingSecret = z.string().refine(isSigningSecret, 'expected whsec_ followed by at least 16 bytes of base64');
const flag = z.enum(['true', 'false']);
const intString = (fallback: number, min: number, max: number) =>
  z.coerce.number().int().min(min).max(max).default(fallback);

/** Databases a pool may hold: the first (the UPSTASH_REDIS_REST_* binding) and up to 31 more. */
const MAX_POOL_DATABASES = 32;
/** A Redis reached over TCP (the Node server only): redis:// or rediss://, user and password in the URL. */
const redisUrl = z.url({ protocol: /^rediss?$/, error: 'expected redis://[user:password@]host[:port][/db] or rediss://...' });
/** Whether a database's URL is one the Node server reaches over TCP. */
export const isTcp = (url: string) => /^rediss?:/i.test(url);
const database = z
  .strictObject({ url: z.url(), token: z.string().min(1).optional() })
  .refine((db) => db.token !== undefined || isTcp(db.url), { path: ['token'], message: 'required, but for a redis:// or rediss:// url (the Node server)' });
/** GROUPQ_REDIS_POOL: the databases after the first, as JSON (docs/scaling-out.md). */
const poolJson = z
  .string()
  .transform((text, ctx) => {
    if (text.trim() === '') return [];
    try {
      return JSON.parse(text) as unknown;
    } catch {
      ctx.addIssue({ code: 'custom', message: 'expected JSON: [{"url":"https://...","token":"..."}, ...]' });
      return z.NEVER;
    }
  })
  .pipe(z.array(database).max(MAX_POOL_DATABASES - 1, `a pool holds at most ${MAX_POOL_DATABASES} databases`));

/** Every binding the Worker reads; `npm run deploy:check` (scripts/deploy-check.mjs) checks a deploy's with it too. */
export const envSchema = z.object({
  UPSTASH_REDIS_REST_URL: z.url(),
  UPSTASH_REDIS_REST_TOKEN: z.string().min(1),
  GROUPQ_ADMIN_TOKEN: z.string().min(16, 'use at least 16 characters'),
  GROUPQ_METRICS_TOKEN: z.string().min(16, 'use at least 16 characters').or(z.literal('')).optional(),
  GROUPQ_SIGNING_SECRET: signingSecret,
  GROUPQ_SIGNING_SECRET_NEXT: signingSecret.or(z.literal('')).optional(),
  GROUPQ_REDIS_POOL: poolJson.optional(),
  GROUPQ_PUBLIC_URL: z.url().or(z.literal('')).optional(),
  GROUPQ_ALLOW_HTTP_LOOPBACK: flag.default('false'),
  GROUPQ_SCHEDULER_STAY_MS: intString(50_000, 0, 14 * 60_000),
  GROUPQ_MAX_SUBREQUESTS: intString(10_000, 10, 10_000_000),
  GROUPQ_MAX_PUSHES: intString(10_000, 1, 10_000_000),
  GROUPQ_SCRIPT_KEY_LOCKING: flag.default('true'),
  GROUPQ_LOG_LEVEL: z.enum(LOG_LEVELS).default('info'),
});

/** The Node server's (src/server): database 0 over TCP (REDIS_URL) in place of Upstash's REST API. */
const tcpEnvSchema = envSchema.extend({
  REDIS_URL: redisUrl,
  // Upstash's flag is refused by a plain Redis, what a redis:// URL mostly names (Upstash over
  // TCP takes it: "true" there).
  GROUPQ_SCRIPT_KEY_LOCKING: flag.default('false'),
  UPSTASH_REDIS_REST_URL: z.url().or(z.literal('')).optional(),
  UPSTASH_REDIS_REST_TOKEN: z.string().optional(),
});

export interface Settings {
  /**
   * The pool's databases: database 0 (the control database) first, then GROUPQ_REDIS_POOL's. A
   * redis:// URL (token '') is reached over TCP, by the Node server only.
   */
  databases: { url: string; token: string }[];
  adminToken: string;
  /** Opens GET /metrics alone (a scraper's token); null: only the admin token does. */
  metricsToken: string | null;
  /** The current secret first; the next one (rotation) after it. */
  signingSecrets: string[];
  /**
   * Origin of the callback URLs. Only local development (allowHttpLoopback) may go without it,
   * taking the origin the request came in on: a deployed Worker never trusts a request's Host.
   */
  publicUrl: string | null;
  allowHttpLoopback: boolean;
  /** How long a cron invocation keeps honouring due times after its tick. */
  schedulerStayMs: number;
  /** Subrequests one invocation may make (Workers Paid allows 10,000, Free 50). */
  maxSubrequests: number;
  /**
   * Pushes (deliveries and outcome callbacks) one invocation may make: the bound on a drain's CPU,
   * which an isolate cannot measure (docs/internals.md#sharing-the-isolate).
   */
  maxPushes: number;
  /** Send scripts with Upstash's allow-key-locking flag (off for a Redis that refuses it). */
  scriptKeyLocking: boolean;
  /** The log's lines below this level are dropped (docs/logs.md). */
  logLevel: LogLevel;
}

const parsed = new WeakMap<object, Settings>();

/** Bindings a Worker cannot start with: every request answers 500 with it, and the cron throws it. */
export class BindingsError extends Error {
  override readonly name = 'BindingsError';
}

/**
 * Parses the bindings (once per isolate); a misconfigured Worker fails loudly, naming the
 * binding (BindingsError).
 */
export function settingsOf(env: Env): Settings {
  const cached = parsed.get(env);
  if (cached) return cached;
  const tcp = typeof env.REDIS_URL === 'string' && env.REDIS_URL !== '';
  if (env.RUNTIME && !tcp && !env.UPSTASH_REDIS_REST_URL) {
    throw new BindingsError('groupq: invalid or missing settings: REDIS_URL (redis://host:port), or UPSTASH_REDIS_REST_URL and UPSTASH_REDIS_REST_TOKEN');
  }
  const result = (tcp ? tcpEnvSchema : envSchema).safeParse(env);
  if (!result.success) {
    const problems = result.error.issues.map((issue) => `${issue.path.join('.')} (${issue.message})`).join(', ');
    throw new BindingsError(`groupq: invalid or missing bindings: ${problems}`);
  }
  const e = result.data;
  const databases = [tcp ? { url: env.REDIS_URL!, token: '' } : { url: e.UPSTASH_REDIS_REST_URL!, token: e.UPSTASH_REDIS_REST_TOKEN! }, ...(e.GROUPQ_REDIS_POOL ?? []).map((db) => ({ token: '', ...db }))];
  if (!env.RUNTIME && databases.some((db) => isTcp(db.url))) {
    // A Worker reaches Redis over HTTP only: a redis:// URL is for the Node server.
    throw new BindingsError('groupq: invalid or missing bindings: REDIS_URL and redis:// pool databases are read by the Node server (groupq serve) only; a Worker reaches Redis over Upstash\'s REST API');
  }
  if (!e.GROUPQ_PUBLIC_URL && e.GROUPQ_ALLOW_HTTP_LOOPBACK !== 'true') {
    // Callback URLs built from a request's Host would send endpoints wherever a caller says.
    throw new BindingsError(
      "groupq: invalid or missing bindings: GROUPQ_PUBLIC_URL (set it to the Worker's https URL; only local development, GROUPQ_ALLOW_HTTP_LOOPBACK=true, may go without it)",
    );
  }
  const settings: Settings = {
    databases,
    adminToken: e.GROUPQ_ADMIN_TOKEN,
    metricsToken: e.GROUPQ_METRICS_TOKEN || null,
    signingSecrets: e.GROUPQ_SIGNING_SECRET_NEXT ? [e.GROUPQ_SIGNING_SECRET, e.GROUPQ_SIGNING_SECRET_NEXT] : [e.GROUPQ_SIGNING_SECRET],
    publicUrl: e.GROUPQ_PUBLIC_URL ? new URL(e.GROUPQ_PUBLIC_URL).origin : null,
    allowHttpLoopback: e.GROUPQ_ALLOW_HTTP_LOOPBACK === 'true',
    schedulerStayMs: e.GROUPQ_SCHEDULER_STAY_MS,
    maxSubrequests: e.GROUPQ_MAX_SUBREQUESTS,
    maxPushes: e.GROUPQ_MAX_PUSHES,
    scriptKeyLocking: e.GROUPQ_SCRIPT_KEY_LOCKING === 'true',
    logLevel: e.GROUPQ_LOG_LEVEL,
  };
  parsed.set(env, settings);
  return settings;
}
