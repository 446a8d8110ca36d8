// Upstash's ceiling on commands per second, emulated by the REST bridge
// (GROUPQ_BRIDGE_MAX_COMMANDS_PER_S): a database serves at most that many commands a second, and
// requests over it wait, as Upstash's do. Commands are counted as Upstash bills them: every
// command a request sends and every command a script runs. Only Redis knows the second kind, so
// after each request the throttle reads INFO commandstats on the bridge's own connection, which
// answers in order: each reading follows the commands of the request before it, and the
// difference between two readings is what ran in between. Its own INFO is not counted (neither
// does the bench, bench/lib/redis-stats.ts), nor CONFIG.
//
// A token bucket: it refills at the cap, holds at most a tenth of a second's worth, and goes
// below zero when a request turns out to cost more than was left. A request starts only once the
// bucket is not below zero, so requests in flight can overshoot by their own cost, never more;
// over any long run the rate is the cap.

/** Commands the counting itself runs. */
const OWN_COMMANDS = new Set(['info', 'config']);
/** The most the bucket holds: this many seconds at the cap. */
const BURST_SECONDS = 0.1;
/** A waiting request looks again at least this often (a test's injected clock may have moved). */
const MAX_WAIT_STEP_MS = 100;

/**
 * Sum of `calls` over INFO commandstats, without the throttle's own commands.
 * @param {string} text
 */
function totalCalls(text) {
  let total = 0;
  for (const line of text.split('\r\n')) {
    const match = /^cmdstat_([^:|]+)[^:]*:calls=(\d+)/.exec(line);
    if (match && !OWN_COMMANDS.has(/** @type {string} */ (match[1]))) total += Number(match[2]);
  }
  return total;
}

/**
 * @param {{
 *   redis: import('./resp.mjs').RespClient,
 *   maxCommandsPerSecond: number,
 *   now?: () => number,
 * }} options `now`: milliseconds, performance.now() unless a test injects a clock
 */
export function createThrottle({ redis, maxCommandsPerSecond, now = () => performance.now() }) {
  if (!Number.isInteger(maxCommandsPerSecond) || maxCommandsPerSecond < 1) {
    throw new Error(`maxCommandsPerSecond must be a positive integer, got ${maxCommandsPerSecond}`);
  }
  const capacity = Math.max(1, maxCommandsPerSecond * BURST_SECONDS);
  let level = capacity;
  let refilledAt = now();
  /** @type {number | null} null until the first reading */
  let lastTotal = null;

  const refill = () => {
    const at = now();
    level = Math.min(capacity, level + ((at - refilledAt) * maxCommandsPerSecond) / 1000);
    refilledAt = at;
  };

  /** Reads the counters; what ran since the last reading is debited. */
  async function read() {
    const total = totalCalls(String(await redis.call(['INFO', 'commandstats'])));
    // CONFIG RESETSTAT (the bench) starts the counters again from zero.
    const ran = lastTotal === null ? 0 : total >= lastTotal ? total - lastTotal : total;
    lastTotal = total;
    refill();
    level -= ran;
  }

  return {
    /** Takes the first reading: commands before it are not the throttle's to count. */
    start: read,
    /** Resolves when a request may start: once the bucket is not below zero. */
    async admit() {
      for (refill(); level < 0; refill()) {
        const waitMs = (-level * 1000) / maxCommandsPerSecond;
        await new Promise((resolve) => setTimeout(resolve, Math.min(Math.max(1, waitMs), MAX_WAIT_STEP_MS)));
      }
    },
    /** Counts what the request that just got its answer ran. */
    settle: read,
  };
}
