// `groupq serve` as a process of its own (`node dist/server.js`, built by `npm run build`), for
// the tests and the benchmark: on 127.0.0.1 and a free port, its own origin as its public URL
// (so its callback URLs lead back to it), http endpoints on loopback allowed, the log at warn.
// `settings` add to or override these: the database (REDIS_URL, or UPSTASH_REDIS_REST_*), the
// tokens, GROUPQ_CRON. Resolves once it printed its listening line.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from './redis-server.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const SERVER_JS = path.join(root, 'dist', 'server.js');
/** The command line's bin: `node dist/cli.js serve` is how a user runs the same server. */
export const CLI_JS = path.join(root, 'dist', 'cli.js');
const LISTENING = /^groupq serve: listening on (\S+)$/m;

/**
 * @typedef {object} ServerProcess
 * @property {string} url its origin on loopback, also its GROUPQ_PUBLIC_URL
 * @property {import('node:child_process').ChildProcess} child
 * @property {() => string} output what it wrote so far, stdout and stderr together
 * @property {Promise<{ code: number | null, signal: NodeJS.Signals | null }>} exited
 * @property {() => Promise<{ code: number | null, signal: NodeJS.Signals | null }>} stop SIGTERM, then the exit (SIGKILL after 30 s)
 */

/**
 * @param {Record<string, string>} settings
 * @param {{ node?: string, args?: string[], startTimeoutMs?: number }} [options] `node`: the binary
 *   (test/node-versions); `args`: what it runs, [SERVER_JS] unless [CLI_JS, 'serve'] say
 * @returns {Promise<ServerProcess>}
 */
export async function startServerProcess(settings, { node = process.execPath, args = [SERVER_JS], startTimeoutMs = 30_000 } = {}) {
  // freePort() frees the port before the server binds it: another process may take it meanwhile.
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnPort(await freePort(), settings, [node, ...args], startTimeoutMs);
    } catch (error) {
      if (attempt === 3 || !/EADDRINUSE/.test(String(error))) throw error;
    }
  }
}

/**
 * @param {number} port
 * @param {Record<string, string>} settings
 * @param {string[]} command the binary, then its arguments
 * @param {number} startTimeoutMs
 * @returns {Promise<ServerProcess>}
 */
function startOnPort(port, settings, command, startTimeoutMs) {
  const url = `http://127.0.0.1:${port}`;
  const env = {
    PATH: process.env.PATH,
    HOST: '127.0.0.1',
    PORT: String(port),
    GROUPQ_PUBLIC_URL: url,
    GROUPQ_ALLOW_HTTP_LOOPBACK: 'true',
    GROUPQ_SCHEDULER_STAY_MS: '0',
    GROUPQ_SCRIPT_KEY_LOCKING: 'false',
    GROUPQ_LOG_LEVEL: 'warn',
    ...settings,
  };
  const child = spawn(command[0] ?? process.execPath, command.slice(1), { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  let listening = false;
  /** @type {ServerProcess['exited']} */
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => fail(new Error(`groupq serve did not start within ${startTimeoutMs} ms:\n${output}`)), startTimeoutMs);
    /** @param {Error} error */
    const fail = (error) => {
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(error);
    };
    const onData = (/** @type {string} */ chunk) => {
      output += chunk;
      // Once it listens, the rest is kept: looking through a long log on each chunk would cost.
      if (listening || !LISTENING.test(output)) return;
      listening = true;
      clearTimeout(timer);
      resolve({
        url,
        child,
        output: () => output,
        exited,
        async stop() {
          if (child.exitCode !== null || child.signalCode !== null) return exited;
          child.kill('SIGTERM');
          const killer = setTimeout(() => child.kill('SIGKILL'), 30_000);
          const result = await exited;
          clearTimeout(killer);
          return result;
        },
      });
    };
    child.stdout.setEncoding('utf8').on('data', onData);
    child.stderr.setEncoding('utf8').on('data', onData);
    child.once('exit', () => fail(new Error(`groupq serve exited before it listened:\n${output}`)));
  });
}
