// The Worker under Miniflare (workerd): bundled from src/index.ts with esbuild, as wrangler
// would. It gets a Redis and REST bridge of its own: its cron handler ticks every registered
// queue by the real clock, which must not reach the queues other test files run on test clocks.
import { Buffer } from 'node:buffer';
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

export const ADMIN_TOKEN = 'test-admin-token-0123456789';
export const SIGNING_SECRET = `whsec_${Buffer.from('groupq-test-signing-secret-01234').toString('base64')}`;

export interface RunningWorker {
  mf: Miniflare;
  /** The Worker's origin on loopback, e.g. http://127.0.0.1:41234 (also its GROUPQ_PUBLIC_URL). */
  url: string;
  /** fetch against the Worker, with the admin token unless `init.headers` says otherwise. */
  api(path: string, init?: RequestInit & { json?: unknown }): Promise<Response>;
  /** Fires the cron trigger and waits for the scheduled handler (and its waitUntil) to end. */
  scheduled(): Promise<void>;
  dispose(): Promise<void>;
}

/**
 * The Worker in workerd, listening on a loopback port so that endpoints can call back. The
 * scheduler's stay window is 0 by default: a cron run returns once its work is done.
 */
export async function startWorker(stack: PrivateStack, bindings: Record<string, string> = {}): Promise<RunningWorker> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const mf = new Miniflare({
    modules: true,
    scriptPath: await bundleWorker(),
    compatibilityDate: COMPATIBILITY_DATE,
    host: '127.0.0.1',
    port,
    bindings: {
      UPSTASH_REDIS_REST_URL: stack.restUrl,
      UPSTASH_REDIS_REST_TOKEN: stack.restToken,
      GROUPQ_ADMIN_TOKEN: ADMIN_TOKEN,
      GROUPQ_SIGNING_SECRET: SIGNING_SECRET,
      GROUPQ_PUBLIC_URL: url,
      GROUPQ_ALLOW_HTTP_LOOPBACK: 'true',
      GROUPQ_SCHEDULER_STAY_MS: '0',
      ...bindings,
    },
  });
  await mf.ready;
  return {
    mf,
    url,
    api(path, { json, headers, ...init } = {}) {
      const h = new Headers(headers);
      if (!h.has('authorization')) h.set('authorization', `Bearer ${ADMIN_TOKEN}`);
      if (json !== undefined && !h.has('content-type')) h.set('content-type', 'application/json');
      return fetch(`${url}${path}`, { ...init, headers: h, body: json === undefined ? init.body : JSON.stringify(json) });
    },
    async scheduled() {
      await (await mf.getWorker()).scheduled({ cron: '* * * * *' });
    },
    dispose: () => mf.dispose(),
  };
}
