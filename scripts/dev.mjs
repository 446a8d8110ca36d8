// `npm run dev`: the whole local stack on this machine. Starts a redis-server (data in
// .data/redis) and the Upstash REST bridge in front of it, unless UPSTASH_REDIS_REST_URL and
// UPSTASH_REDIS_REST_TOKEN point at a real Upstash database. Each part is a service with a
// start() that returns { stop, exited }; the Worker joins as one more entry in `services`.
// SIGINT/SIGTERM stop every service in reverse order and exit 0; a service that dies on its own
// stops the rest and exits 1.
import { Buffer } from 'node:buffer';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startRedis } from './redis-server.mjs';
import { DEV_REST_TOKEN, startBridge } from './rest-bridge.mjs';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

const DEV_ADMIN_TOKEN = 'gq_dev_admin_token';
const DEV_SIGNING_SECRET = `whsec_${Buffer.from('groupq-dev-signing-secret-0000000').toString('base64')}`;

/**
 * @param {NodeJS.ProcessEnv} env
 * @param {string} name
 * @param {number} fallback
 * @param {{ min: number, max: number }} range
 */
function intFromEnv(env, name, fallback, { min, max }) {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new Error(`${name} must be an integer in [${min}, ${max}], got "${raw}"`);
  }
  return value;
}

/**
 * Every knob of `npm run dev`, parsed once.
 * @param {NodeJS.ProcessEnv} env
 */
function loadConfig(env) {
  const port = { min: 1, max: 65535 };
  const upstashUrl = env.UPSTASH_REDIS_REST_URL || '';
  const upstashToken = env.UPSTASH_REDIS_REST_TOKEN || '';
  return {
    /** The Worker's port. */
    port: intFromEnv(env, 'PORT', 8787, port),
    redisPort: intFromEnv(env, 'REDIS_PORT', 6379, port),
    restPort: intFromEnv(env, 'REDIS_REST_PORT', 8079, port),
    redisDataDir: path.join(repoRoot, '.data', 'redis'),
    /** Set when a real Upstash database replaces the local Redis and bridge. */
    upstash: upstashUrl && upstashToken ? { url: upstashUrl, token: upstashToken } : null,
    restToken: upstashToken || DEV_REST_TOKEN,
    adminToken: env.GROUPQ_ADMIN_TOKEN || DEV_ADMIN_TOKEN,
    signingSecret: env.GROUPQ_SIGNING_SECRET || DEV_SIGNING_SECRET,
    /** How often the dev stack runs the scheduled handler (stands in for Cloudflare's cron). */
    tickMs: intFromEnv(env, 'GROUPQ_DEV_TICK_MS', 1000, { min: 10, max: 3_600_000 }),
  };
}

/** @typedef {ReturnType<typeof loadConfig>} DevConfig */
/** @typedef {{ name: string, stop: () => Promise<void>, exited: Promise<string> }} RunningService */
/** @typedef {{ url: string, token: string }} RestEndpoint */
/** @typedef {{ name: string, start: (config: DevConfig, rest: RestEndpoint) => Promise<RunningService> }} Service */

/** @type {Service} */
const redisService = {
  name: 'redis-server',
  async start(config) {
    const redis = await startRedis({ port: config.redisPort, dir: config.redisDataDir });
    console.log(`Redis:               redis://127.0.0.1:${redis.port} (data in ${path.relative(repoRoot, redis.dir)})`);
    return {
      name: 'redis-server',
      stop: redis.stop,
      exited: redis.exited.then(({ code, signal }) => {
        const tail = redis.output().trim().split('\n').slice(-5).join('\n');
        return `exited unexpectedly (${signal ? `signal ${signal}` : `code ${code}`}); last log lines:\n${tail}`;
      }),
    };
  },
};

/** @type {Service} */
const bridgeService = {
  name: 'rest-bridge',
  async start(config, rest) {
    const bridge = await startBridge({ port: config.restPort, redisPort: config.redisPort, token: config.restToken });
    rest.url = bridge.url;
    console.log(`Upstash REST bridge: ${bridge.url} -> redis 127.0.0.1:${config.redisPort}`);
    // The bridge runs in this process: it ends only when we stop it.
    return { name: 'rest-bridge', stop: bridge.close, exited: new Promise(() => {}) };
  },
};

/** @param {DevConfig} config */
function servicesFor(config) {
  /** @type {Service[]} */
  const services = [];
  if (!config.upstash) services.push(redisService, bridgeService);
  return services;
}

async function main() {
  const config = loadConfig(process.env);
  /** @type {RestEndpoint} */
  const rest = config.upstash ?? { url: '', token: config.restToken };
  /** @type {RunningService[]} */
  const running = [];
  let stopping = false;

  /** @param {number} code */
  async function shutdown(code) {
    if (stopping) return;
    stopping = true;
    for (const service of running.reverse()) {
      await service.stop().catch((err) => console.error(`groupq dev: stopping ${service.name} failed: ${err.message}`));
    }
    process.exit(code);
  }
  process.once('SIGINT', () => void shutdown(0));
  process.once('SIGTERM', () => void shutdown(0));

  try {
    for (const service of servicesFor(config)) {
      if (stopping) return;
      const started = await service.start(config, rest);
      if (stopping) return void (await started.stop());
      running.push(started);
      void started.exited.then((reason) => {
        if (stopping) return;
        console.error(`groupq dev: ${started.name} ${reason}`);
        void shutdown(1);
      });
    }
  } catch (err) {
    console.error(`groupq dev: ${/** @type {Error} */ (err).message}`);
    await shutdown(1);
    return;
  }
  if (stopping) return;
  // Keeps the process alive until a signal even when no service holds the event loop open.
  setInterval(() => {}, 1 << 30);

  if (config.upstash) console.log(`Upstash REST:        ${rest.url} (from UPSTASH_REDIS_REST_URL)`);
  else console.log(`UPSTASH_REDIS_REST_URL=${rest.url} UPSTASH_REDIS_REST_TOKEN=${rest.token}`);
  console.log(`GROUPQ_ADMIN_TOKEN=${config.adminToken}${config.adminToken === DEV_ADMIN_TOKEN ? '  (dev default)' : ''}`);
  console.log(`GROUPQ_SIGNING_SECRET=${config.signingSecret}${config.signingSecret === DEV_SIGNING_SECRET ? '  (dev default)' : ''}`);
  console.log(`Scheduler tick:      every ${config.tickMs} ms (with the Worker)`);
  // The Worker (HTTP API on PORT, delivery, cron) joins `servicesFor` with the Worker issue;
  // until then the engine is reachable through the REST bridge above.
  console.log(`Worker:              not in this build yet; PORT ${config.port} is reserved for it`);
  console.log(`groupq dev ready: http://127.0.0.1:${config.port}`);
}

main().catch((err) => {
  console.error(`groupq dev: ${err.message}`);
  process.exit(1);
});
