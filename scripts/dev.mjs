// `npm run dev`: the whole local stack on this machine. Starts, in order: a redis-server (data
// in GROUPQ_DEV_DATA_DIR) and the Upstash REST bridge in front of it (both skipped when
// UPSTASH_REDIS_REST_URL and UPSTASH_REDIS_REST_TOKEN point at a real Upstash database), the
// example endpoint, the Worker (workerd under Miniflare, dev-worker.mjs), and the dev ticker that fires the Worker's
// scheduled handler every GROUPQ_DEV_TICK_MS. Each part is a service with a start() that returns
// { stop, exited }. Once GET /health answers {"ok":true} it prints the URLs, the tokens, curl
// commands to try it, and last `groupq dev ready: http://127.0.0.1:<PORT>`.
// SIGINT/SIGTERM stop every service in reverse order and exit 0; a service that dies on its own
// stops the rest and exits 1, except the redis-server we started, which is restarted from its
// AOF (redis-supervisor.mjs) and stops the stack only when it cannot be started again.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startTicker } from './dev-ticker.mjs';
import { DEV_SIGNING_SECRET, signingKey, startExampleEndpoint } from './example-endpoint.mjs';
import { ensureRedisServer } from './redis-server.mjs';
import { superviseRedis } from './redis-supervisor.mjs';
import { createRespClient } from './resp.mjs';
import { bridgeModeFromEnv, describeCap, DEV_REST_TOKEN, maxCommandsFromEnv, startBridge } from './rest-bridge.mjs';
import { startDevServer } from './dev-server.mjs';
import { startDevWorker } from './dev-worker.mjs';
import { intFromEnv, workerSettingsFromEnv } from './dev-settings.mjs';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

const DEV_ADMIN_TOKEN = 'gq_dev_admin_token';
/** The queue the printed curl commands create. */
const EXAMPLE_QUEUE = 'example';
/** A service that only ends when we stop it (it runs inside this process). */
const NEVER = new Promise(() => {});

/**
 * Every knob of `npm run dev`, parsed and checked once, so a bad value fails here with its name
 * instead of as a Worker that never turns healthy.
 * @param {NodeJS.ProcessEnv} env
 */
function loadConfig(env) {
  const port = { min: 1, max: 65535 };
  const upstashUrl = env.UPSTASH_REDIS_REST_URL || '';
  const upstashToken = env.UPSTASH_REDIS_REST_TOKEN || '';
  // One without the other would silently fall back to the local Redis (and print the token).
  if (Boolean(upstashUrl) !== Boolean(upstashToken)) {
    throw new Error('set both UPSTASH_REDIS_REST_URL and UPSTASH_REDIS_REST_TOKEN (a real Upstash database), or neither');
  }
  if (upstashUrl && (env.GROUPQ_DEV_DATABASES ?? '') !== '') {
    throw new Error('GROUPQ_DEV_DATABASES starts local databases: with a real Upstash database, leave it unset');
  }
  const adminToken = env.GROUPQ_ADMIN_TOKEN || DEV_ADMIN_TOKEN;
  if (adminToken.length < 16) throw new Error('GROUPQ_ADMIN_TOKEN must be at least 16 characters');
  const signingSecret = env.GROUPQ_SIGNING_SECRET || DEV_SIGNING_SECRET;
  const signingSecretNext = env.GROUPQ_SIGNING_SECRET_NEXT || '';
  for (const [name, secret] of [['GROUPQ_SIGNING_SECRET', signingSecret], ['GROUPQ_SIGNING_SECRET_NEXT', signingSecretNext]]) {
    if (secret && !signingKey(secret)) throw new Error(`${name} must be whsec_ followed by at least 16 bytes of base64`);
  }
  return {
    /** The Worker's port. */
    port: intFromEnv(env, 'PORT', 8787, port),
    redisPort: intFromEnv(env, 'REDIS_PORT', 6379, port),
    restPort: intFromEnv(env, 'REDIS_REST_PORT', 8079, port),
    examplePort: intFromEnv(env, 'EXAMPLE_ENDPOINT_PORT', 8788, port),
    redisDataDir: path.resolve(env.GROUPQ_DEV_DATA_DIR || path.join(repoRoot, '.data', 'redis')),
    /** Databases in the local pool: redis-servers and bridges on consecutive ports. */
    databases: intFromEnv(env, 'GROUPQ_DEV_DATABASES', 1, { min: 1, max: 8 }),
    /** Set when a real Upstash database replaces the local Redis and bridge. */
    upstash: upstashUrl && upstashToken ? { url: upstashUrl, token: upstashToken } : null,
    restToken: DEV_REST_TOKEN,
    /** How the bridge runs scripts: `upstash` (Upstash's allow-key-locking rules) or `plain`. */
    bridgeMode: bridgeModeFromEnv(env),
    /** Upstash's cap on commands a second, emulated by the bridge (undefined: none). */
    maxCommandsPerSecond: maxCommandsFromEnv(env),
    adminToken,
    signingSecret,
    signingSecretNext,
    /** The Worker's optional settings, from the environment. */
    ...workerSettingsFromEnv(env, { upstash: Boolean(upstashUrl) }),
    /** What runs groupq: `worker` (workerd, as Cloudflare runs it) or `node` (the Node server, groupq serve). */
    runtime: runtimeFromEnv(env),
    /** How often the dev stack runs the scheduled handler (stands in for Cloudflare's cron). */
    tickMs: intFromEnv(env, 'GROUPQ_DEV_TICK_MS', 1000, { min: 10, max: 3_600_000 }),
    /** The wait before restarting a local Redis that crashed; doubles while it keeps crashing. */
    redisRestartMs: intFromEnv(env, 'GROUPQ_DEV_REDIS_RESTART_MS', 100, { min: 10, max: 5000 }),
  };
}

/**
 * GROUPQ_DEV_RUNTIME: `worker` (default) or `node`.
 * @param {NodeJS.ProcessEnv} env
 * @returns {'worker' | 'node'}
 */
function runtimeFromEnv(env) {
  const runtime = env.GROUPQ_DEV_RUNTIME || 'worker';
  if (runtime !== 'worker' && runtime !== 'node') throw new Error(`GROUPQ_DEV_RUNTIME must be worker or node, got "${runtime}"`);
  return runtime;
}

/** @typedef {ReturnType<typeof loadConfig>} DevConfig */
/** @typedef {{ name: string, stop: () => Promise<void>, exited: Promise<string> }} RunningService */
/** @typedef {{ rest: { url: string, token: string }, pool: { url: string, token: string }[], workerUrl: string, exampleUrl: string, fireScheduled: () => Promise<void>, signal: AbortSignal }} DevContext */
/** @typedef {{ name: string, start: (config: DevConfig, context: DevContext) => Promise<RunningService> }} Service */

/**
 * Prints each line of a child or in-process service with its name in front.
 * @param {string} name
 */
const prefixed = (name) => (/** @type {string} */ line) => console.log(`[${name}] ${line}`);

/**
 * Whether a Redis already answers PING on 127.0.0.1:`port`.
 * @param {number} port
 */
async function answersPing(port) {
  const client = createRespClient({ port, connectTimeoutMs: 1000 });
  try {
    return String(await client.call(['PING'])) === 'PONG';
  } catch {
    return false;
  } finally {
    client.close();
  }
}

/**
 * Database `i` of the local pool: its redis-server on REDIS_PORT + i, data in GROUPQ_DEV_DATA_DIR
 * (database 0) or GROUPQ_DEV_DATA_DIR-<i>.
 * @param {DevConfig} config
 * @param {number} i
 */
const databaseOf = (config, i) => ({
  redisPort: config.redisPort + i,
  restPort: config.restPort + i,
  dataDir: i === 0 ? config.redisDataDir : `${config.redisDataDir}-${i}`,
  label: config.databases > 1 ? ` ${i}` : '',
});

/**
 * The redis-server of database `i`.
 * @param {number} i
 * @returns {Service}
 */
function redisService(i) {
  const name = `redis-server${i > 0 ? ` ${i}` : ''}`;
  /** @type {Service['start']} */
  const start = async (config, context) => {
    const { redisPort, dataDir, label } = databaseOf(config, i);
    const heading = `${`Redis${label}:`.padEnd(20)} `;
    // Installing Debian's package starts its own redis-server on 6379 where systemd runs: use a
    // Redis that already answers on REDIS_PORT rather than fail on a busy port. It is not ours:
    // we neither stop it nor restart it (systemd, or whoever started it, does).
    ensureRedisServer();
    if (await answersPing(redisPort)) {
      console.log(`${heading}redis://127.0.0.1:${redisPort} (already running there: using it; its data, not ${path.basename(dataDir)}; not restarted by npm run dev if it stops)`);
      return { name, stop: async () => {}, exited: NEVER };
    }
    const redis = await superviseRedis({
      port: redisPort,
      dir: dataDir,
      restartDelayMs: config.redisRestartMs,
      // Aborted when shutdown begins, so a crash during shutdown is not restarted.
      signal: context.signal,
      log: (line) => console.error(`groupq dev: ${line}`),
    });
    const relative = path.relative(process.cwd(), redis.dir);
    const shown = relative && !relative.startsWith('..') && !path.isAbsolute(relative) ? relative : redis.dir;
    console.log(`${heading}redis://127.0.0.1:${redis.port} (data in ${shown}, append-only; restarted from it if it crashes)`);
    return { name, stop: redis.stop, exited: redis.exited };
  };
  return { name, start };
}

/**
 * The REST bridge in front of database `i`: database 0's is UPSTASH_REDIS_REST_URL, the others'
 * go to the Worker in GROUPQ_REDIS_POOL.
 * @param {number} i
 * @returns {Service}
 */
function bridgeService(i) {
  const name = `rest-bridge${i > 0 ? ` ${i}` : ''}`;
  /** @type {Service['start']} */
  const start = async (config, context) => {
    const { restPort: port, redisPort, label } = databaseOf(config, i);
    const { restToken: token, bridgeMode: mode, maxCommandsPerSecond } = config;
    const bridge = await startBridge({ port, redisPort, token, mode, maxCommandsPerSecond });
    if (i === 0) context.rest.url = bridge.url;
    else context.pool.push({ url: bridge.url, token });
    console.log(`${`Upstash REST bridge${label}:`.padEnd(20)} ${bridge.url} -> redis 127.0.0.1:${redisPort} (scripts: ${mode}${describeCap(maxCommandsPerSecond)})`);
    return { name, stop: bridge.close, exited: NEVER };
  };
  return { name, start };
}

/** @type {Service} */
const exampleService = {
  name: 'example endpoint',
  async start(config, context) {
    const endpoint = await startExampleEndpoint({
      port: config.examplePort,
      secrets: [config.signingSecret, config.signingSecretNext],
      log: prefixed('example'),
    });
    context.exampleUrl = endpoint.url;
    console.log(`Example endpoint:    ${endpoint.url} (verifies signatures, logs each job)`);
    return { name: 'example endpoint', stop: endpoint.close, exited: NEVER };
  },
};

/** @type {Service} */
const workerService = {
  name: 'Worker',
  async start(config, context) {
    const workerUrl = `http://127.0.0.1:${config.port}`;
    const node = config.runtime === 'node';
    console.log(`Worker:              starting ${node ? 'the Node server (groupq serve)' : 'workerd'} on ${workerUrl} ...`);
    const worker = await (node ? startDevServer : startDevWorker)({
      port: config.port,
      cwd: repoRoot,
      log: prefixed('worker'),
      signal: context.signal,
      // Every binding the Worker reads (src/handlers/settings.ts), from this process's environment
      // or the stack: neither wrangler.toml [vars] nor a developer's .dev.vars decides any of
      // them. Loopback stays allowed: the example endpoint is http on 127.0.0.1.
      bindings: {
        // The Node server reaches the local Redis over TCP, as `groupq serve` with REDIS_URL does
        // (events between processes then go through its pub/sub); the bridge stays for the pool.
        ...(node && !config.upstash && { REDIS_URL: `redis://127.0.0.1:${config.redisPort}` }),
        UPSTASH_REDIS_REST_URL: context.rest.url,
        UPSTASH_REDIS_REST_TOKEN: context.rest.token,
        GROUPQ_REDIS_POOL: context.pool.length > 0 ? JSON.stringify(context.pool) : config.redisPool,
        GROUPQ_ADMIN_TOKEN: config.adminToken,
        GROUPQ_METRICS_TOKEN: config.metricsToken,
        GROUPQ_SIGNING_SECRET: config.signingSecret,
        GROUPQ_SIGNING_SECRET_NEXT: config.signingSecretNext,
        GROUPQ_PUBLIC_URL: config.publicUrl || workerUrl,
        GROUPQ_ALLOW_HTTP_LOOPBACK: 'true',
        GROUPQ_SCHEDULER_STAY_MS: config.schedulerStayMs,
        GROUPQ_MAX_SUBREQUESTS: config.maxSubrequests,
        GROUPQ_MAX_PUSHES: config.maxPushes,
        // Over TCP the Node server reaches redis-server itself, which refuses Upstash's flag (the
        // bridge is what plays Upstash's rules).
        GROUPQ_SCRIPT_KEY_LOCKING: node && !config.upstash ? 'false' : config.scriptKeyLocking,
        GROUPQ_LOG_LEVEL: config.logLevel,
      },
    });
    context.workerUrl = worker.url;
    context.fireScheduled = worker.scheduled;
    return { name: 'Worker', stop: worker.stop, exited: worker.exited };
  },
};

/** @type {Service} */
const tickerService = {
  name: 'dev ticker',
  async start(config, context) {
    const ticker = startTicker({ fire: context.fireScheduled, everyMs: config.tickMs, log: prefixed('ticker') });
    return { name: 'dev ticker', stop: ticker.stop, exited: NEVER };
  },
};

/** @param {DevConfig} config */
function servicesFor(config) {
  /** @type {Service[]} */
  const services = [];
  if (!config.upstash) {
    for (let i = 0; i < config.databases; i++) services.push(redisService(i), bridgeService(i));
  }
  services.push(exampleService, workerService, tickerService);
  return services;
}

/**
 * Quotes one word for a POSIX shell (single quotes; a ' inside becomes '\'').
 * @param {string} word
 */
function shellQuote(word) {
  return /^[A-Za-z0-9_./:@%+=,-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/**
 * One copy-pasteable curl command line.
 * @param {string} method
 * @param {string} url
 * @param {string} token
 * @param {unknown} [body]
 */
function curlLine(method, url, token, body) {
  const words = ['curl'];
  if (method !== 'GET') words.push('-X', method);
  words.push(shellQuote(url), '-H', shellQuote(`authorization: Bearer ${token}`));
  if (body !== undefined) words.push('-H', shellQuote('content-type: application/json'), '-d', shellQuote(JSON.stringify(body)));
  return words.join(' ');
}

/**
 * @param {DevConfig} config
 * @param {DevContext} context
 */
function printSummary(config, context) {
  const api = `${context.workerUrl}/v1/queues/${EXAMPLE_QUEUE}`;
  console.log(`Worker:              ${context.workerUrl} (API v1; GET /health${config.runtime === 'node' ? '; the Node server, GROUPQ_DEV_RUNTIME=node' : ''})`);
  console.log(`Dashboard:           ${context.workerUrl}/dashboard (sign in with the admin token)`);
  if (config.upstash) console.log(`Upstash REST:        ${context.rest.url} (from UPSTASH_REDIS_REST_URL)`);
  else console.log(`UPSTASH_REDIS_REST_URL=${context.rest.url} UPSTASH_REDIS_REST_TOKEN=${context.rest.token}`);
  if (config.runtime === 'node' && !config.upstash) console.log(`REDIS_URL=redis://127.0.0.1:${config.redisPort}  (what the Node server uses: TCP, no REST hop)`);
  if (context.pool.length > 0) console.log(`GROUPQ_REDIS_POOL=${JSON.stringify(context.pool)}`);
  console.log(`GROUPQ_ADMIN_TOKEN=${config.adminToken}${config.adminToken === DEV_ADMIN_TOKEN ? '  (dev default)' : ''}`);
  console.log(`GROUPQ_SIGNING_SECRET=${config.signingSecret}${config.signingSecret === DEV_SIGNING_SECRET ? '  (dev default)' : ''}`);
  if (config.metricsToken) console.log(`GROUPQ_METRICS_TOKEN=${config.metricsToken}  (opens ${context.workerUrl}/metrics alone)`);
  console.log(`Scheduler tick:      every ${config.tickMs} ms (the scheduled handler, standing in for the cron trigger)`);
  if (existsSync(path.join(repoRoot, '.dev.vars'))) {
    console.log('Note:                .dev.vars is not used for groupq\'s bindings here; npm run dev passes each one itself');
  }
  console.log('');
  console.log(`Try it: create a queue that pushes to the example endpoint, then enqueue a job:`);
  console.log(`  ${curlLine('PUT', api, config.adminToken, { endpoint: context.exampleUrl, keepCompleted: 100 })}`);
  console.log(`  ${curlLine('POST', `${api}/jobs`, config.adminToken, { group: 'user:42', data: { hello: 'world' } })}`);
  console.log('Then look at the job (<id> from the answer above); it turns "completed" once the endpoint answered:');
  console.log(`  ${curlLine('GET', `${api}/jobs/<id>`, config.adminToken)}`);
  console.log('');
}

async function main() {
  const config = loadConfig(process.env);
  const abort = new AbortController();
  /** @type {DevContext} */
  const context = {
    rest: config.upstash ? { ...config.upstash } : { url: '', token: config.restToken },
    pool: [],
    workerUrl: '',
    fireScheduled: async () => {},
    exampleUrl: '',
    signal: abort.signal,
  };
  /** @type {RunningService[]} */
  const running = [];
  let stopping = false;
  /** @type {Promise<void>} */
  let startup = Promise.resolve();

  /** @param {number} code */
  async function shutdown(code) {
    if (stopping) return;
    stopping = true;
    // Interrupts a service that is still starting (the Worker waits for /health for a while),
    // and waits for it, so whatever it already started is in `running` and gets stopped too.
    abort.abort();
    await startup.catch(() => {});
    for (const service of running.reverse()) {
      await service.stop().catch((err) => console.error(`groupq dev: stopping ${service.name} failed: ${err.message}`));
    }
    process.exit(code);
  }
  // `on`, not `once`: a Ctrl-C under `npm run dev` arrives twice (from the terminal and again
  // from npm, which forwards it), and a second SIGINT without a listener would kill us mid-way.
  process.on('SIGINT', () => void shutdown(0));
  process.on('SIGTERM', () => void shutdown(0));
  // A closed terminal: redis-server runs in a session of its own and would outlive us.
  process.on('SIGHUP', () => void shutdown(0));

  startup = (async () => {
    for (const service of servicesFor(config)) {
      if (stopping) return;
      const started = await service.start(config, context);
      running.push(started);
      void started.exited.then((reason) => {
        if (stopping) return;
        console.error(`groupq dev: ${started.name} ${reason}`);
        void shutdown(1);
      });
    }
  })();
  try {
    await startup;
  } catch (err) {
    // A signal during startup makes the starting service give up on purpose: shutdown() owns the exit.
    if (stopping) return;
    console.error(`groupq dev: ${/** @type {Error} */ (err).message}`);
    await shutdown(1);
    return;
  }
  if (stopping) return;
  // Keeps the process alive until a signal even when no service holds the event loop open.
  setInterval(() => {}, 1 << 30);
  printSummary(config, context);
  console.log(`groupq dev ready: ${context.workerUrl}`);
}

main().catch((err) => {
  console.error(`groupq dev: ${err.message}`);
  process.exit(1);
});
