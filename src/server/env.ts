// The Node server's `env`: the settings a Worker gets as bindings, read from the process'
// environment under the same names (docs/self-hosting.md), plus the bindings a Worker has and a
// process does not: RUNTIME (its Redis clients and event hubs) and ASSETS (public/ on disk).
// Only the names the app reads are copied: nothing else of the environment reaches the app.
import type { Runtime } from '../handlers/runtime';
import { envSchema } from '../handlers/settings';

/** The names read besides envSchema's: database 0 over TCP. */
const NODE_SETTINGS = ['REDIS_URL'] as const;

/** What the app gets as `env` on Node. */
export function serverEnv(source: NodeJS.ProcessEnv, runtime: Runtime, assets: Fetcher): Env {
  const env: Record<string, unknown> = { RUNTIME: runtime, ASSETS: assets };
  for (const name of [...Object.keys(envSchema.shape), ...NODE_SETTINGS]) {
    const value = source[name];
    if (value !== undefined) env[name] = value;
  }
  return env as unknown as Env;
}
