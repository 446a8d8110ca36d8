// The package as users install it: `exports` resolve by name (self-reference) to the dist/
// that test/global-setup.ts built with `npm run build`'s code, types included; the client
// loads with no imports (browsers); the bin runs. What `npm pack` ships, installed: packed.test.ts.
import { execFile } from 'node:child_process';
import { readFile, readdir } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, '../..');

async function node(code: string): Promise<string> {
  const { stdout } = await run(process.execPath, ['--input-type=module', '-e', code], { cwd: root });
  return stdout.trim();
}

describe('the groupq package', () => {
  it('resolves groupq/client and groupq/receiver by name from the project root', async () => {
    expect(await node("const m = await import('groupq/client'); console.log(Object.keys(m).sort().join())")).toBe(
      'GroupqClient,GroupqError,PagedList,QueueClient,followEventsUrl',
    );
    const receiver = (await node("console.log(Object.keys(await import('groupq/receiver')).sort().join())")).split(',');
    expect(receiver).toEqual(expect.arrayContaining(['createHandler', 'verifyDelivery', 'NonRetryableError', 'RetryAfterError']));
  });

  it('builds a client with no imports, so a browser can load dist/client.js as it is', async () => {
    const source = await readFile(path.join(root, 'dist/client.js'), 'utf8');
    expect(source).not.toMatch(/^\s*import\b|\bimport\s*\(|\brequire\s*\(/m);
  });

  it('types user code through the exports map (the data generic and the zod input types)', async () => {
    const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
    const project = path.join(root, 'test/package/fixtures/tsconfig.json');
    const result = await run(process.execPath, [tsc, '-p', project], { cwd: root }).then(
      ({ stdout }) => stdout,
      (error: { stdout: string }) => error.stdout,
    );
    expect(result).toBe('');
  });

  it('runs the groupq bin', async () => {
    const { version } = JSON.parse(await readFile(path.join(root, 'package.json'), 'utf8')) as { version: string };
    const { stdout } = await run(process.execPath, [path.join(root, 'dist/cli.js'), '--version'], { cwd: root });
    expect(stdout.trim()).toContain(version);
  });

  it('depends on exactly the packages its shipped files import (the Worker is deployed from the repository)', async () => {
    const { dependencies = {} } = JSON.parse(await readFile(path.join(root, 'package.json'), 'utf8')) as {
      dependencies?: Record<string, string>;
    };
    const shipped = (await readdir(path.join(root, 'dist'), { recursive: true })).filter((f) => /\.(js|d\.ts)$/.test(f));
    const imported = new Set<string>();
    const add = (specifier: string) => {
      if (specifier.startsWith('node:') || specifier.startsWith('.')) return;
      const parts = specifier.split('/');
      imported.add(specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]!);
    };
    for (const file of shipped.filter((f) => f.endsWith('.d.ts'))) {
      const source = await readFile(path.join(root, 'dist', file), 'utf8');
      for (const [, specifier = ''] of source.matchAll(/\b(?:from|import)\s*\(?\s*["']([^"'\s]+)["']/g)) add(specifier);
    }
    // The bundles' imports as esbuild reads them (the server's bundle quotes import lines in its comments).
    const scan = await build({
      entryPoints: shipped.filter((f) => !f.endsWith('.d.ts')).map((f) => path.join(root, 'dist', f)),
      bundle: true, write: false, metafile: true, packages: 'external', platform: 'node', format: 'esm', outdir: 'scan', logLevel: 'error',
    });
    for (const output of Object.values(scan.metafile.outputs)) for (const { path: specifier, external } of output.imports) if (external) add(specifier);
    expect([...imported].sort()).toEqual(Object.keys(dependencies).sort());
  });
});
