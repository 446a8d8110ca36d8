// The dev ticker: stands in for Cloudflare's cron, which nothing fires locally. Every `everyMs` it
// fires the Worker's scheduled handler (`fire`, dev-worker.mjs's scheduled()), one run at a time:
// the next tick starts only after the previous one ended. Failures are reported once when they
// start and once when ticks work again, so a Worker that is down for a while does not flood the
// terminal.

const TICK_TIMEOUT_MS = 30_000;

/**
 * @param {{ fire: () => Promise<void>, everyMs: number, log: (line: string) => void }} options
 */
export function startTicker({ fire, everyMs, log }) {
  /** @type {NodeJS.Timeout | undefined} */
  let timer;
  /** @type {Promise<void> | null} */
  let inFlight = null;
  let stopped = false;
  let failing = false;
  let failures = 0;

  async function tick() {
    const startedAt = Date.now();
    /** @type {NodeJS.Timeout | undefined} */
    let timeout;
    try {
      await Promise.race([
        fire(),
        new Promise((_, reject) => {
          timeout = setTimeout(() => reject(new Error(`no end within ${TICK_TIMEOUT_MS} ms`)), TICK_TIMEOUT_MS);
        }),
      ]);
      if (failing) log(`scheduler tick works again (after ${failures} failed ticks)`);
      failing = false;
      failures = 0;
    } catch (err) {
      if (stopped) return;
      failures++;
      if (!failing) log(`scheduler tick failed: ${/** @type {Error} */ (err).message} (reported again once it recovers)`);
      failing = true;
    } finally {
      clearTimeout(timeout);
    }
    if (stopped) return;
    // Keeps the rhythm: a slow tick shortens the pause after it, never overlaps the next one.
    timer = setTimeout(run, Math.max(0, everyMs - (Date.now() - startedAt)));
  }

  function run() {
    inFlight = tick();
  }

  timer = setTimeout(run, everyMs);
  return {
    /** Stops ticking; resolves once the run in flight (if any) ended. */
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await inFlight;
    },
  };
}
