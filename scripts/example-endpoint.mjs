// The example endpoint bundled with `npm run dev`: a small HTTP server that receives groupq's
// pushes the way a real receiver should. It verifies the Standard Webhooks signature with the
// official `standardwebhooks` package (HMAC-SHA256 over "<webhook-id>.<webhook-timestamp>.<raw
// body>" with the whsec_ secret, and the next secret while rotating), rejects a bad signature, a timestamp more than 5 minutes off or a
// message that is not a delivery (its webhook-id does not start with msg_: an outcome callback's
// starts with out_) with 401, and a copy of a delivery it accepted before (a replay: the same
// webhook-id, timestamp and body; a retry of the job keeps its webhook-id but is signed anew)
// with 409, logs each job on one line and answers 200 with a small JSON result, which completes
// the job. Run alone: `node scripts/example-endpoint.mjs` (EXAMPLE_ENDPOINT_PORT, default 8788;
// GROUPQ_SIGNING_SECRET and GROUPQ_SIGNING_SECRET_NEXT, default the dev secret).
import { createHash } from 'node:crypto';
import http from 'node:http';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Webhook } from 'standardwebhooks';

/** Standard Webhooks: receivers reject timestamps further than this from their clock (the package's tolerance). */
const TOLERANCE_SEC = 5 * 60;
/** A job's data may be up to 1 MiB (a queue's maxPayloadBytes); the envelope around it adds a little. */
const MAX_BODY_BYTES = 2 * 1024 * 1024;
/** How much of a job's data one log line shows. */
const LOG_DATA_CHARS = 200;
/** The secret `npm run dev` uses when GROUPQ_SIGNING_SECRET is not set. */
export const DEV_SIGNING_SECRET = `whsec_${Buffer.from('groupq-dev-signing-secret-0000000').toString('base64')}`;

/**
 * The HMAC key of a `whsec_<base64>` secret, or null when the secret is malformed.
 * @param {string} secret
 * @returns {Buffer | null}
 */
export function signingKey(secret) {
  if (!secret.startsWith('whsec_')) return null;
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
  return key.length >= 16 ? key : null;
}

/**
 * Checks a delivery's signature with the official `standardwebhooks` package, against each
 * secret (while rotating, either may have signed it); returns null when one verifies it, else why
 * not (for the 401 answer and the log). The package checks the timestamp too (5 minutes).
 * @param {Webhook[]} verifiers
 * @param {http.IncomingHttpHeaders} headers
 * @param {string} rawBody
 * @returns {string | null}
 */
function signatureProblem(verifiers, headers, rawBody) {
  const strings = Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, Array.isArray(value) ? value[0] : value]));
  let problem = 'no signing secret';
  for (const webhook of verifiers) {
    try {
      webhook.verify(rawBody, /** @type {Record<string, string>} */ (strings));
      return null;
    } catch (error) {
      problem = /** @type {Error} */ (error).message;
    }
  }
  return problem;
}

/**
 * @param {http.IncomingMessage} req
 * @returns {Promise<string | null>} the body as text, or null when it is too large
 */
async function readBody(req) {
  /** @type {Buffer[]} */
  const chunks = [];
  let size = 0;
  for await (const chunk of req) {
    size += chunk.length;
    if (size <= MAX_BODY_BYTES) chunks.push(chunk);
  }
  return size > MAX_BODY_BYTES ? null : Buffer.concat(chunks).toString('utf8');
}

/** @param {unknown} value */
function shortJson(value) {
  const text = JSON.stringify(value) ?? 'null';
  return text.length > LOG_DATA_CHARS ? `${text.slice(0, LOG_DATA_CHARS)}...` : text;
}

/**
 * Starts the endpoint on host:port (`port: 0` picks a free one). Every job it accepts is logged
 * through `log` as `job <id> queue=<q> group=<g> attempt=<n> data=<json>`.
 * @param {{ port?: number, host?: string, secrets: string[], log?: (line: string) => void }} options
 * @returns {Promise<{ url: string, port: number, close: () => Promise<void> }>}
 */
export async function startExampleEndpoint({ port = 0, host = '127.0.0.1', secrets, log = console.log }) {
  const verifiers = secrets.filter(Boolean).map((secret) => {
    if (!signingKey(secret)) throw new Error('example endpoint: a signing secret is not whsec_ followed by at least 16 bytes of base64');
    return new Webhook(secret);
  });
  if (verifiers.length === 0) throw new Error('example endpoint: a signing secret is required');
  /**
   * Deliveries accepted, by replay key, each until its timestamp is out of the tolerance (epoch
   * ms). One process: see docs/receiver.md#replays.
   */
  const accepted = new Map();
  /**
   * Whether this very request was accepted before (else it is remembered). The key is its
   * webhook-id, its timestamp and a hash of its body, all signed: a retry of the job keeps the
   * webhook-id but has a new timestamp, and a new body (attempt, lease) even within one second.
   * @param {string} id @param {number} timestampSec @param {string} rawBody @returns {boolean}
   */
  const seen = (id, timestampSec, rawBody) => {
    const now = Date.now();
    for (const [known, until] of accepted) {
      if (until >= now) break;
      accepted.delete(known);
    }
    const key = `${id}.${timestampSec}.${createHash('sha256').update(rawBody).digest('base64')}`;
    if ((accepted.get(key) ?? -1) >= now) return true;
    accepted.set(key, (timestampSec + TOLERANCE_SEC) * 1000);
    return false;
  };

  const server = http.createServer(async function handleDelivery(req, res) {
    /** @param {number} status @param {unknown} payload */
    const send = (status, payload) => {
      const body = JSON.stringify(payload);
      res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
      res.end(body);
    };
    if (req.method !== 'POST') return send(405, { error: 'groupq pushes jobs with POST' });
    /** @type {string | null} */
    let rawBody;
    try {
      rawBody = await readBody(req);
    } catch {
      // The sender went away mid-body (an aborted push): nothing to answer, nothing to crash on.
      return;
    }
    if (rawBody === null) return send(413, { error: 'body too large' });
    const header = (/** @type {string} */ name) => {
      const value = req.headers[name];
      return Array.isArray(value) ? value[0] : value;
    };
    const problem = signatureProblem(verifiers, req.headers, rawBody);
    if (problem) {
      log(`rejected a delivery (401): ${problem}`);
      // 401 is a failed attempt for groupq: the job is retried, then failed, never lost silently.
      return send(401, { error: `invalid signature: ${problem}` });
    }
    const id = /** @type {string} */ (header('webhook-id'));
    if (!id.startsWith('msg_')) {
      log(`rejected a request (401): webhook-id ${id} is not a delivery's (msg_...)`);
      return send(401, { error: 'not a groupq delivery: its webhook-id does not start with msg_' });
    }
    // A copy of a request accepted before is a replay of a captured request; a retry is not.
    const timestamp = Number(header('webhook-timestamp'));
    if (seen(id, timestamp, rawBody)) {
      log(`rejected a replayed delivery (409): ${id} at ${timestamp}`);
      return send(409, { error: `this delivery (webhook-id ${id}, webhook-timestamp ${timestamp}) was accepted before: a replayed copy` });
    }
    /** @type {{ id?: unknown, queue?: unknown, group?: unknown, attempt?: unknown, data?: unknown }} */
    let job;
    try {
      job = JSON.parse(rawBody);
    } catch {
      return send(400, { error: 'body is not JSON' });
    }
    log(`job ${job.id} queue=${job.queue} group=${JSON.stringify(job.group)} attempt=${job.attempt} data=${shortJson(job.data)}`);
    // The answer's JSON body becomes the job's `result`.
    send(200, { ok: true, handledBy: 'groupq example endpoint', receivedAt: Date.now() });
  });

  await new Promise((resolve, reject) => {
    server.once('error', (err) => reject(new Error(`example endpoint cannot listen on ${host}:${port}: ${err.message}`)));
    server.listen(port, host, () => resolve(undefined));
  });
  const address = server.address();
  const boundPort = typeof address === 'object' && address ? address.port : port;
  return {
    url: `http://${host}:${boundPort}/jobs`,
    port: boundPort,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve(undefined));
        server.closeAllConnections();
      }),
  };
}

async function main() {
  const raw = process.env.EXAMPLE_ENDPOINT_PORT;
  const port = raw ? Number(raw) : 8788;
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`EXAMPLE_ENDPOINT_PORT must be a port number, got "${raw}"`);
  const secrets = [process.env.GROUPQ_SIGNING_SECRET || DEV_SIGNING_SECRET, process.env.GROUPQ_SIGNING_SECRET_NEXT || ''];
  const endpoint = await startExampleEndpoint({ port, secrets });
  console.log(`Example endpoint: ${endpoint.url}`);
  const stop = () => void endpoint.close().then(() => process.exit(0));
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  main().catch((err) => {
    console.error(`example-endpoint: ${err.message}`);
    process.exit(1);
  });
}
