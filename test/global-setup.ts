// vitest globalSetup: `npm run build`'s dist/, Chromium for the browser tests (Debian's, installed
// when missing, as redis-server is), then one redis-server and one Upstash REST bridge for the
// whole run, on free ports, with data in a temporary directory. Tests reach them through
// `inject('stack')` (see test/helpers/stack.ts).
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { buildPackage } from '../scripts/build.mjs';
import { ensureProgram } from '../scripts/debian-package.mjs';
import { freePort, startRedis } from '../scripts/redis-server.mjs';
import { startBridge } from '../scripts/rest-bridge.mjs';

export interface TestStack {
  /** Upstash REST URL of the bridge. */
  restUrl: string;
  /** Bearer token the bridge accepts. */
  restToken: string;
  /** The raw Redis behind the bridge (for INFO, SCRIPT FLUSH, cleanup). */
  redisHost: string;
  redisPort: number;
}

declare module 'vitest' {
  export interface ProvidedContext {
    stack: TestStack;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  // The examples, the CLI's bin and the package tests use dist/ as users get it.
  await buildPackage();
  // The browser tests drive /usr/bin/chromium unless CHROMIUM_PATH names another (test/dashboard/browser.ts).
  if (!process.env.CHROMIUM_PATH) {
    ensureProgram({ binary: 'chromium', pkg: 'chromium', hint: 'chromium not found: install it (Debian/Ubuntu: sudo apt-get install -y chromium) or set CHROMIUM_PATH, and retry' });
  }
  // GET /metrics is checked with Prometheus' own promtool (test/http/prometheus.test.ts).
  ensureProgram({ binary: 'promtool', pkg: 'prometheus', hint: 'promtool not found: install it (Debian/Ubuntu: sudo apt-get install -y prometheus) and retry' });
  const dir = await mkdtemp(path.join(os.tmpdir(), 'groupq-test-redis-'));
  const restToken = randomBytes(24).toString('hex');
  let redis: Awaited<ReturnType<typeof startRedis>> | undefined;
  let bridge: Awaited<ReturnType<typeof startBridge>>;
  try {
    redis = await startRedis({ port: await freePort(), dir, appendonly: true });
    bridge = await startBridge({ port: 0, redisPort: redis.port, token: restToken });
  } catch (err) {
    await redis?.stop();
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
  const started = redis;
  project.provide('stack', { restUrl: bridge.url, restToken, redisHost: '127.0.0.1', redisPort: started.port });

  return async function teardown() {
    await bridge.close();
    await started.stop();
    await rm(dir, { recursive: true, force: true });
  };
}
