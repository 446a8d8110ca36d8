#!/usr/bin/env node
// Bundles the dashboard (src/dashboard: index.html, style.css, app.ts and the GroupqClient it
// imports) into public/dashboard/ (index.html, app.css, app.js): Workers static assets, uploaded
// beside the Worker by `wrangler deploy` and served from public/ by `wrangler dev` and the tests'
// Miniflare (wrangler.toml [assets]). They are committed, as the Lua bundle is: a fresh clone
// serves them with no build step. Their headers (CSP, nosniff, no-referrer, no-cache) are in
// public/_headers. `--check` fails when a file is stale (npm test runs it).
import { mkdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, transform } from 'esbuild';
import { writeOrCheck } from './generated-file.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dir = join(root, 'src', 'dashboard');
const outDir = join(root, 'public', 'dashboard');

// Relative paths and a fixed working directory: the output must not depend on where the
// repository lives, or --check would fail on every other machine.
const bundle = await build({
  absWorkingDir: root,
  entryPoints: ['src/dashboard/app.ts'],
  tsconfig: 'src/dashboard/tsconfig.json',
  bundle: true,
  write: false,
  format: 'esm',
  platform: 'browser',
  target: ['es2022', 'chrome109', 'firefox115', 'safari16'],
  minify: true,
  legalComments: 'none',
  logLevel: 'error',
});
const files = {
  'index.html': readFileSync(join(dir, 'index.html'), 'utf8'),
  'app.css': (await transform(readFileSync(join(dir, 'style.css'), 'utf8'), { loader: 'css', minify: true })).code,
  'app.js': bundle.outputFiles[0].text,
};

if (!process.argv.includes('--check')) mkdirSync(outDir, { recursive: true });
for (const [name, body] of Object.entries(files)) {
  writeOrCheck(join(outDir, name), body, { what: `public/dashboard/${name}`, rebuild: 'npm run build:dashboard', summary: `${body.length} B` });
}
