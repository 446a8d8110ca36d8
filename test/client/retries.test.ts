// The client's safe retries, through a real flaky proxy in front of the real Worker: a lost
// answer or a 503 is retried only for idempotent calls (reads, PUTs, enqueues whose jobs have ids,
// the client's own by default), so a retry never enqueues a job twice.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GroupqClient } from '../../src/client';
import { ADMIN_TOKEN } from '../helpers/worker';
import { caught } from './support';
import { uniqueQueue, useHttpSuite } from '../http/support';

/** What the proxy does with the next requests, in order; then it forwards normally. */
type Fault = 'drop-answer' | '503' | { retryAfter: string };

interface FlakyProxy {
  url: string;
  faults: Fault[];
  /** Requests seen, as "METHOD path". */
  seen: string[];
  /** When each request came (Date.now()). */
  seenAt: number[];
  close(): Promise<void>;
}

async function startFlakyProxy(target: string): Promise<FlakyProxy> {
  const proxy: FlakyProxy = { url: '', faults: [], seen: [], seenAt: [], close: async () => {} };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', async () => {
      proxy.seen.push(`${req.method} ${req.url}`);
      proxy.seenAt.push(Date.now());
      const fault = proxy.faults.shift();
      if (fault === '503' || typeof fault === 'object') {
        const retryAfter = typeof fault === 'object' ? { 'retry-after': fault.retryAfter } : {};
        res.writeHead(503, { 'content-type': 'application/json', ...retryAfter });
        res.end(JSON.stringify({ error: { code: 'REDIS_UNAVAILABLE', message: 'redis is unavailable' } }));
        return;
      }
      const body = chunks.length > 0 ? Buffer.concat(chunks) : undefined;
      const headers = new Headers();
      for (const name of ['authorization', 'content-type', 'accept']) {
        const value = req.headers[name];
        if (typeof value === 'string') headers.set(name, value);
      }
      const answer = await fetch(`${target}${req.url}`, { method: req.method, headers, body });
      const text = await answer.text();
      // The Worker did the work; the caller never hears of it.
      if (fault === 'drop-answer') return void req.socket.destroy();
      res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'text/plain' });
      res.end(text);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  proxy.url = `http://127.0.0.1:${port}`;
  proxy.close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  return proxy;
}

const suite = useHttpSuite();
let proxy: FlakyProxy;
beforeAll(async () => {
  proxy = await startFlakyProxy(suite.worker.url);
});
afterAll(() => proxy?.close());

/** A paused queue, reached directly and through the proxy (`mintIds`: the flaky client's). */
async function freshQueue(mintIds = true) {
  const name = uniqueQueue('client-retries');
  const direct = new GroupqClient({ url: suite.worker.url, token: ADMIN_TOKEN }).queue(name);
  await direct.configure({ endpoint: 'https://example.com/hook' });
  await direct.pause();
  const flaky = new GroupqClient({ url: proxy.url, token: ADMIN_TOKEN, mintIds }).queue(name);
  proxy.seen.length = 0;
  proxy.seenAt.length = 0;
  return { direct, flaky };
}

describe('client retries', () => {
  it('resends an enqueue with an id whose answer was lost, and the job exists once', async () => {
    const { direct, flaky } = await freshQueue();
    proxy.faults = ['drop-answer'];
    expect(await flaky.add({ group: 'g', id: 'order-7', data: 1 })).toEqual({ id: 'order-7', state: 'waiting', duplicate: true });
    expect(proxy.seen).toHaveLength(2);
    expect((await direct.counts()).waiting).toBe(1);
  });

  it('resends an enqueue without an id too, with the id it made: the job exists once', async () => {
    const { direct, flaky } = await freshQueue();
    proxy.faults = ['drop-answer'];
    const added = await flaky.add({ group: 'g', data: 1 });
    expect(added).toMatchObject({ state: 'waiting', duplicate: true });
    expect(added.id).toMatch(/^[A-Za-z0-9_-]{16}$/);
    expect(proxy.seen).toHaveLength(2);
    expect((await direct.counts()).waiting).toBe(1);
  });

  it('resends a batch without ids through 503s, with the ids it made: each job exists once', async () => {
    const { direct, flaky } = await freshQueue();
    proxy.faults = ['503', 'drop-answer'];
    const results = await flaky.addBatch([{ group: 'g' }, { group: 'h' }]);
    expect(results.every((r) => r.duplicate === true)).toBe(true);
    expect(proxy.seen).toHaveLength(3);
    expect((await direct.counts()).waiting).toBe(2);
  });

  it('with mintIds off, does not resend an enqueue without an id: the error says no answer came', async () => {
    const { direct, flaky } = await freshQueue(false);
    proxy.faults = ['drop-answer'];
    expect(await caught(flaky.add({ group: 'g', data: 1 }))).toMatchObject({ code: 'NETWORK_ERROR', status: 0 });
    expect(proxy.seen).toHaveLength(1);
    expect((await direct.counts()).waiting).toBe(1);
  });

  it('with mintIds off, resends a batch only when every job has an id', async () => {
    const { direct, flaky } = await freshQueue(false);
    proxy.faults = ['503', '503'];
    const results = await flaky.addBatch([{ group: 'g', id: 'a' }, { group: 'g', id: 'b' }]);
    expect(results.map((r) => r.id)).toEqual(['a', 'b']);
    expect(proxy.seen).toHaveLength(3);
    proxy.seen.length = 0;
    proxy.faults = ['503'];
    expect(await caught(flaky.addBatch([{ group: 'g', id: 'c' }, { group: 'g' }]))).toMatchObject({
      code: 'REDIS_UNAVAILABLE',
      status: 503,
    });
    expect(proxy.seen).toHaveLength(1);
    expect((await direct.counts()).waiting).toBe(2);
  });

  it('retries reads and PUTs through 503s and lost answers', async () => {
    const { flaky } = await freshQueue();
    proxy.faults = ['503', 'drop-answer', '503'];
    expect((await flaky.get()).paused).toBe(true);
    expect(proxy.seen).toHaveLength(4);
    proxy.faults = ['drop-answer'];
    expect((await flaky.configure({ endpoint: 'https://example.com/other' })).config.endpoint).toBe('https://example.com/other');
  });

  it('does not retry calls that are not idempotent', async () => {
    const { direct, flaky } = await freshQueue();
    await direct.add({ group: 'g', id: 'x', delayMs: 3_600_000 });
    proxy.faults = ['503'];
    expect(await caught(flaky.promoteJob('x'))).toMatchObject({ code: 'REDIS_UNAVAILABLE', status: 503 });
    expect(proxy.seen).toHaveLength(1);
    expect((await direct.getJob('x')).state).toBe('delayed');
  });

  it("waits what a 503's Retry-After asks (seconds or a date) before the next try", async () => {
    const { flaky } = await freshQueue();
    proxy.faults = [{ retryAfter: '1' }];
    expect((await flaky.get()).paused).toBe(true);
    expect(proxy.seenAt).toHaveLength(2);
    expect(proxy.seenAt[1]! - proxy.seenAt[0]!).toBeGreaterThanOrEqual(950);

    proxy.seenAt.length = 0;
    // HTTP dates have whole seconds: this one is 1-2 s away.
    proxy.faults = [{ retryAfter: new Date(Date.now() + 2_000).toUTCString() }];
    expect((await flaky.get()).paused).toBe(true);
    expect(proxy.seenAt[1]! - proxy.seenAt[0]!).toBeGreaterThanOrEqual(950);
  });

  it('does not wait for a Retry-After over a minute: the error comes at once and says how long', async () => {
    const { flaky } = await freshQueue();
    proxy.faults = [{ retryAfter: '120' }];
    expect(await caught(flaky.get())).toMatchObject({ code: 'REDIS_UNAVAILABLE', status: 503, retryAfterMs: 120_000 });
    expect(proxy.seen).toHaveLength(1);
  });

  it('gives up after `retries` more attempts', async () => {
    const { flaky } = await freshQueue();
    proxy.faults = ['503', '503', '503', '503', '503'];
    expect(await caught(flaky.get())).toMatchObject({ code: 'REDIS_UNAVAILABLE' });
    expect(proxy.seen).toHaveLength(4);
    proxy.faults = ['503'];
    const once = new GroupqClient({ url: proxy.url, token: ADMIN_TOKEN, retries: 0 }).queue(flaky.name);
    proxy.seen.length = 0;
    expect(await caught(once.get())).toMatchObject({ status: 503 });
    expect(proxy.seen).toHaveLength(1);
    proxy.faults = [];
  });
});
