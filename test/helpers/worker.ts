// The Worker under Miniflare (workerd): bundled from src/index.ts with esbuild, as wrangler
// would, and bound to the test stack's REST bridge.
import { build } from 'esbuild';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { Miniflare } from 'miniflare';
import { stack } from './stack';

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
    platform: 'browser',
    target: 'es2022',
    conditions: ['workerd', 'worker', 'browser'],
    // wrangler's resolution: the browser field maps cron-parser's fs imports away.
    mainFields: ['browser', 'module', 'main'],
    logLevel: 'error',
  });
  return outfile;
}

export async function startWorker(bindings: Record<string, string> = {}): Promise<Miniflare> {
  const { restUrl, restToken } = stack();
  return new Miniflare({
    modules: true,
    scriptPath: await bundleWorker(),
    compatibilityDate: COMPATIBILITY_DATE,
    bindings: {
      UPSTASH_REDIS_REST_URL: restUrl,
      UPSTASH_REDIS_REST_TOKEN: restToken,
      GROUPQ_ALLOW_HTTP_LOOPBACK: 'true',
      ...bindings,
    },
  });
}
