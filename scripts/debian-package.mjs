// A program the dev stack or the tests need, found on PATH, or installed from Debian's package
// when it is missing, apt-get exists and we are root (a fresh Debian machine or container, as in
// CI): redis-server for both, chromium for the browser tests.
import { spawnSync } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import path from 'node:path';

/**
 * @param {string} name
 * @returns {string | null} absolute path of an executable on PATH
 */
export function which(name) {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not in this directory
    }
  }
  return null;
}

let aptUpdated = false;

/**
 * @param {string[]} args
 * @param {string} hint
 */
function runApt(args, hint) {
  process.stderr.write(`groupq: running apt-get ${args.join(' ')}\n`);
  const result = spawnSync('apt-get', args, {
    stdio: ['ignore', process.stderr, process.stderr],
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
  });
  if (result.status !== 0) throw new Error(`apt-get ${args.join(' ')} failed (exit ${result.status ?? result.signal}); ${hint}`);
}

/**
 * Finds `binary` on PATH; installs Debian's package `pkg` when it is missing and apt can.
 * Otherwise throws an Error whose message is `hint`, a one-line install hint.
 * @param {{ binary: string, pkg: string, hint: string }} program
 * @returns {string} path of the binary
 */
export function ensureProgram({ binary, pkg, hint }) {
  const found = which(binary);
  if (found) return found;
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  if (!isRoot || !which('apt-get')) throw new Error(hint);
  process.stderr.write(`groupq: ${binary} is missing; installing it with apt-get\n`);
  if (!aptUpdated) {
    runApt(['update'], hint);
    aptUpdated = true;
  }
  runApt(['install', '-y', '--no-install-recommends', pkg], hint);
  const installed = which(binary);
  if (!installed) throw new Error(hint);
  return installed;
}
