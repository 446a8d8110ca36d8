// The tarball as a user gets it from `npm pack` in a clone (README.md#install-the-client-and-receiver): it ships
// dist/, docs/, README.md, LICENSE and package.json and nothing else, and installed into a
// fresh project its `groupq/client`, `groupq/receiver` and `groupq` bin (`groupq serve` too) work there. The pack skips
// `prepare` because test/global-setup.ts has already built dist/ with `npm run build`'s code (a
// rebuild here would rewrite dist/ under the tests that read it at the same time).
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, startRedis } from '../../scripts/redis-server.mjs';
import { startServerProcess } from '../../scripts/server-process.mjs';

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, '../..');
// What npm adds to `files` by itself: package.json, README.md and LICENSE.
const always = ['LICENSE', 'README.md', 'package.json'];

let dir: string;
let project: string;
let shipped: string[];
let tarball: string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'groupq-packed-'));
  const { stdout } = await run('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', dir], { cwd: root });
  const [{ filename, files }] = JSON.parse(stdout) as [{ filename: string; files: { path: string }[] }];
  shipped = files.map((f) => f.path).sort();
  tarball = filename;
  // A fresh project outside the repository, so nothing resolves from its node_modules/. Zod comes
  // from npm's cache when it is there (as after `npm ci`), else from the registry.
  project = path.join(dir, 'consumer');
  await mkdir(project);
  await writeFile(path.join(project, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
  await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', path.join(dir, filename)], { cwd: project });
}, 180_000);

afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('the packed groupq package', () => {
  it('ships dist/, docs/, the README, the LICENSE and package.json, nothing else', async () => {
    expect(shipped.filter((p) => !p.startsWith('dist/') && !p.startsWith('docs/') && !always.includes(p))).toEqual([]);
    expect(shipped).toEqual(expect.arrayContaining([
      ...always, 'dist/client.js', 'dist/receiver.js', 'dist/cli.js',
      'dist/types/client/index.d.ts', 'dist/types/receiver/index.d.ts',
    ]));
    // Every page of docs/, so README.md's links work in node_modules/groupq too.
    const docs = (await readdir(path.join(root, 'docs'))).map((f) => `docs/${f}`);
    expect(shipped).toEqual(expect.arrayContaining(docs));
  });

  it('is the file the README installs', async () => {
    const readme = await readFile(path.join(root, 'README.md'), 'utf8');
    expect(readme).toContain(`npm ci && npm pack\n`);
    expect(readme).toContain(`npm install ./${tarball}\n`);
  });

  it('ships the MIT LICENSE that package.json names', async () => {
    const pkg = JSON.parse(await readFile(path.join(project, 'node_modules/groupq/package.json'), 'utf8')) as { license: string };
    expect(pkg.license).toBe('MIT');
    const license = await readFile(path.join(project, 'node_modules/groupq/LICENSE'), 'utf8');
    expect(license).toMatch(/^MIT License\n\nCopyright \(c\) 2026 the groupq authors\n/);
  });

  it('types the package root as the client, and takes any zod 4 from the one the lockfile has on', async () => {
    const pkg = JSON.parse(await readFile(path.join(root, 'package.json'), 'utf8')) as {
      types: string;
      exports: { './client': { types: string } };
      dependencies: { zod: string };
    };
    expect(pkg.types).toBe(pkg.exports['./client'].types);
    const lock = JSON.parse(await readFile(path.join(root, 'package-lock.json'), 'utf8')) as {
      packages: Record<string, { version: string }>;
    };
    // A caret range, so a project on a newer zod 4 installs one copy, not a second for groupq.
    expect(pkg.dependencies.zod).toBe(`^${lock.packages['node_modules/zod']!.version}`);
    expect(pkg.dependencies.zod).toMatch(/^\^4\./);
  });

  it('loads groupq/client and groupq/receiver in the project it is installed in', async () => {
    const code = [
      "const client = await import('groupq/client');",
      "const receiver = await import('groupq/receiver');",
      "console.log(typeof client.GroupqClient, typeof receiver.createHandler, typeof receiver.verifyDelivery);",
    ].join('\n');
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', code], { cwd: project });
    expect(stdout.trim()).toBe('function function function');
  });

  it('runs `groupq serve` there: the Node server with its dashboard, on a Redis over TCP', async () => {
    const redis = await startRedis({ port: await freePort(), dir: path.join(dir, 'redis'), appendonly: false });
    const cli = path.join(project, 'node_modules', 'groupq', 'dist', 'cli.js');
    const settings = { REDIS_URL: `redis://127.0.0.1:${redis.port}`, GROUPQ_ADMIN_TOKEN: 'packed-admin-token-0123', GROUPQ_SIGNING_SECRET: `whsec_${Buffer.from('packed-signing-secret-0123456789').toString('base64')}` };
    const server = await startServerProcess(settings, { args: [cli, 'serve'] });
    try {
      expect(await (await fetch(`${server.url}/health`)).json()).toEqual({ ok: true, redis: 'ok' });
      const page = await fetch(`${server.url}/dashboard`);
      expect(page.status).toBe(200);
      expect(page.headers.get('content-security-policy')).toContain("default-src 'none'");
    } finally {
      expect(await server.stop()).toEqual({ code: 0, signal: null });
      await redis.stop();
    }
  });

  it('runs `npx groupq --help` there', async () => {
    // As README.md writes it: the bin is installed, so npx runs it and fetches nothing.
    const { stdout } = await run('npx', ['groupq', '--help'], { cwd: project });
    expect(stdout).toMatch(/^groupq: manage groupq queues from a terminal\n/);
    expect(stdout).toContain('Usage: groupq <command>');
  });
});
