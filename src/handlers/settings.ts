// The Worker's configuration: its bindings parsed once with zod. Core code never reads `env`.
import { z } from 'zod';

/** The bindings this Worker reads (vars in wrangler.toml, secrets in .dev.vars or `wrangler secret`). */
export interface Env {
  UPSTASH_REDIS_REST_URL: string;
  UPSTASH_REDIS_REST_TOKEN: string;
  /** "true" lets queues push to http:// endpoints on loopback (local development). */
  GROUPQ_ALLOW_HTTP_LOOPBACK?: string;
}

const envSchema = z.object({
  UPSTASH_REDIS_REST_URL: z.url(),
  UPSTASH_REDIS_REST_TOKEN: z.string().min(1),
  GROUPQ_ALLOW_HTTP_LOOPBACK: z.enum(['true', 'false']).default('false'),
});

export interface Settings {
  redis: { url: string; token: string };
  allowHttpLoopback: boolean;
}

const parsed = new WeakMap<object, Settings>();

/** Parses the bindings (once per isolate); a misconfigured Worker fails loudly, naming the binding. */
export function settingsOf(env: Env): Settings {
  const cached = parsed.get(env);
  if (cached) return cached;
  const result = envSchema.safeParse(env);
  if (!result.success) {
    const names = result.error.issues.map((issue) => issue.path.join('.')).join(', ');
    throw new Error(`groupq: invalid or missing bindings: ${names}`);
  }
  const settings: Settings = {
    redis: { url: result.data.UPSTASH_REDIS_REST_URL, token: result.data.UPSTASH_REDIS_REST_TOKEN },
    allowHttpLoopback: result.data.GROUPQ_ALLOW_HTTP_LOOPBACK === 'true',
  };
  parsed.set(env, settings);
  return settings;
}
