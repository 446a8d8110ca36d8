// The dev ticker: stands in for Cloudflare's cron, which `wrangler dev` never fires. Every
// `everyMs` it requests /__scheduled on the Worker (served because wrangler runs with
// --test-scheduled), one request at a time: the next tick starts only after the previous one
// answered. Failures are reported once when they start and once when ticks work again, so a
// Worker that is down for a while does not flood the terminal.

const TICK_TIMEOUT_MS = 30_000;

/**
 * @param {{ url: string, everyMs: number, log: (line: string) => void }} options
 *   `url`: the Worker's origin, e.g. http://127.0.0.1:8787
 */
export function startTicker({ url, everyMs, log }) {
  const tickUrl = `${url}/__scheduled?cron=*+*+*+*+*`;
  const controller = new AbortController();
  /** @type {NodeJS.Timeout | undefined} */
  let timer;
  /** @type {Promise<void> | null} */
  let inFlight = null;
  let failing = false;
  let failures = 0;

  async function tick() {
    const startedAt = Date.now();
    try {
      const res = await fetch(tickUrl, { signal: AbortSignal.any([controller.signal, AbortSignal.timeout(TICK_TIMEOUT_MS)]) });
      const body = await res.text();
      if (!res.ok) throw new Error(`HTTP ${res.status}: ${body.slice(0, 200)}`);
      if (failing) log(`scheduler tick works again (after ${failures} failed ticks)`);
      failing = false;
      failures = 0;
    } catch (err) {
      if (controller.signal.aborted) return;
      failures++;
      if (!failing) log(`scheduler tick failed: ${/** @type {Error} */ (err).message} (reported again once it recovers)`);
      failing = true;
    }
    if (controller.signal.aborted) return;
    // Keeps the rhythm: a slow tick shortens the pause after it, never overlaps the next one.
    timer = setTimeout(run, Math.max(0, everyMs - (Date.now() - startedAt)));
  }

  function run() {
    inFlight = tick();
  }

  timer = setTimeout(run, everyMs);
  return {
    /** Stops ticking; resolves once the request in flight (if any) ended. */
    async stop() {
      controller.abort();
      clearTimeout(timer);
      await inFlight;
    },
  };
}
