// `groupq serve` processes for tests (scripts/server-process.mjs: `node dist/server.js` on a free
// loopback port, its own origin as its public URL), with the tests' tokens, so that the clients,
// endpoints and checkers written for the Worker (worker.ts) work against them unchanged.
import { type ServerProcess, startServerProcess } from '../../scripts/server-process.mjs';
import type { LogLine } from './log-lines';
import { ADMIN_TOKEN, SIGNING_SECRET } from './worker';

export type { ServerProcess };

/** `n` processes with `settings` (REDIS_URL or UPSTASH_REDIS_REST_*, GROUPQ_CRON, ...) and the tests' tokens. */
export function startServers(n: number, settings: Record<string, string>): Promise<ServerProcess[]> {
  const env = { GROUPQ_ADMIN_TOKEN: ADMIN_TOKEN, GROUPQ_SIGNING_SECRET: SIGNING_SECRET, ...settings };
  return Promise.all(Array.from({ length: n }, () => startServerProcess(env)));
}

/** The JSON log lines of `server`'s output at `level` (docs/logs.md). */
export function logLinesAt(server: ServerProcess, level: LogLine['level']): LogLine[] {
  return server
    .output()
    .split('\n')
    .filter((text) => text.startsWith('{'))
    .map((text) => JSON.parse(text) as LogLine)
    .filter((line) => line.level === level);
}
