// `groupq serve` as users run it (docs/self-hosting.md): the command line's bin, `node dist/cli.js
// serve`, settings from the environment only. It starts on a Redis over TCP, answers, and on
// SIGTERM stops with exit 0; settings it cannot run with stop it at once with exit 1 and one line
// naming the setting, no stack trace (a Worker answers 500 instead; a process that kept running
// would fail every request); over Upstash's REST API (UPSTASH_REDIS_REST_*, no REDIS_URL) a job
// goes round trip as over TCP: enqueued, pushed signed to an endpoint, completed with its result;
// and over a pool of two databases over TCP, a partitioned queue spread on both.
import { spawn } from 'node:child_process';
import { mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GroupqClient } from '../../src/client';
import { verifyDelivery } from '../../src/receiver';
import { freePort, startRedis } from '../../scripts/redis-server.mjs';
import { createRespClient } from '../../scripts/resp.mjs';
import { CLI_JS, startServerProcess } from '../../scripts/server-process.mjs';
import { poll } from '../delivery/support';
import { type Endpoint, startEndpoint } from '../helpers/endpoint';
import { startServers } from '../helpers/servers';
import { ADMIN_TOKEN, type PrivateStack, SIGNING_SECRET, startPrivateStack } from '../helpers/worker';

const TOKENS = { GROUPQ_ADMIN_TOKEN: ADMIN_TOKEN, GROUPQ_SIGNING_SECRET: SIGNING_SECRET };
/** A line of a stack trace, as Node prints one. */
const STACK_LINE = /^\s+at /m;

let stack: PrivateStack;
let endpoint: Endpoint;

beforeAll(async () => {
  stack = await startPrivateStack();
  endpoint = await startEndpoint(() => ({ status: 200, headers: { 'content-type': 'application/json' }, body: '{"done":true}' }));
});
afterAll(async () => {
  await endpoint?.close();
  await stack?.close();
});

/** `node dist/cli.js serve` with `env` (and PATH) alone, until it exits: for settings it must refuse. */
function serveUntilExit(env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, [CLI_JS, 'serve'], { env: { PATH: process.env.PATH, HOST: '127.0.0.1', PORT: '0', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  // A process that took the settings would listen on: the test's limit ends it, and it is killed then.
  const killer = setTimeout(() => child.kill('SIGKILL'), 30_000);
  return new Promise((resolve) => {
    child.once('close', (code) => {
      clearTimeout(killer);
      resolve({ code, output });
    });
  });
}

/** A job through the server at `url`: enqueued, pushed signed with the deployment's secret, completed with the endpoint's answer. */
async function roundTrip(url: string, name: string, data: Record<string, string>) {
  const queue = new GroupqClient({ url, token: ADMIN_TOKEN }).queue(name);
  await queue.configure({ endpoint: endpoint.url, keepCompleted: 10 });
  const { id } = await queue.add({ group: 'g', data });
  const job = await poll(async () => {
    const read = await queue.getJob(id);
    return read.state === 'completed' ? read : undefined;
  }, { timeoutMs: 30_000, what: `job ${id} completed` });
  expect(job.result).toEqual({ done: true });
  const received = endpoint.received.find((r) => r.job.id === id)!;
  const delivery = await verifyDelivery({ headers: received.headers, body: received.rawBody }, { secret: SIGNING_SECRET });
  expect(delivery).toMatchObject({ id, queue: name, group: 'g', data, attempt: 1 });
}

describe('groupq serve, the command', () => {
  it('starts on a Redis over TCP, takes a job round trip, and stops on SIGTERM with exit 0', async () => {
    const server = await startServerProcess({ ...TOKENS, REDIS_URL: `redis://127.0.0.1:${stack.redisPort}` }, { args: [CLI_JS, 'serve'] });
    try {
      expect(server.output()).toContain(`groupq serve: listening on ${server.url}`);
      await roundTrip(server.url, 'serve-tcp', { over: 'tcp' });
      // The static assets as Workers serves them: each page at its URL with its _headers (the
      // CSP), a page asked for by its file's name sent there, the _headers file never served.
      for (const page of ['/dashboard', '/reference']) {
        const res = await fetch(`${server.url}${page}`);
        expect(res.status).toBe(200);
        expect(res.headers.get('content-security-policy')).toContain("default-src 'none'");
      }
      const byFile = await fetch(`${server.url}/reference.html`, { redirect: 'manual' });
      expect(byFile.status).toBe(307);
      expect(new URL(byFile.headers.get('location')!).pathname).toBe('/reference');
      expect((await fetch(`${server.url}/_headers`)).status).toBe(404);
      // A path no file can have (a stray %) is the app's to answer: its 404, not a 500.
      const stray = await fetch(`${server.url}/%E0%A4%A`);
      expect(stray.status).toBe(404);
      expect((await stray.json()) as unknown).toMatchObject({ error: { code: 'NOT_FOUND' } });
    } finally {
      expect(await server.stop()).toEqual({ code: 0, signal: null });
    }
    expect(server.output()).not.toMatch(STACK_LINE);
  });

  const refused: [string, Record<string, string>, RegExp][] = [
    ['no database: neither REDIS_URL nor UPSTASH_REDIS_REST_*', { ...TOKENS, GROUPQ_ALLOW_HTTP_LOOPBACK: 'true' }, /REDIS_URL \(redis:\/\/host:port\), or UPSTASH_REDIS_REST_URL and UPSTASH_REDIS_REST_TOKEN/],
    ['a Redis that does not answer', { ...TOKENS, REDIS_URL: 'redis://127.0.0.1:1', GROUPQ_ALLOW_HTTP_LOOPBACK: 'true' }, /^groupq serve: .*127\.0\.0\.1:1/m],
    ['a GROUPQ_CRON that is no cron schedule', { ...TOKENS, REDIS_URL: 'redis://127.0.0.1:6379', GROUPQ_CRON: 'every minute' }, /GROUPQ_CRON is not a cron schedule/],
    ['a REDIS_URL on http://', { ...TOKENS, REDIS_URL: 'http://127.0.0.1:6379', GROUPQ_ALLOW_HTTP_LOOPBACK: 'true' }, /REDIS_URL \(expected redis:\/\//],
  ];
  for (const [what, env, named] of refused) {
    it(`exits 1 naming the setting, without a stack trace, on ${what}`, async () => {
      const { code, output } = await serveUntilExit(env);
      expect(code).toBe(1);
      expect(output).toMatch(named);
      expect(output).not.toMatch(STACK_LINE);
      expect(output).not.toContain('listening on');
    });
  }

  it('over a pool of two Redis over TCP (GROUPQ_REDIS_POOL of redis:// URLs), each partition on its database takes jobs round trip', async () => {
    const second = await startRedis({ port: await freePort(), dir: await mkdtemp(path.join(os.tmpdir(), 'groupq-serve-pool-')), appendonly: false });
    const pool = JSON.stringify([{ url: `redis://127.0.0.1:${second.port}` }]);
    const [server] = await startServers(1, { REDIS_URL: `redis://127.0.0.1:${stack.redisPort}`, GROUPQ_REDIS_POOL: pool });
    try {
      const queue = new GroupqClient({ url: server!.url, token: ADMIN_TOKEN }).queue('serve-pool');
      await queue.configure({ endpoint: endpoint.url, keepCompleted: 100, partitions: 4 });
      expect(new Set((await queue.partitions()).map((p) => p.database))).toEqual(new Set([0, 1]));
      const ids = await Promise.all(Array.from({ length: 20 }, async (_, i) => (await queue.add({ group: `g${i}`, data: { i } })).id));
      for (const id of ids) {
        await poll(async () => ((await queue.getJob(id)).state === 'completed' ? true : undefined), { timeoutMs: 30_000, what: `job ${id} completed` });
      }
      // Both databases hold the queue's keys: the pool routed each partition's scripts over TCP.
      for (const port of [stack.redisPort, second.port]) {
        const redis = createRespClient({ port });
        try {
          expect((await redis.call(['KEYS', 'gq:{serve-pool*']) as unknown[]).length).toBeGreaterThan(0);
        } finally {
          redis.close();
        }
      }
    } finally {
      expect(await server!.stop()).toEqual({ code: 0, signal: null });
      await second.stop();
    }
  });

  it("over Upstash's REST API (UPSTASH_REDIS_REST_*, no REDIS_URL), a job goes round trip", async () => {
    const [server] = await startServers(1, { UPSTASH_REDIS_REST_URL: stack.restUrl, UPSTASH_REDIS_REST_TOKEN: stack.restToken });
    try {
      await roundTrip(server!.url, 'serve-rest', { over: 'rest' });
    } finally {
      expect(await server!.stop()).toEqual({ code: 0, signal: null });
    }
  });
});
