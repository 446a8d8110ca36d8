// Keeps the redis-server that `npm run dev` started running. When it exits on its own (a crash,
// a SIGKILL, the OOM killer), it is started again on the same port with the same data dir and
// appendonly on, so it reloads every acknowledged write from its AOF; meanwhile the bridge
// answers 500 and the Worker 503 REDIS_UNAVAILABLE, and leases whose outcome was lost expire and
// are retried (G3). Restarts back off (restartDelayMs, doubling up to RESTART_MAX_DELAY_MS) so a
// Redis that dies at once again does not spin, and the delay starts over once Redis has stayed
// up for STABLE_AFTER_MS. Each exit and each restart is one line through `log`.
// Once `signal` aborts or stop() runs, nothing is restarted any more: a pending restart is
// cancelled, and one in progress is killed and awaited, so no redis-server outlives the stack.
import { startRedis } from './redis-server.mjs';

/** The longest wait between two restarts. */
const RESTART_MAX_DELAY_MS = 5000;
/** A Redis up this long is healthy again: its next crash restarts after the first delay. */
const STABLE_AFTER_MS = 30_000;
/**
 * Starts in a row that may fail (the port taken by another server, an AOF Redis refuses to
 * load) before giving up: then the stack stops with the reason, as it did before supervision.
 */
const MAX_FAILED_STARTS = 10;

/**
 * Resolves after `ms`, or as soon as `signal` aborts.
 * @param {number} ms
 * @param {AbortSignal} signal
 */
function pause(ms, signal) {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve(undefined);
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve(undefined);
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}

/**
 * One line out of startRedis' error: what happened, then the server's last log line.
 * @param {Error} err
 */
function oneLine(err) {
  const [what = '', ...tail] = err.message.split('\n');
  return tail.length > 0 ? `${what.replace(/:$/, '')}: ${tail[tail.length - 1]?.trim()}` : what;
}

/**
 * @param {{ code: number | null, signal: NodeJS.Signals | null }} exit
 * @param {string} output the server's last log output
 */
function describeExit({ code, signal }, output) {
  if (signal) return `signal ${signal}`;
  // A Redis that stops by itself says why in its last log line ("Fatal error loading the DB ...").
  const last = output.trim().split('\n').pop()?.trim();
  return `code ${code}${last ? `; its last log line: ${last}` : ''}`;
}

/**
 * Starts redis-server (see startRedis) and supervises it.
 * @param {{
 *   port: number,
 *   dir: string,
 *   log: (line: string) => void,
 *   restartDelayMs?: number,
 *   signal?: AbortSignal,
 * }} options `restartDelayMs`: the wait before the first restart (default 100)
 */
export async function superviseRedis({ port, dir, log, restartDelayMs = 100, signal }) {
  // Aborted by the caller's signal (shutdown began) or by stop(): ends waits and startups alike.
  const halt = new AbortController();
  const onAbort = () => halt.abort();
  signal?.addEventListener('abort', onAbort, { once: true });
  if (signal?.aborted) halt.abort();

  // appendfsync always: a SIGKILL then loses no write Redis acknowledged, even with a busy disk
  // (with everysec Redis may reply while a write still waits in its buffer). It costs about a
  // millisecond per write here, which `wrangler dev` (~100 requests/s) never notices.
  const start = () => startRedis({ port, dir, appendonly: true, appendfsync: 'always', signal: halt.signal });

  /** @typedef {import('./redis-server.mjs').RedisServer} RedisServer */
  /** The running server; null while it is down. @type {RedisServer | null} */
  let current = await start();
  /** A restart in progress, awaited by stop(). */
  let starting = Promise.resolve();
  /** @type {(reason: string) => void} */
  let giveUp = () => {};
  /** @type {Promise<string>} */
  const exited = new Promise((resolve) => (giveUp = resolve));

  /**
   * Starts Redis again after `delayMs`, retrying with backoff while the start fails.
   * @param {number} delayMs
   * @returns {Promise<{ server: RedisServer, nextDelayMs: number } | null>} the new server and
   *   the wait before the restart after it; null when halted or given up
   */
  async function restart(delayMs) {
    for (let failed = 0; ; ) {
      await pause(delayMs, halt.signal);
      if (halt.signal.aborted) return null;
      const nextDelayMs = Math.min(delayMs * 2, RESTART_MAX_DELAY_MS);
      try {
        const server = await start();
        // It answered PING just as stopping began: not a restart to announce, nor to keep.
        if (halt.signal.aborted) {
          await server.stop();
          return null;
        }
        current = server;
        log(`redis-server restarted (pid ${server.process.pid}) on 127.0.0.1:${port}, its data reloaded from its AOF`);
        return { server, nextDelayMs };
      } catch (err) {
        if (halt.signal.aborted) return null;
        if (++failed >= MAX_FAILED_STARTS) {
          giveUp(`could not be restarted (${failed} tries): ${/** @type {Error} */ (err).message}`);
          return null;
        }
        delayMs = nextDelayMs;
        log(`redis-server did not start again (${oneLine(/** @type {Error} */ (err))}); next try in ${delayMs} ms`);
      }
    }
  }

  void (async function watch(/** @type {RedisServer} */ server) {
    let delayMs = restartDelayMs;
    for (;;) {
      const startedAt = Date.now();
      const exit = await server.exited;
      if (halt.signal.aborted) return;
      current = null;
      if (Date.now() - startedAt >= STABLE_AFTER_MS) delayMs = restartDelayMs;
      log(`redis-server (pid ${server.process.pid}) exited unexpectedly (${describeExit(exit, server.output())}); restarting it in ${delayMs} ms`);
      const restarting = restart(delayMs);
      starting = restarting.then(() => {});
      const restarted = await restarting;
      if (!restarted) return;
      ({ server, nextDelayMs: delayMs } = restarted);
    }
  })(current);

  return {
    port,
    dir,
    /** Resolves with a reason only when Redis could not be restarted (never after stop()). */
    exited,
    /** Cancels any restart, then shuts the running Redis down; resolves when none is left. */
    async stop() {
      halt.abort();
      signal?.removeEventListener('abort', onAbort);
      await starting;
      await current?.stop();
    },
  };
}
