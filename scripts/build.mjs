#!/usr/bin/env node
// `npm run build`: the package's dist/ from the same sources the Worker runs.
//   dist/client.js    groupq/client: ESM with no imports at all, so a browser can load it as is
//   dist/receiver.js  groupq/receiver: ESM for any Fetch-API runtime (zod stays a dependency)
//   dist/cli.js       the `groupq` bin, for Node
//   dist/server.js    the Node server (`groupq serve`), with dist/public/: the dashboard's files
//   dist/types/       .d.ts for client and receiver, emitted by tsc (tsconfig.build.json)
// test/global-setup.ts calls `buildPackage()` too (about 2 s), so tests import what users get.
import { build } from 'esbuild';
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(root, 'dist');
const { dependencies } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));

const common = {
  bundle: true,
  format: 'esm',
  target: 'es2022',
  external: Object.keys(dependencies),
  logLevel: 'error',
  metafile: true,
  absWorkingDir: root,
};

async function buildJs() {
  const client = await build({ ...common, entryPoints: ['src/client/index.ts'], outfile: join(dist, 'client.js'), platform: 'neutral' });
  const imports = Object.values(client.metafile.outputs).flatMap((output) => output.imports.filter((i) => !i.path.startsWith('.')));
  if (imports.length > 0) throw new Error(`dist/client.js must not import anything, but imports ${imports.map((i) => i.path).join(', ')}`);
  await build({ ...common, entryPoints: ['src/receiver/index.ts'], outfile: join(dist, 'receiver.js'), platform: 'neutral' });
  await build({
    ...common,
    entryPoints: ['src/cli/index.ts'],
    outfile: join(dist, 'cli.js'),
    platform: 'node',
    target: 'node20',
  });
  // The Node server: hono, @hono/node-server and @upstash/redis inside it (devDependencies of
  // the package), zod outside as everywhere; it must not reach a Worker-only module.
  const server = await build({ ...common, entryPoints: ['src/server/index.ts'], outfile: join(dist, 'server.js'), platform: 'node', target: 'node20' });
  const inputs = Object.keys(server.metafile.inputs);
  const workerOnly = inputs.filter((input) => input.startsWith('cloudflare:') || input.endsWith('src/core/events/hub.ts'));
  if (workerOnly.length > 0) throw new Error(`dist/server.js must not bundle Worker-only modules: ${workerOnly.join(', ')}`);
  // Its static assets (the dashboard, the API reference), as the Worker's come from public/.
  cpSync(join(root, 'public'), join(dist, 'public'), { recursive: true });
}

function buildDeclarations() {
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  execFileSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json')], { stdio: 'inherit' });
  for (const entry of readdirSync(join(dist, 'types'), { recursive: true })) {
    if (entry.endsWith('.d.ts')) addDeclarationExtensions(join(dist, 'types', entry));
  }
}

/**
 * The sources import without extensions (bundler resolution); users on `moduleResolution:
 * nodenext` need './x.js' or './x/index.js' in the .d.ts files, so the specifiers get them here.
 */
function addDeclarationExtensions(file) {
  const source = readFileSync(file, 'utf8');
  const fixed = source.replace(/((?:from|import)\s*\(?\s*')(\.\.?\/[^']*)(')/g, (match, before, specifier, after) => {
    if (specifier.endsWith('.js')) return match;
    const target = join(dirname(file), specifier);
    if (existsSync(`${target}.d.ts`)) return `${before}${specifier}.js${after}`;
    if (existsSync(join(target, 'index.d.ts'))) return `${before}${specifier}/index.js${after}`;
    throw new Error(`${file}: cannot resolve ${specifier}`);
  });
  if (fixed !== source) writeFileSync(file, fixed);
}

export async function buildPackage() {
  await buildJs();
  buildDeclarations();
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  // Only a build by hand starts clean: tests running side by side may be reading dist/.
  rmSync(dist, { recursive: true, force: true });
  await buildPackage();
  console.log('built dist/: client.js, receiver.js, cli.js, server.js, public/, types/');
}
