// An Upstash-REST-compatible HTTP bridge in front of a local Redis, so the production
// @upstash/redis client runs unchanged against it. Routes (all POST, bearer token):
//   /            body ["CMD", ...args]           -> {"result": x}            | 400 {"error"}
//   /pipeline    body [["CMD", ...], ...]        -> [{"result"} | {"error"}, ...]
//   /multi-exec  same body, in MULTI/EXEC        -> [{"result"} | {"error"}, ...] | 400 {"error"}
// With `Upstash-Encoding: base64` every string in a result is base64 (nested arrays too), except
// a top-level status reply "OK", which @upstash/redis passes through undecoded.
// Scripts follow Upstash's rules by default (upstash-scripts.mjs: the `allow-key-locking` flag
// accepted and its declared keys enforced); mode 'plain' passes every script through untouched.
// With `maxCommandsPerSecond` (GROUPQ_BRIDGE_MAX_COMMANDS_PER_S) it serves at most that many
// commands a second, scripts' own counted, as an Upstash database does (bridge-throttle.mjs).
import { timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { createThrottle } from './bridge-throttle.mjs';
import { createRespClient, RespError, Status } from './resp.mjs';
import { createUpstashScripts, passThrough } from './upstash-scripts.mjs';

const MAX_BODY_BYTES = 10 * 1024 * 1024;

// Commands that would change the shared connection's state (or block it) for every other
// request; Upstash's REST API refuses them too.
const REFUSED_COMMANDS = new Set([
  'multi', 'exec', 'discard', 'watch', 'unwatch', 'select', 'swapdb', 'auth', 'hello', 'reset', 'quit',
  'subscribe', 'psubscribe', 'ssubscribe', 'unsubscribe', 'punsubscribe', 'sunsubscribe', 'monitor',
  'blpop', 'brpop', 'brpoplpush', 'blmove', 'blmpop', 'bzpopmin', 'bzpopmax', 'bzmpop', 'wait', 'waitaof',
]);

/** An HTTP error answered as `{"error": message}`. */
class HttpError extends Error {
  /** @param {number} status @param {string} message */
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

/** @typedef {import('./resp.mjs').RespReply} RespReply */
/** @typedef {string | number | null | Json[]} Json */

/**
 * Converts a raw Redis reply into the JSON value Upstash answers with. With base64 on, a status
 * "OK" stays plain only at the top of a result: @upstash/redis skips decoding "OK" there, but
 * base64-decodes every string inside arrays (a plain "OK" there would decode to "8").
 * @param {RespReply} reply
 * @param {boolean} base64
 * @param {boolean} [nested]
 * @returns {Json}
 */
function toJson(reply, base64, nested = false) {
  if (reply === null || typeof reply === 'number') return reply;
  if (Array.isArray(reply)) return reply.map((item) => toJson(item, base64, true));
  if (reply instanceof Status) {
    if (!base64 || (reply.value === 'OK' && !nested)) return reply.value;
    return Buffer.from(reply.value, 'utf8').toString('base64');
  }
  if (reply instanceof RespError) return base64 ? Buffer.from(reply.message, 'utf8').toString('base64') : reply.message;
  return base64 ? reply.toString('base64') : reply.toString('utf8');
}

/**
 * @param {RespReply} reply
 * @param {boolean} base64
 */
function toEntry(reply, base64) {
  return reply instanceof RespError ? { error: reply.message } : { result: toJson(reply, base64) };
}

/**
 * @param {unknown} command
 * @returns {string[]}
 */
function parseCommand(command) {
  if (!Array.isArray(command) || command.length === 0) {
    throw new HttpError(400, 'ERR command must be a non-empty JSON array');
  }
  const args = command.map((arg) => {
    if (typeof arg === 'string') return arg;
    if (typeof arg === 'number' || typeof arg === 'boolean') return String(arg);
    throw new HttpError(400, 'ERR command arguments must be strings, numbers or booleans');
  });
  const name = String(args[0]).toLowerCase();
  if (REFUSED_COMMANDS.has(name)) throw new HttpError(400, `ERR Command is not available: '${name}'`);
  return args;
}

/**
 * @param {unknown} body
 * @returns {string[][]}
 */
function parseCommandList(body) {
  if (!Array.isArray(body) || body.length === 0) {
    throw new HttpError(400, 'ERR body must be a non-empty JSON array of commands');
  }
  return body.map(parseCommand);
}

/**
 * @param {http.IncomingMessage} req
 * @returns {Promise<unknown>}
 */
async function readJson(req) {
  /** @type {Buffer[]} */
  const chunks = [];
  let size = 0;
  // Reads to the end even past the limit, so the 413 answer reaches the client.
  for await (const chunk of req) {
    size += chunk.length;
    if (size <= MAX_BODY_BYTES) chunks.push(chunk);
  }
  if (size > MAX_BODY_BYTES) throw new HttpError(413, `ERR request body exceeds ${MAX_BODY_BYTES} bytes`);
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    throw new HttpError(400, 'ERR request body is not valid JSON');
  }
}

/**
 * @param {string | undefined} header
 * @param {Buffer} expected
 */
function isAuthorized(header, expected) {
  const match = /^Bearer +(\S+) *$/i.exec(header ?? '');
  if (!match?.[1]) return false;
  const given = Buffer.from(match[1], 'utf8');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** @typedef {'upstash' | 'plain'} BridgeMode */
export const BRIDGE_MODES = /** @type {const} */ (['upstash', 'plain']);

/**
 * @typedef {{ receivedAt: number, answeredAt: number, body: unknown }} ObservedRequest
 *   one request's times (performance.now()) and its parsed body (undefined if it had none)
 */

/**
 * Starts the bridge. `port: 0` picks a free port.
 * @param {{ port?: number, host?: string, redisHost?: string, redisPort: number, token: string, mode?: BridgeMode, observe?: (request: ObservedRequest) => void, maxCommandsPerSecond?: number, now?: () => number }} options
 *   `mode`: 'upstash' runs scripts by Upstash's rules (see upstash-scripts.mjs), 'plain' passes
 *   them to redis-server untouched. @default 'upstash'
 *   `observe`: told of each request as its answer is sent (the benchmark's latency stages).
 *   `maxCommandsPerSecond`: Upstash's cap on the database (none when unset); `now`: the
 *   throttle's clock in milliseconds (tests inject one).
 * @returns {Promise<{ url: string, port: number, mode: BridgeMode, stats: { requests: number }, close: () => Promise<void> }>}
 */
export async function startBridge({ port = 0, host = '127.0.0.1', redisHost = '127.0.0.1', redisPort, token, mode = 'upstash', observe, maxCommandsPerSecond, now }) {
  if (!token) throw new Error('startBridge: a token is required');
  if (!BRIDGE_MODES.includes(mode)) throw new Error(`startBridge: mode must be ${BRIDGE_MODES.join(' or ')}, got "${mode}"`);
  const expectedToken = Buffer.from(token, 'utf8');
  const redis = createRespClient({ host: redisHost, port: redisPort });
  const scripts = mode === 'upstash' ? createUpstashScripts({ redis }) : passThrough;
  // Before any client counts commands with INFO commandstats: the COMMAND it runs is the bridge's.
  scripts.warmUp();
  const throttle = maxCommandsPerSecond === undefined ? null : createThrottle({ redis, maxCommandsPerSecond, now });
  // Its first reading counts nothing: the COMMAND above and whatever ran before are not requests'.
  await throttle?.start().catch(() => {});

  /**
   * Translates a request's commands in order, so that an EVALSHA knows a script that a SCRIPT
   * LOAD or EVAL before it in the same request brought.
   * @param {string[][]} commands
   */
  async function translateAll(commands) {
    const translated = [];
    for (const args of commands) translated.push(await scripts.translate(args));
    return translated;
  }
  // Read by the benchmark (REST requests per job); the bridge itself never looks at it.
  const stats = { requests: 0 };

  /**
   * @param {string} route
   * @param {unknown} body
   * @param {boolean} base64
   * @returns {Promise<[number, unknown]>}
   */
  async function dispatch(route, body, base64) {
    if (route === '/') {
      const command = await scripts.translate(parseCommand(body));
      const reply = command.reply((await redis.pipeline([command.args]))[0] ?? null);
      if (reply instanceof RespError) return [400, { error: reply.message }];
      return [200, { result: toJson(reply, base64) }];
    }
    const commands = await translateAll(parseCommandList(body));
    const sent = commands.map((command) => command.args);
    /** @param {RespReply} reply @param {number} i */
    const answer = (reply, i) => toEntry(commands[i] ? commands[i].reply(reply) : reply, base64);
    if (route === '/pipeline') {
      const replies = await redis.pipeline(sent);
      return [200, replies.map(answer)];
    }
    // MULTI, the commands and EXEC leave in one write on the shared connection, so no other
    // request's command can land inside the transaction.
    const replies = await redis.pipeline([['MULTI'], ...sent, ['EXEC']]);
    const exec = replies[replies.length - 1] ?? null;
    if (exec instanceof RespError) {
      const queueError = replies.slice(1, -1).find((reply) => reply instanceof RespError);
      const detail = queueError instanceof RespError ? `: ${queueError.message}` : '';
      return [400, { error: `${exec.message}${detail}` }];
    }
    if (!Array.isArray(exec)) return [400, { error: 'EXECABORT Transaction discarded' }];
    return [200, exec.map(answer)];
  }

  const server = http.createServer(async function handleBridgeRequest(req, res) {
    stats.requests++;
    const receivedAt = performance.now();
    /** @type {unknown} */
    let request;
    /** @param {number} status @param {unknown} payload */
    const send = (status, payload) => {
      const body = JSON.stringify(payload);
      res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) });
      res.end(body);
      observe?.({ receivedAt, answeredAt: performance.now(), body: request });
    };
    try {
      const route = new URL(req.url ?? '/', 'http://bridge').pathname.replace(/(.)\/+$/, '$1');
      if (route !== '/' && route !== '/pipeline' && route !== '/multi-exec') {
        throw new HttpError(404, 'Not found');
      }
      if (req.method !== 'POST') throw new HttpError(405, 'Method not allowed: use POST');
      if (!isAuthorized(req.headers.authorization, expectedToken)) throw new HttpError(401, 'Unauthorized');
      const base64 = String(req.headers['upstash-encoding'] ?? '').toLowerCase() === 'base64';
      request = await readJson(req);
      await throttle?.admit();
      const [status, payload] = await dispatch(route, request, base64).finally(() =>
        // Debited before the answer leaves, so the client's next request meets the bucket as it
        // is. A reading that fails (Redis went away) debits later: the counters are cumulative.
        throttle?.settle().catch(() => {}),
      );
      send(status, payload);
    } catch (err) {
      if (err instanceof HttpError) send(err.status, { error: err.message });
      // Redis is out of reach (down, restarting, connection lost mid-request): 500, with the
      // client's words ("redis 127.0.0.1:6379: connection lost"). No "ERR" in front: this is
      // not a Redis error reply, and clients judge those by their words (src/core/store/scripts.ts
      // takes "ERR ... script" for a script bug, INTERNAL; anything else is REDIS_UNAVAILABLE).
      // The RESP client connects again on the next request: nothing to restart here.
      else send(500, { error: /** @type {Error} */ (err).message });
    }
  });

  try {
    await new Promise((resolve, reject) => {
      server.once('error', (err) => reject(new Error(`REST bridge cannot listen on ${host}:${port}: ${err.message}`)));
      server.listen(port, host, () => resolve(undefined));
    });
  } catch (err) {
    redis.close(); // the key specs' COMMAND may hold a connection open
    throw err;
  }
  const address = server.address();
  const boundPort = typeof address === 'object' && address ? address.port : port;
  const urlHost = host.includes(':') ? `[${host}]` : host;

  return {
    url: `http://${urlHost}:${boundPort}`,
    port: boundPort,
    mode,
    /** Counters since start: `requests` = HTTP requests received, whatever their answer. */
    stats,
    async close() {
      await new Promise((resolve) => {
        server.close(() => resolve(undefined));
        server.closeAllConnections();
      });
      redis.close();
    },
  };
}

/** The token the local stack uses when UPSTASH_REDIS_REST_TOKEN is not set. */
export const DEV_REST_TOKEN = 'groupq-dev-rest-token';

/**
 * @param {string} name
 * @param {number} fallback
 */
function portFromEnv(name, fallback) {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0 || value > 65535) throw new Error(`${name} must be a port number, got "${raw}"`);
  return value;
}

/**
 * GROUPQ_BRIDGE_MODE: `upstash` (the default) or `plain`.
 * @param {NodeJS.ProcessEnv} [env]
 * @returns {BridgeMode}
 */
export function bridgeModeFromEnv(env = process.env) {
  const raw = env.GROUPQ_BRIDGE_MODE || 'upstash';
  const mode = BRIDGE_MODES.find((known) => known === raw);
  if (!mode) throw new Error(`GROUPQ_BRIDGE_MODE must be ${BRIDGE_MODES.join(' or ')}, got "${raw}"`);
  return mode;
}

/**
 * GROUPQ_BRIDGE_MAX_COMMANDS_PER_S: Upstash's cap on commands a second, emulated (unset: none).
 * @param {NodeJS.ProcessEnv} [env]
 * @returns {number | undefined}
 */
export function maxCommandsFromEnv(env = process.env) {
  const raw = env.GROUPQ_BRIDGE_MAX_COMMANDS_PER_S;
  if (raw === undefined || raw === '') return undefined;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1 || value > 10_000_000) {
    throw new Error(`GROUPQ_BRIDGE_MAX_COMMANDS_PER_S must be an integer in [1, 10000000], got "${raw}"`);
  }
  return value;
}

/** How the bridge's startup line describes its cap. */
export const describeCap = (/** @type {number | undefined} */ cap) => (cap === undefined ? '' : `, at most ${cap} commands/s`);

async function main() {
  const token = process.env.UPSTASH_REDIS_REST_TOKEN || DEV_REST_TOKEN;
  const redisHost = process.env.REDIS_HOST || '127.0.0.1';
  const redisPort = portFromEnv('REDIS_PORT', 6379);
  const mode = bridgeModeFromEnv();
  const maxCommandsPerSecond = maxCommandsFromEnv();
  const bridge = await startBridge({ port: portFromEnv('REDIS_REST_PORT', 8079), redisHost, redisPort, token, mode, maxCommandsPerSecond });
  if (!process.env.UPSTASH_REDIS_REST_TOKEN) console.log(`UPSTASH_REDIS_REST_TOKEN not set; using the dev token: ${token}`);
  console.log(`Upstash REST bridge: ${bridge.url} -> redis ${redisHost}:${redisPort} (scripts: ${mode}${describeCap(maxCommandsPerSecond)})`);
  const stop = () => void bridge.close().then(() => process.exit(0));
  // `on`, not `once`: under npm a Ctrl-C arrives twice, and a second one unheard would kill us mid-close.
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  main().catch((err) => {
    console.error(`rest-bridge: ${err.message}`);
    process.exit(1);
  });
}
