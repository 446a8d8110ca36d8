// `wrangler deploy` is how users ship groupq: its dry run must build the Worker from
// wrangler.toml with wrangler's own bundler (the tests run an esbuild bundle made the same way).
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import { createRequire } from 'node:module';
import path from 'node:path';
import { promisify } from 'node:util';
import { gzipSync } from 'node:zlib';
import { expect, it } from 'vitest';

const wrangler = path.join(path.dirname(createRequire(import.meta.url).resolve('wrangler/package.json')), 'bin', 'wrangler.js');

it('wrangler deploy --dry-run bundles the Worker, well under the 3 MiB (gzip) Free-plan limit', async () => {
  const outDir = mkdtempSync(path.join(os.tmpdir(), 'groupq-deploy-'));
  const { stdout } = await promisify(execFile)(process.execPath, [wrangler, 'deploy', '--dry-run', '--outdir', outDir], {
    env: { ...process.env, WRANGLER_SEND_METRICS: 'false', CI: 'true' },
  });
  expect(stdout).toContain('--dry-run: exiting now.');
  try {
    const bundle = path.join(outDir, 'index.js');
    expect(existsSync(bundle)).toBe(true);
    expect(gzipSync(readFileSync(bundle)).byteLength).toBeLessThan(1024 * 1024);
  } finally {
    rmSync(outDir, { recursive: true, force: true });
  }
}, 60_000);
