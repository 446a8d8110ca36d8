// Generated sources are committed (Workers have no filesystem to build from at run time). One
// rule for all of them: write the file, or with `--check` (npm test) fail when it is stale.
import { readFileSync, writeFileSync } from 'node:fs';
import { relative } from 'node:path';

/**
 * @param {string} outFile
 * @param {string} output the file's full new content
 * @param {{ what: string, rebuild: string, summary: string }} about e.g. 'lua bundle',
 *   'npm run build:lua', '26 scripts'
 */
export function writeOrCheck(outFile, output, about) {
  if (!process.argv.includes('--check')) {
    writeFileSync(outFile, output);
    console.log(`wrote ${outFile} (${about.summary})`);
    return;
  }
  let current = '';
  try {
    current = readFileSync(outFile, 'utf8');
  } catch {}
  if (current !== output) {
    console.error(`${relative(process.cwd(), outFile)} is stale: run \`${about.rebuild}\` and commit it.`);
    process.exit(1);
  }
  console.log(`${about.what} up to date (${about.summary})`);
}
