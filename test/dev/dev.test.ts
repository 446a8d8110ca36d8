// `npm run dev` as a user runs it: node scripts/dev.mjs on free ports with its own data dir. It
// must print the ready line; the curl commands it prints, replayed as printed, must get a job to
// the example endpoint (signature verified) and completed; the dev ticker must fire the Worker's
// scheduled handler; the example endpoint must refuse bad signatures; a burst of 1,000 jobs must
// drain while every GET gets an answer (issue 20: under wrangler dev's proxy they waited seconds
// and were reset); and SIGTERM must stop every process it started, exit 0 and free every port.
import { existsSync, readdirSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, startRedis } from '../../scripts/redis-server.mjs';
import { createRespClient } from '../../scripts/resp.mjs';
import { createEngine } from '../../src/core/engine';
import { createRedis } from '../../src/core/store/redis';
import { BURST_JOBS, runBurst } from '../helpers/burst';
import { canListen, type DevStack, processesMentioning, READY_TIMEOUT_MS, startDevStack } from '../helpers/dev-stack';
import { expectedSignature, startEndpoint } from '../helpers/endpoint';

/** Splits a printed shell command into words: single quotes (with '\'' escapes) and bare words. */
function shellWords(line: string): string[] {
  const words: string[] = [];
  let word: string | null = null;
  for (let i = 0; i < line.length; i++) {
    const ch = line[i]!;
    if (ch === "'") {
      const end = line.indexOf("'", i + 1);
      if (end < 0) throw new Error(`unterminated quote in: ${line}`);
      word = (word ?? '') + line.slice(i + 1, end);
      i = end;
    } else if (ch === '\\') {
      word = (word ?? '') + (line[++i] ?? '');
    } else if (ch === ' ') {
      if (word !== null) words.push(word);
      word = null;
    } else {
      word = (word ?? '') + ch;
    }
  }
  if (word !== null) words.push(word);
  return words;
}

interface Curl {
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: string;
}

/** What curl would send for `curl [-X M] URL [-H 'k: v']... [-d body]`. */
function parseCurl(line: string): Curl {
  const [command, ...args] = shellWords(line.trim());
  expect(command).toBe('curl');
  const curl: Curl = { method: '', url: '', headers: {} };
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    const value = args[i + 1];
    if (arg === '-X' || arg === '-H' || arg === '-d') {
      if (value === undefined) throw new Error(`${arg} without a value in: ${line}`);
      i++;
      if (arg === '-X') curl.method = value;
      else if (arg === '-d') curl.body = value;
      else {
        const colon = value.indexOf(':');
        curl.headers[value.slice(0, colon).trim().toLowerCase()] = value.slice(colon + 1).trim();
      }
    } else if (arg.startsWith('-')) {
      throw new Error(`unexpected curl option ${arg} in: ${line}`);
    } else {
      curl.url = arg;
    }
  }
  // curl's defaults: POST with -d, else GET.
  curl.method ||= curl.body === undefined ? 'GET' : 'POST';
  return curl;
}

async function replay(curl: Curl): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await fetch(curl.url, { method: curl.method, headers: curl.headers, body: curl.body });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

/** Where scripts/dev-server.mjs bundles the Node server. */
const DEV_SERVER_CACHE = fileURLToPath(new URL('../../.cache/dev-server', import.meta.url));

/** What runs groupq in the dev stack: the same checks hold for each. */
const RUNTIMES: { runtime: string; env: NodeJS.ProcessEnv; node: boolean }[] = [
  { runtime: 'workerd', env: {}, node: false },
  { runtime: 'the Node server', env: { GROUPQ_DEV_RUNTIME: 'node' }, node: true },
];

describe.each(RUNTIMES)('npm run dev ($runtime)', ({ env, node }) => {
  let stack: DevStack;
  let port: number, redisPort: number, examplePort: number;
  const out = () => stack.output();
  const waitForOutput = (pattern: RegExp, timeoutMs: number) => stack.waitForOutput(pattern, timeoutMs);

  /** The printed command lines, in order. */
  const curlLines = () => out().split('\n').filter((line) => line.trim().startsWith('curl '));

  async function jobState(curl: Curl, id: string) {
    const { status, json } = await replay({ ...curl, url: curl.url.replace('<id>', encodeURIComponent(id)) });
    expect(status).toBe(200);
    return json;
  }

  beforeAll(async () => {
    stack = await startDevStack({ ...env, GROUPQ_DEV_TICK_MS: '200' });
    ({ port, redisPort, examplePort } = stack.ports);
  }, READY_TIMEOUT_MS + 10_000);

  afterAll(async () => {
    // Stops the stack only when a test failed before the SIGTERM test.
    await stack?.dispose();
  }, 30_000);

  it('prints the ready line with the Worker URL, and the tokens', () => {
    expect(out()).toMatch(new RegExp(`^groupq dev ready: http://127\\.0\\.0\\.1:${port}$`, 'm'));
    // It says which runtime answers, so a reader of the output knows what they test.
    const started = node ? 'the Node server \\(groupq serve\\)' : 'workerd';
    expect(out()).toMatch(new RegExp(`^Worker: +starting ${started} on http://127\\.0\\.0\\.1:${port} \\.\\.\\.$`, 'm'));
    expect(out()).toMatch(/^GROUPQ_ADMIN_TOKEN=gq_dev_admin_token {2}\(dev default\)$/m);
    expect(out()).toMatch(/^GROUPQ_SIGNING_SECRET=whsec_\S+ {2}\(dev default\)$/m);
  });

  it('the printed curl commands create a queue, enqueue a job, and the job completes at the example endpoint', async () => {
    const [put, post, get] = curlLines().map(parseCurl);
    expect(put).toMatchObject({ method: 'PUT', url: `http://127.0.0.1:${port}/v1/queues/example` });
    expect(JSON.parse(put!.body!)).toEqual({ endpoint: `http://127.0.0.1:${examplePort}/jobs`, keepCompleted: 100 });
    expect(post).toMatchObject({ method: 'POST', url: `http://127.0.0.1:${port}/v1/queues/example/jobs` });
    expect(get).toMatchObject({ method: 'GET', url: `http://127.0.0.1:${port}/v1/queues/example/jobs/<id>` });

    expect((await replay(put!)).status).toBe(200);
    const enqueued = await replay(post!);
    expect(enqueued.status).toBe(201);
    const id = String(enqueued.json.id);

    // The endpoint logs a job only after its signature verified.
    await waitForOutput(new RegExp(`^\\[example\\] job ${id} queue=example group="user:42" attempt=1 data=\\{"hello":"world"\\}$`, 'm'), 20_000);
    let job = await jobState(get!, id);
    while (job.state !== 'completed') {
      expect(['waiting', 'active']).toContain(job.state);
      await new Promise((resolve) => setTimeout(resolve, 100));
      job = await jobState(get!, id);
    }
    expect(job).toMatchObject({ id, group: 'user:42', data: { hello: 'world' }, attempts: 1 });
    expect(job.result).toMatchObject({ ok: true, handledBy: 'groupq example endpoint' });
  });

  it('a delayed job completes once due', async () => {
    const [, post, get] = curlLines().map(parseCurl);
    const enqueued = await replay({ ...post!, body: JSON.stringify({ group: 'user:43', data: { later: true }, delayMs: 1500 }) });
    expect(enqueued).toMatchObject({ status: 201, json: { state: 'delayed' } });
    const id = String(enqueued.json.id);
    await waitForOutput(new RegExp(`^\\[example\\] job ${id} queue=example `, 'm'), 20_000);
    let job = await jobState(get!, id);
    while (job.state !== 'completed') {
      await new Promise((resolve) => setTimeout(resolve, 100));
      job = await jobState(get!, id);
    }
  });

  it('the dev ticker fires the scheduled handler: a delayed job the Worker never heard of gets delivered', async () => {
    // Written straight to Redis through the printed bridge, so no request to the Worker (whose
    // follow-ups also wake for due times) knows this queue: only the cron pass can deliver it.
    const [, restUrl, restToken] = out().match(/^UPSTASH_REDIS_REST_URL=(\S+) UPSTASH_REDIS_REST_TOKEN=(\S+)$/m) ?? [];
    const engine = createEngine({ redis: createRedis({ url: restUrl!, token: restToken! }), allowHttpLoopback: true });
    await engine.putQueue('ticker-check', { endpoint: `http://127.0.0.1:${examplePort}/jobs`, keepCompleted: 10 });
    const { id, state } = await engine.enqueue('ticker-check', { group: 'g', data: { via: 'cron' }, delayMs: 1500 });
    expect(state).toBe('delayed');
    await waitForOutput(new RegExp(`^\\[example\\] job ${id} queue=ticker-check group="g" attempt=1`, 'm'), 20_000);
    for (;;) {
      const job = await engine.getJob('ticker-check', id);
      if (job.state === 'completed') break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  });

  it('the example endpoint refuses deliveries with a bad or old signature or of another kind (401), and replays (409)', async () => {
    const [, secret] = out().match(/^GROUPQ_SIGNING_SECRET=(\S+)/m) ?? [];
    const url = `http://127.0.0.1:${examplePort}/jobs`;
    const body = JSON.stringify({ id: 'sig-check', queue: 'example', group: 'g', data: {}, attempt: 1 });
    let id = 'msg_sig-check-1'; // one per delivery: the endpoint refuses an id it has seen
    const send = (timestamp: number, signature: string, sentBody = body) =>
      fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'webhook-id': id, 'webhook-timestamp': String(timestamp), 'webhook-signature': signature },
        body: sentBody,
      }).then((res) => res.status);
    const now = Math.floor(Date.now() / 1000);
    const sign = (ts: number, key = secret!) => expectedSignature(key, id, String(ts), body);

    expect(await send(now, sign(now))).toBe(200);
    expect(await send(now, sign(now))).toBe(409); // the same delivery again: a replay
    id = 'msg_sig-check-2';
    // Rotation: any one valid signature among several is enough.
    expect(await send(now, `v1,AAAA ${sign(now)}`)).toBe(200);
    // Outside the 300 s tolerance by 10 s, read from the clock now: a second or two of a loaded
    // machine between these sends must not bring the timestamp back inside it.
    const old = Math.floor(Date.now() / 1000) - 310;
    expect(await send(old, sign(old))).toBe(401);
    const future = Math.floor(Date.now() / 1000) + 310;
    expect(await send(future, sign(future))).toBe(401);
    expect(await send(now, sign(now, `whsec_${Buffer.from('another-secret-0123456789').toString('base64')}`))).toBe(401);
    expect(await send(now, sign(now), body.replace('"g"', '"h"'))).toBe(401);
    expect(await send(now, '')).toBe(401);
    id = 'out_sig-check'; // signed, but an outcome callback's id
    expect(await send(now, sign(now))).toBe(401);
    id = 'msg_sig-check-3';

    // A sender that goes away mid-body must not take the endpoint (and the whole stack) down.
    await new Promise<void>((resolve) => {
      const socket = net.connect(examplePort, '127.0.0.1', () => {
        socket.write('POST /jobs HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{');
        setTimeout(() => (socket.destroy(), resolve()), 100);
      });
    });
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await send(now, sign(now))).toBe(200);
  });

  it('a burst of 1,000 jobs drains while every GET gets an answer and no scheduler tick fails', async () => {
    const [, adminToken] = out().match(/^GROUPQ_ADMIN_TOKEN=(\S+)/m) ?? [];
    const api = (apiPath: string, { json, ...init }: RequestInit & { json?: unknown } = {}) =>
      fetch(`http://127.0.0.1:${port}${apiPath}`, {
        ...init,
        headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
        body: json === undefined ? undefined : JSON.stringify(json),
      });
    const endpoint = await startEndpoint(() => ({ status: 200 }));
    try {
      const { answers, counts } = await runBurst({ api }, endpoint, 'burst');
      expect(answers.filter((answer) => !('status' in answer) || answer.status !== 200)).toEqual([]);
      expect(answers.length).toBeGreaterThan(1);
      expect(counts).toMatchObject({ waiting: 0, delayed: 0, active: 0, completed: BURST_JOBS, failed: 0 });
      expect(new Set(endpoint.received.map((r) => r.job.id)).size).toBe(BURST_JOBS);
      expect(out()).not.toMatch(/scheduler tick failed/);
    } finally {
      await endpoint.close();
    }
  }, 240_000);

  it('SIGTERM stops every process it started, exits 0 and frees every port', async () => {
    stack.child.kill('SIGTERM');
    expect(await stack.exit).toEqual({ code: 0, signal: null });
    for (const p of Object.values(stack.ports)) expect(await canListen(p)).toBe(true);
    // workerd (listening on PORT) and redis-server (its title names its port) are gone.
    expect(processesMentioning([`127.0.0.1:${port}`, `--port ${port}`, `127.0.0.1:${redisPort}`])).toEqual([]);
    // The Node server's bundle (scripts/dev-server.mjs) is not left behind in .cache.
    const bundles = existsSync(DEV_SERVER_CACHE) ? readdirSync(DEV_SERVER_CACHE) : [];
    expect(bundles.filter((name) => name.startsWith(`server-${stack.child.pid}-`))).toEqual([]);
  }, 30_000);
});

describe.each(RUNTIMES)('npm run dev ($runtime) next to a Redis that already runs on REDIS_PORT', ({ env }) => {
  it('uses that Redis, leaves it running, and a closed terminal (SIGHUP) stops everything it started', async () => {
    // What a Debian host with systemd has right after `apt-get install redis-server`.
    const dir = await mkdtemp(path.join(os.tmpdir(), 'groupq-dev-hup-'));
    const redis = await startRedis({ port: await freePort(), dir: path.join(dir, 'system-redis'), appendonly: false });
    const client = createRespClient({ port: redis.port });
    let stack: DevStack | undefined;
    try {
      stack = await startDevStack({ ...env, REDIS_PORT: String(redis.port) });
      const { port, restPort, examplePort } = stack.ports;
      expect(stack.output()).toMatch(
        new RegExp(`^Redis: +redis://127\\.0\\.0\\.1:${redis.port} \\(already running there: using it.*; not restarted by npm run dev if it stops\\)$`, 'm'),
      );
      expect((await fetch(`http://127.0.0.1:${port}/health`)).status).toBe(200);

      stack.child.kill('SIGHUP');
      expect(await stack.exit).toEqual({ code: 0, signal: null });
      for (const p of [port, restPort, examplePort]) expect(await canListen(p)).toBe(true);
      expect(processesMentioning([`127.0.0.1:${port}`, `--port ${port}`])).toEqual([]);
      expect(String(await client.call(['PING']))).toBe('PONG'); // not ours to stop
    } finally {
      await stack?.dispose();
      client.close();
      await redis.stop();
      await rm(dir, { recursive: true, force: true });
    }
  }, READY_TIMEOUT_MS + 30_000);
});

describe.each(RUNTIMES)('npm run dev ($runtime) on a PORT that is taken', ({ env }) => {
  it('stops with the same words under each runtime: PORT is not free, set another', async () => {
    const taken = net.createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const { port } = taken.address() as net.AddressInfo;
    try {
      await expect(startDevStack({ ...env, PORT: String(port) })).rejects.toThrow(
        new RegExp(`^groupq dev: PORT ${port} is not free on 127\\.0\\.0\\.1 \\(EADDRINUSE\\); set PORT to another port$`, 'm'),
      );
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
  }, READY_TIMEOUT_MS + 10_000);
});
