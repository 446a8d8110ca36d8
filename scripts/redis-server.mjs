// Starts and stops a local redis-server (the one on PATH; Debian's package when apt can install
// it). Used by `npm run dev` and by the test setup.
import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { ensureProgram } from './debian-package.mjs';
import net from 'node:net';
import path from 'node:path';
import { createRespClient, RespError, Status } from './resp.mjs';

const INSTALL_HINT =
  'redis-server not found on PATH: install it (Debian/Ubuntu: sudo apt-get install -y redis-server; macOS: brew install redis) and retry';
const OUTPUT_TAIL_BYTES = 4096;

/**
 * Finds redis-server on PATH; installs Debian's package when it is missing, apt-get exists and
 * we are root. Otherwise throws an Error whose message is a one-line install hint.
 * @returns {string} path of the redis-server binary
 */
export function ensureRedisServer() {
  return ensureProgram({ binary: 'redis-server', pkg: 'redis-server', hint: INSTALL_HINT });
}

/**
 * Resolves with a TCP port that was free a moment ago on 127.0.0.1.
 * @returns {Promise<number>}
 */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/**
 * Resolves with `value` after `ms`, without keeping the process alive.
 * @template T
 * @param {number} ms
 * @param {T} [value]
 * @returns {Promise<T | undefined>}
 */
const sleep = (ms, value) => new Promise((resolve) => setTimeout(resolve, ms, value).unref());

/**
 * Starts redis-server on 127.0.0.1:<port> with its data in `dir` and waits until it answers PING.
 * `appendfsync: 'always'` fsyncs the AOF before each reply, so even a slow disk cannot leave an
 * acknowledged write only in memory when the process dies. An aborted `signal` ends the startup:
 * the process is killed and awaited, then the call throws.
 * @param {{
 *   port: number,
 *   dir: string,
 *   appendonly?: boolean,
 *   appendfsync?: 'everysec' | 'always',
 *   startTimeoutMs?: number,
 *   signal?: AbortSignal,
 * }} options
 */
export async function startRedis({ port, dir, appendonly = true, appendfsync = 'everysec', startTimeoutMs = 15_000, signal }) {
  const bin = ensureRedisServer();
  const dataDir = path.resolve(dir);
  mkdirSync(dataDir, { recursive: true });
  const args = [
    '--port', String(port),
    '--bind', '127.0.0.1',
    '--dir', dataDir,
    '--appendonly', appendonly ? 'yes' : 'no',
    '--appendfsync', appendfsync,
    '--save', '',
    '--daemonize', 'no',
    '--protected-mode', 'no',
    '--logfile', '',
  ];
  // detached: a terminal's Ctrl-C reaches our process, which then stops Redis in order.
  const child = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let output = '';
  /** @param {Buffer} chunk */
  const keepTail = (chunk) => {
    output = (output + chunk.toString('utf8')).slice(-OUTPUT_TAIL_BYTES);
  };
  child.stdout.on('data', keepTail);
  child.stderr.on('data', keepTail);

  /** @type {Promise<{ code: number | null, signal: NodeJS.Signals | null }>} */
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  let hasExited = false;
  void exited.then(() => {
    hasExited = true;
    process.removeListener('exit', killOnExit);
  });
  // Last resort when our process exits without stopping Redis (crash, process.exit).
  function killOnExit() {
    child.kill('SIGKILL');
  }
  process.once('exit', killOnExit);

  const fail = async (/** @type {string} */ reason) => {
    if (!hasExited) {
      child.kill('SIGKILL');
      await exited;
    }
    const tail = output.trim().split('\n').slice(-5).join('\n');
    return new Error(`redis-server on port ${port} ${reason}${tail ? `:\n${tail}` : ''}`);
  };

  const deadline = Date.now() + startTimeoutMs;
  for (;;) {
    if (signal?.aborted) throw await fail('was stopped while starting');
    if (hasExited) throw await fail('exited during startup');
    if (Date.now() > deadline) throw await fail(`did not answer PING within ${startTimeoutMs} ms`);
    const probe = createRespClient({ port });
    try {
      const pong = await probe.call(['PING']);
      // Another server may already hold the port: make sure the one answering is ours.
      const info = String(await probe.call(['INFO', 'server']));
      if (pong instanceof Status && info.includes(`process_id:${child.pid}\r\n`)) break;
    } catch {
      // not listening yet, or still loading its data
    } finally {
      probe.close();
    }
    await sleep(50);
  }

  /** @param {number} ms resolves true when Redis exits within `ms` */
  const exitsWithin = (ms) => Promise.race([exited.then(() => true), sleep(ms, false)]);

  /** Shuts Redis down (SHUTDOWN, then SIGTERM, then SIGKILL) and resolves when it exited. */
  async function stop() {
    if (hasExited) return;
    const client = createRespClient({ port });
    // SHUTDOWN answers by closing the connection; an error reply means it refused to stop.
    const shutdown = client.call(['SHUTDOWN']).then(
      () => 'closed',
      (err) => (err instanceof RespError ? 'refused' : 'closed'),
    );
    const outcome = await Promise.race([shutdown, sleep(5000, 'no answer')]);
    client.close();
    if (outcome === 'closed' && (await exitsWithin(5000))) return;
    child.kill('SIGTERM');
    if (await exitsWithin(3000)) return;
    child.kill('SIGKILL');
    await exited;
  }

  return {
    port,
    dir: dataDir,
    stop,
    process: child,
    /** Resolves with the exit code or signal once the process ended. */
    exited,
    /** The last few KB of the server's log output. */
    output: () => output,
  };
}

/** @typedef {Awaited<ReturnType<typeof startRedis>>} RedisServer */
