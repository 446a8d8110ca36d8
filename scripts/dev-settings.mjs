// The Worker's optional settings under `npm run dev` (scripts/dev.mjs), read from the environment
// and checked here, so a value the Worker would refuse stops the stack at once with its name
// instead of as a Worker that never turns healthy. Each one the Worker reads
// (src/handlers/settings.ts) is passed on, but GROUPQ_ALLOW_HTTP_LOOPBACK, which the stack keeps
// on for its example endpoint (http on 127.0.0.1); docs/local-development.md lists them.

/**
 * An integer setting in [min, max], `fallback` when unset or empty.
 * @param {NodeJS.ProcessEnv} env
 * @param {string} name
 * @param {number} fallback
 * @param {{ min: number, max: number }} range
 */
export function intFromEnv(env, name, fallback, { min, max }) {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new Error(`${name} must be an integer in [${min}, ${max}], got "${raw}"`);
  }
  return value;
}

/** The Worker's log levels (src/core/log.ts LOG_LEVELS). */
const LOG_LEVELS = ['debug', 'info', 'warn', 'error', 'off'];

/**
 * Whether `text` is a pool as the Worker reads it: a JSON array of {url, token}.
 * @param {string} text
 */
function isPoolJson(text) {
  try {
    const pool = JSON.parse(text);
    return Array.isArray(pool) && pool.every((db) => URL.canParse(db?.url) && typeof db.token === 'string' && db.token !== '');
  } catch {
    return false;
  }
}

/**
 * The optional settings the Worker gets, as binding strings ('' for unset).
 * @param {NodeJS.ProcessEnv} env
 * @param {{ upstash: boolean }} database whether a real Upstash database replaces the local Redis
 */
export function workerSettingsFromEnv(env, { upstash }) {
  const metricsToken = env.GROUPQ_METRICS_TOKEN || '';
  if (metricsToken && metricsToken.length < 16) throw new Error('GROUPQ_METRICS_TOKEN must be at least 16 characters');
  const publicUrl = env.GROUPQ_PUBLIC_URL || '';
  if (publicUrl && !URL.canParse(publicUrl)) throw new Error(`GROUPQ_PUBLIC_URL must be a URL, got "${publicUrl}"`);
  const scriptKeyLocking = env.GROUPQ_SCRIPT_KEY_LOCKING || 'true';
  if (scriptKeyLocking !== 'true' && scriptKeyLocking !== 'false') {
    throw new Error(`GROUPQ_SCRIPT_KEY_LOCKING must be true or false, got "${scriptKeyLocking}"`);
  }
  // Locally GROUPQ_DEV_DATABASES makes the pool; a pool of real databases goes with a real first one.
  const redisPool = env.GROUPQ_REDIS_POOL || '';
  if (redisPool && !upstash) {
    throw new Error('GROUPQ_REDIS_POOL adds databases after a real Upstash one (UPSTASH_REDIS_REST_URL); locally, set GROUPQ_DEV_DATABASES');
  }
  if (redisPool && !isPoolJson(redisPool)) throw new Error('GROUPQ_REDIS_POOL must be JSON: [{"url":"https://...","token":"..."}, ...]');
  // `warn` unless set, so the stack's output is the example endpoint's lines and what went wrong,
  // not a line per request (docs/logs.md).
  const logLevel = env.GROUPQ_LOG_LEVEL || 'warn';
  if (!LOG_LEVELS.includes(logLevel)) throw new Error(`GROUPQ_LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got "${logLevel}"`);
  return {
    metricsToken,
    /** The callback URLs' origin when set (a tunnel to this machine); else the Worker's own URL. */
    publicUrl,
    scriptKeyLocking,
    redisPool,
    maxSubrequests: String(intFromEnv(env, 'GROUPQ_MAX_SUBREQUESTS', 10_000, { min: 10, max: 10_000_000 })),
    maxPushes: String(intFromEnv(env, 'GROUPQ_MAX_PUSHES', 10_000, { min: 1, max: 10_000_000 })),
    // The dev ticker fires every GROUPQ_DEV_TICK_MS: by default each cron run does its pass and returns.
    schedulerStayMs: String(intFromEnv(env, 'GROUPQ_SCHEDULER_STAY_MS', 0, { min: 0, max: 14 * 60_000 })),
    logLevel,
  };
}
