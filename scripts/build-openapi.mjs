#!/usr/bin/env node
// `npm run build:openapi`: the OpenAPI 3.1 document of the HTTP API, built from the operations'
// rows (src/handlers/operations.ts) by src/protocol/api/openapi.ts (the zod schemas, zod's own
// JSON Schema output), written to
//   src/protocol/api/openapi.generated.json  what GET /openapi.json serves (src/handlers/pages.ts)
//   public/reference.html                the rendered reference, a static asset at /reference:
//                                        Redoc, built by Redocly CLI with its scripts inline
// `--check` (npm test: `npm run check:openapi`) fails when either is stale.
import { build } from 'esbuild';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { writeOrCheck } from './generated-file.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const documentFile = join(root, 'src', 'protocol', 'api', 'openapi.generated.json');
const referenceFile = join(root, 'public', 'reference.html');

/**
 * The document's builder (src/protocol/api/openapi.ts) and the operations' rows
 * (src/handlers/operations.ts), bundled with esbuild (packages stay imports) and loaded.
 */
async function loadBuilder() {
  const { outputFiles } = await build({
    stdin: {
      contents: "export { openApiDocument } from './src/protocol/api/openapi.ts';\nexport { OPERATIONS } from './src/handlers/operations.ts';\n",
      resolveDir: root,
      loader: 'ts',
    },
    bundle: true,
    write: false,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    absWorkingDir: root,
    logLevel: 'error',
  });
  // Written inside the repository, so that its `zod` import resolves to node_modules.
  const dir = mkdtempSync(join(root, 'node_modules', '.groupq-openapi-'));
  try {
    const file = join(dir, 'openapi.mjs');
    writeFileSync(file, outputFiles[0].text);
    return await import(pathToFileURL(file).href);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Remote loads left in the page: a script, style, image or font from http(s). */
export function remoteLoads(html) {
  const found = [];
  for (const [tag] of html.matchAll(/<(script|link|img|iframe|source|video|audio)\b[^>]*>/gi)) {
    if (/\b(src|href)\s*=\s*["']?(https?:)?\/\//i.test(tag)) found.push(tag);
  }
  for (const [use] of html.matchAll(/(@import\s+|url\()\s*["']?(https?:)?\/\/[^)"'\s]*/gi)) found.push(use);
  for (const [logo] of html.matchAll(/https:\/\/cdn\.redoc\.ly\/[^`"'\s]*/g)) found.push(logo);
  return found;
}

/**
 * The reference page: `redocly build-docs --inlineBundle` embeds Redoc's scripts, with telemetry
 * off. Redoc's sidebar logo is the one thing the page would still load from a CDN: its URLs
 * become an empty inline SVG; and an empty icon keeps browsers from asking for /favicon.ico. Any other remote load fails the build (and test/openapi opens the
 * page in Chromium with the network closed).
 */
function renderReference(documentText) {
  const dir = mkdtempSync(join(tmpdir(), 'groupq-reference-'));
  try {
    const input = join(dir, 'openapi.json');
    const output = join(dir, 'reference.html');
    writeFileSync(input, documentText);
    const cli = createRequire(import.meta.url).resolve('@redocly/cli/bin/cli.js');
    execFileSync(process.execPath, [cli, 'build-docs', input, '--inlineBundle', '--output', output, '--title', 'groupq HTTP API'], {
      cwd: dir,
      env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
      // Its banners go to stderr: shown only when it fails (execFileSync's error carries them).
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    const html = readFileSync(output, 'utf8')
      .replace(/https:\/\/cdn\.redoc\.ly\/redoc\/logo-mini(-full)?\.svg/g, "data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg'/%3E")
      // No icon: a browser would ask the Worker for /favicon.ico, which it does not serve.
      .replace('<head>', '<head>\n  <link rel="icon" href="data:,">');
    const remote = remoteLoads(html);
    if (remote.length > 0) throw new Error(`public/reference.html would load from the network: ${remote.slice(0, 5).join(' ')}`);
    return html;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  const { openApiDocument, OPERATIONS } = await loadBuilder();
  const document = openApiDocument(version, OPERATIONS);
  // Pretty here, for review; the Worker serves it minified.
  const text = `${JSON.stringify(document, null, 2)}\n`;
  const operations = Object.values(document.paths).reduce((n, item) => n + Object.keys(item).length, 0);
  const summary = `${Object.keys(document.paths).length} paths, ${operations} operations, ${JSON.stringify(document).length} bytes minified`;
  writeOrCheck(documentFile, text, { what: 'OpenAPI document', rebuild: 'npm run build:openapi', summary });
  const html = renderReference(text);
  writeOrCheck(referenceFile, html, { what: 'API reference page', rebuild: 'npm run build:openapi', summary: `${html.length} bytes` });
}
