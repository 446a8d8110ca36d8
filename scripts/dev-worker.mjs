// The Worker for `npm run dev`: workerd under Miniflare in this process, the way the tests and
// the benchmark run it (worker-stack.mjs), on 127.0.0.1:<port>. Not `wrangler dev`: its proxy (a
// second workerd in front of the Worker, an inspector relay, a request log that goes through
// wrangler's Node process) cost more than twice the Worker's own CPU and held requests for seconds
// while a burst drained (docs/local-development.md#why-not-wrangler-dev). What wrangler dev gave
// us is kept: the bundle as wrangler builds it, wrangler.toml's [assets], a way to fire the cron
// trigger (scheduled(), for the dev ticker), an access log, and a reload when a file under src/ or
// public/ changes. Bindings go to workerd in its config, never on a command line.
import net from 'node:net';
import path from 'node:path';
import { Log, LogLevel, Miniflare } from 'miniflare';
import { reloadOnChange } from './dev-reload.mjs';
import { ASSETS, bundleWorker, COMPATIBILITY_DATE, DURABLE_OBJECTS, WORKER_NAME, fireScheduled } from './worker-stack.mjs';

/** Lines that say nothing to a groupq developer: the health probe's access log, Miniflare's ready
 * line (we print ours once /health answers) and its count of _headers rules. */
const NOISE = [/^(GET|HEAD) \/health\b/, /^(Updated and )?[Rr]eady on /, /^✨ Parsed \d+ valid header rules/];
// eslint-disable-next-line no-control-regex
const ANSI = /\u001b\[[0-9;]*m/g;

/** Miniflare's log, without its tags and the stack's own requests, on our prefixed printer. */
class DevLog extends Log {
  /** @param {(line: string) => void} print */
  constructor(print) {
    super(LogLevel.INFO, { prefix: '' });
    this.print = print;
  }

  /** @param {string} message */
  log(message) {
    const plain = message.replace(ANSI, '').replace(/^\[(inf|info)\] /, '');
    if (NOISE.some((pattern) => pattern.test(plain))) return;
    this.print(plain);
  }
}

/**
 * Resolves when nothing listens on 127.0.0.1:<port>: a stale server there would answer our
 * health probe.
 * @param {number} port
 */
function assertPortFree(port) {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', (err) => reject(new Error(`PORT ${port} is not free on 127.0.0.1 (${/** @type {NodeJS.ErrnoException} */ (err).code}); set PORT to another port`)));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(undefined)));
  });
}

/**
 * Prints a workerd output stream line by line (the Worker's console.log and errors).
 * @param {import('node:stream').Readable} stream
 * @param {(line: string) => void} print
 */
function followLines(stream, print) {
  let pending = '';
  stream.setEncoding('utf8');
  stream.on('data', (/** @type {string} */ chunk) => {
    const lines = (pending + chunk).split('\n');
    pending = lines.pop() ?? '';
    for (const line of lines) if (line.trim()) print(line);
  });
}

/**
 * Runs `start` and then removes the SIGINT/SIGTERM listeners it added. Miniflare's exit the
 * process at once (after killing workerd), before npm run dev has stopped its other services
 * (dev.mjs's own listeners do that, the Worker among them). Its `exit` hook, which kills workerd
 * however the process ends, stays.
 * @template T
 * @param {() => Promise<T>} start
 * @returns {Promise<T>}
 */
async function keepingSignals(start) {
  /** @type {NodeJS.Signals[]} */
  const signals = ['SIGINT', 'SIGTERM'];
  const before = signals.map((signal) => process.listeners(signal));
  try {
    return await start();
  } finally {
    signals.forEach((signal, i) => {
      for (const listener of process.listeners(signal)) if (!before[i]?.includes(listener)) process.off(signal, listener);
    });
  }
}

/** @param {number} ms */
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms).unref());

/**
 * Starts the Worker and resolves once GET /health answers {"ok":true}.
 * @param {{
 *   port: number,
 *   bindings: Record<string, string>,
 *   log: (line: string) => void,
 *   cwd: string,
 *   signal?: AbortSignal,
 *   startTimeoutMs?: number,
 * }} options `cwd`: the repository (its src/ and public/ are watched)
 */
export async function startDevWorker({ port, bindings, log, cwd, signal, startTimeoutMs = 60_000 }) {
  await assertPortFree(port);
  /** @param {string} code */
  const optionsFor = (code) => ({
    modules: [{ type: /** @type {const} */ ('ESModule'), path: 'index.mjs', contents: code }],
    compatibilityDate: COMPATIBILITY_DATE,
    assets: ASSETS,
    name: WORKER_NAME,
    // The event hub, as wrangler.toml declares it (worker-stack.mjs DURABLE_OBJECTS).
    durableObjects: DURABLE_OBJECTS,
    host: '127.0.0.1',
    port,
    bindings,
    // The placeholder Request.cf: no fetch of Cloudflare's (this machine may have no internet).
    cf: false,
    log: new DevLog(log),
    handleRuntimeStdio(/** @type {import('node:stream').Readable} */ stdout, /** @type {import('node:stream').Readable} */ stderr) {
      followLines(stdout, log);
      followLines(stderr, log);
    },
  });
  const code = await bundleWorker();
  /** @type {Miniflare | undefined} */
  let started;
  const mf = await keepingSignals(async () => {
    started = new Miniflare(optionsFor(code));
    await started.ready;
    return started;
  }).catch(async (error) => {
    await started?.dispose().catch(() => {});
    throw error;
  });
  /** @type {Promise<void> | undefined} */
  let disposed;
  const dispose = () => (disposed ??= mf.dispose().catch(() => {}));

  // A change under src/ or public/ rebuilds the bundle and swaps it in; a build error is printed
  // and the running Worker kept.
  const watcher = reloadOnChange(cwd, async () => {
    try {
      const next = await bundleWorker();
      await keepingSignals(() => mf.setOptions(optionsFor(next)));
      log('reloaded after a change under src/ or public/');
    } catch (error) {
      log(`reload failed, the Worker runs the code it had: ${/** @type {Error} */ (error).message}`);
    }
  });

  async function stop() {
    await watcher.stop();
    await dispose();
  }

  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + startTimeoutMs;
  let last = 'no answer yet';
  for (;;) {
    if (signal?.aborted) {
      await stop();
      throw new Error('stopped while the Worker was starting');
    }
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`the Worker did not answer GET /health with {"ok":true} within ${startTimeoutMs} ms (last: ${last})`);
    }
    try {
      const res = await fetch(`${url}/health`, { signal: AbortSignal.timeout(5000) });
      const text = await res.text();
      last = `${res.status} ${text.slice(0, 200)}`;
      if (res.ok && /** @type {{ ok?: unknown }} */ (JSON.parse(text)).ok === true) break;
    } catch (err) {
      last = /** @type {Error} */ (err).message;
    }
    await sleep(250);
  }

  return {
    url,
    /** Fires the cron trigger; resolves when the scheduled handler ended, rejects when it threw. */
    scheduled: () => fireScheduled(mf),
    stop,
    /** workerd runs under this process: it ends with it, or when stop() ran. */
    exited: new Promise(() => {}),
  };
}
