// The Worker under Miniflare (workerd): bundled from src/index.ts with esbuild, as wrangler
// would. It gets a Redis and REST bridge of its own: its cron handler ticks every registered
// queue by the real clock, which must not reach the queues other test files run on test clocks.
import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { build } from 'esbuild';
import { Miniflare } from 'miniflare';
import { freePort, startRedis } from '../../scripts/redis-server.mjs';
import { startBridge } from '../../scripts/rest-bridge.mjs';

const COMPATIBILITY_DATE = '2026-04-26';

export async function bundleWorker(): Promise<string> {
  const outDir = path.resolve('.cache', `worker-${process.pid}`);
  mkdirSync(outDir, { recursive: true });
  const outfile = path.join(outDir, 'index.mjs');
  await build({
    entryPoints: ['src/index.ts'],
    outfile,
    bundle: true,
    format: 'esm',
    // wrangler's resolution: the browser field maps cron-parser's fs imports away.
    platform: 'browser',
    target: 'es2022',
    conditions: ['workerd', 'worker', 'browser'],
    mainFields: ['browser', 'module', 'main'],
    logLevel: 'error',
  });
  return outfile;
}

export interface PrivateStack {
  restUrl: string;
  restToken: string;
  close(): Promise<void>;
}

/** A redis-server and REST bridge for one test file. */
export async function startPrivateStack(): Promise<PrivateStack> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'groupq-worker-'));
  const redis = await startRedis({ port: await freePort(), dir, appendonly: false });
  const restToken = randomBytes(16).toString('hex');
  const bridge = await startBridge({ port: 0, redisPort: redis.port, token: restToken });
  return {
    restUrl: bridge.url,
    restToken,
    async close() {
      await bridge.close();
      await redis.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

export async function startWorker(stack: PrivateStack, bindings: Record<string, string> = {}): Promise<Miniflare> {
  return new Miniflare({
    modules: true,
    scriptPath: await bundleWorker(),
    compatibilityDate: COMPATIBILITY_DATE,
    bindings: {
      UPSTASH_REDIS_REST_URL: stack.restUrl,
      UPSTASH_REDIS_REST_TOKEN: stack.restToken,
      GROUPQ_ALLOW_HTTP_LOOPBACK: 'true',
      ...bindings,
    },
  });
}
