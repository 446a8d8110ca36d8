#!/usr/bin/env node
// Runs a TypeScript entry on Node 20 (which cannot strip types): bundles it with esbuild into
// .cache/ and imports the result, passing the remaining arguments through.
import { build } from 'esbuild';
import { mkdirSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const [entry, ...rest] = process.argv.slice(2);
if (!entry) {
  console.error('usage: node scripts/run-ts.mjs <entry.ts> [args...]');
  process.exit(2);
}
const outDir = resolve('.cache', 'run-ts');
mkdirSync(outDir, { recursive: true });
const outfile = join(outDir, `${basename(entry).replace(/\.ts$/, '')}.mjs`);
// The scripts/*.mjs modules are plain JavaScript and read files next to them (import.meta.url):
// they stay where they are, imported by absolute path, not copied into the bundle.
const keepScriptsInPlace = {
  name: 'keep-scripts-in-place',
  setup(b) {
    b.onResolve({ filter: /\.mjs$/ }, (args) => {
      const path = resolve(args.resolveDir, args.path);
      return path.startsWith(scriptsDir) ? { path, external: true } : undefined;
    });
  },
};
const scriptsDir = resolve('scripts');
await build({
  entryPoints: [entry],
  plugins: [keepScriptsInPlace],
  outfile,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  packages: 'external',
  logLevel: 'error',
});
// argv[1] stays the .ts entry, so bundled modules that check "am I the main script?" say no.
process.argv = [process.argv[0], resolve(entry), ...rest];
await import(pathToFileURL(outfile).href);
