// Publish tokens add jobs and nothing more (docs/security.md#what-a-public-publish-token-exposes), through the Worker against real
// Redis: `group`, `data` and `id` always; `delayMs` and `callbackUrl` only as far as the queue
// opens them; every other field 403 FIELD_NOT_ALLOWED. Their ids live apart (`x` is the job
// `pub:x`), a duplicate tells them no state, `repeat:` ids are the scheduler's;
// publishRateLimit bounds the jobs each client adds (429 RATE_LIMITED with Retry-After) on the
// whole queue, however many partitions, a client being its address on the edge and one client in
// local development; publishTokenRateLimit bounds a token's clients together; publishMaxJobs and
// publishMaxDataBytes bound what publishers store, never the admin. Every refusal leaves the
// queue's keys exactly as they were, a batch refused whole.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningWorker, startWorker } from '../helpers/worker';
import { expectError, expectJson, expectRefused, pausedQueue, quietQueue, uniqueQueue, useHttpSuite } from './support';

const suite = useHttpSuite();
const TOKEN = 'browser-publish-token-0001';
const HOOKS = 'https://hooks.example.com';

const asBrowser = (token = TOKEN, headers: Record<string, string> = {}) => ({ authorization: `Bearer ${token}`, ...headers });

/** POSTs one job (or a batch, `{jobs}`) with the publish token. */
function publish(queue: string, body: unknown, headers: Record<string, string> = asBrowser()) {
  const path = typeof body === 'object' && body !== null && 'jobs' in body ? 'jobs/batch' : 'jobs';
  return suite.worker.api(`/v1/queues/${queue}/${path}`, { method: 'POST', json: body, headers });
}

/**
 * A paused queue with the publish token, and what the test opens to it. No events URLs: these
 * tests read the rest of the answers whole (test/events/capability-routes.test.ts reads those).
 */
const publishQueue = (config: Record<string, unknown> = {}) =>
  quietQueue(suite, 'pub', { publishTokens: [TOKEN], publishEvents: 'none', ...config });

const job = async (queue: string, id: string) => suite.worker.api(`/v1/queues/${queue}/jobs/${encodeURIComponent(id)}`);

describe('what a publish token may send', () => {
  it('group, data and id: the id reads back as pub:<id>, never the same job as the admin\'s id', async () => {
    const queue = await publishQueue();
    const sent = await expectJson(await publish(queue, { id: 'welcome-42', group: 'g', data: { from: 'browser' } }), 201);
    expect(sent).toEqual({ id: 'pub:welcome-42', state: 'waiting' });
    expect((await expectJson(await job(queue, 'pub:welcome-42'), 200)).data).toEqual({ from: 'browser' });
    // The backend's own welcome-42 is another job: new, not a duplicate of the browser's.
    const admin = await suite.worker.api(`/v1/queues/${queue}/jobs`, { method: 'POST', json: { id: 'welcome-42', group: 'g', data: 'backend' } });
    expect(await expectJson(admin, 201)).toEqual({ id: 'welcome-42', state: 'waiting' });
    expect((await expectJson(await job(queue, 'welcome-42'), 200)).data).toBe('backend');
    // And the browser cannot reach it either: its welcome-42 stays its own.
    expect(await expectJson(await publish(queue, { id: 'welcome-42', group: 'g' }), 200)).toEqual({ id: 'pub:welcome-42', duplicate: true });
  });

  it('a duplicate answers a publish token with no state; the admin still learns it', async () => {
    const queue = await publishQueue();
    await expectJson(await publish(queue, { id: 'once', group: 'g' }), 201);
    const again = await expectJson(await publish(queue, { id: 'once', group: 'g' }), 200);
    expect(again).toEqual({ id: 'pub:once', duplicate: true });
    const batch = await expectJson(await publish(queue, { jobs: [{ id: 'once', group: 'g' }, { id: 'twice', group: 'g' }] }), 201);
    expect(batch.jobs).toEqual([{ id: 'pub:once', duplicate: true }, { id: 'pub:twice', state: 'waiting' }]);
    const admin = await suite.worker.api(`/v1/queues/${queue}/jobs`, { method: 'POST', json: { id: 'pub:once', group: 'g' } });
    expect(await expectJson(admin, 200)).toEqual({ id: 'pub:once', state: 'waiting', duplicate: true });
  });

  it('every other field: 403 FIELD_NOT_ALLOWED naming it, nothing written', async () => {
    const queue = await publishQueue();
    const refused: [Record<string, unknown>, string][] = [
      [{ priority: 1000 }, 'priority'],
      [{ orderMs: 0 }, 'orderMs'],
      [{ runAt: Date.now() + 60_000 }, 'runAt'],
      [{ maxAttempts: 1000 }, 'maxAttempts'],
      [{ backoff: { delayMs: 86_400_000 } }, 'backoff'],
      [{ timeoutMs: 86_400_000 }, 'timeoutMs'],
      [{ debounce: { key: 'k', delayMs: 1000 } }, 'debounce'],
      [{ ttlMs: 1000 }, 'ttlMs'], // its jobs get the queue's publishTtlMs instead
      // Closed by default: publishMaxDelayMs 0, publishCallbackOrigins [].
      [{ delayMs: 1000 }, 'delayMs'],
      [{ callbackUrl: `${HOOKS}/done` }, 'callbackUrl'],
    ];
    for (const [fields, name] of refused) {
      const body = await expectRefused(suite, queue, 403, 'FIELD_NOT_ALLOWED', () => publish(queue, { group: 'g', ...fields }));
      expect(body.error.details).toEqual({ fields: [name] });
    }
  });

  it('a batch with one such job is refused whole, every field named', async () => {
    const queue = await publishQueue();
    const jobs = [{ id: 'fine', group: 'g' }, { group: 'g', priority: 5 }, { group: 'h', maxAttempts: 9, priority: 1 }];
    const body = await expectRefused(suite, queue, 403, 'FIELD_NOT_ALLOWED', () => publish(queue, { jobs }));
    expect(body.error.details).toEqual({ fields: ['maxAttempts', 'priority'] });
    await expectError(await job(queue, 'pub:fine'), 404, 'JOB_NOT_FOUND');
  });

  it('delayMs up to publishMaxDelayMs; past it 400 VALIDATION_FAILED at delayMs, nothing written', async () => {
    const queue = await publishQueue({ publishMaxDelayMs: 60_000 });
    expect((await expectJson(await publish(queue, { group: 'g', delayMs: 60_000 }), 201)).state).toBe('delayed');
    const one = await expectRefused(suite, queue, 400, 'VALIDATION_FAILED', () => publish(queue, { group: 'g', delayMs: 60_001 }));
    expect(one.error.details).toEqual([{ path: 'delayMs', message: expect.stringContaining('publishMaxDelayMs') }]);
    const batch = await expectRefused(suite, queue, 400, 'VALIDATION_FAILED', () =>
      publish(queue, { jobs: [{ group: 'g', delayMs: 10 }, { group: 'g', delayMs: 120_000 }] }),
    );
    expect(batch.error.details).toEqual([{ path: 'jobs.1.delayMs', message: expect.any(String) }]);
  });

  it('callbackUrl on an origin of publishCallbackOrigins; any other origin is 403 FIELD_NOT_ALLOWED', async () => {
    const queue = await publishQueue({ publishCallbackOrigins: [HOOKS] });
    const sent = await expectJson(await publish(queue, { id: 'cb', group: 'g', callbackUrl: `${HOOKS}/outcomes?u=1` }), 201);
    expect((await expectJson(await job(queue, sent.id), 200)).callbackUrl).toBe(`${HOOKS}/outcomes?u=1`);
    for (const url of ['https://evil.example.com/x', 'https://hooks.example.com:8443/x', 'https://sub.hooks.example.com/x']) {
      const body = await expectRefused(suite, queue, 403, 'FIELD_NOT_ALLOWED', () => publish(queue, { group: 'g', callbackUrl: url }));
      expect(body.error.details).toEqual({ fields: ['callbackUrl'] });
      // The origin that is not listed, named: the queue does allow callbackUrl, on its origins.
      const origin = new URL(url).origin;
      expect(body.error.message).toBe(`a publish token may not send callbackUrl to this queue: the origin of callbackUrl, ${origin}, is not in its publishCallbackOrigins`);
    }
    // A batch names each origin once; the queue's own origins are not told to a publish token.
    const jobs = [{ group: 'g', callbackUrl: 'https://b.example.com/1' }, { group: 'g', callbackUrl: 'https://a.example.com/2' }, { group: 'g', callbackUrl: 'https://b.example.com/3' }];
    const batch = await expectRefused(suite, queue, 403, 'FIELD_NOT_ALLOWED', () => publish(queue, { jobs }));
    expect(batch.error.message).toBe('a publish token may not send callbackUrl to this queue: the origins of callbackUrl, https://a.example.com, https://b.example.com, are not in its publishCallbackOrigins');
    expect(batch.error.message).not.toContain(HOOKS);
  });

  it('ids starting with repeat: belong to the scheduler: 400 for a publish token and for the admin', async () => {
    const queue = await publishQueue();
    const id = `repeat:daily:${Date.now()}`;
    for (const headers of [asBrowser(), {}]) {
      const one = await expectRefused(suite, queue, 400, 'VALIDATION_FAILED', () => publish(queue, { id, group: 'g' }, headers));
      expect(one.error.details).toEqual([{ path: 'id', message: expect.stringContaining('repeat:') }]);
      await expectRefused(suite, queue, 400, 'VALIDATION_FAILED', () => publish(queue, { jobs: [{ group: 'g' }, { id, group: 'g' }] }, headers));
    }
  });

  it('a publish token id longer than 252 characters (no room for pub:) is 400 at id', async () => {
    const queue = await publishQueue();
    const body = await expectRefused(suite, queue, 400, 'VALIDATION_FAILED', () => publish(queue, { id: 'x'.repeat(253), group: 'g' }));
    expect(body.error.details).toEqual([{ path: 'id', message: expect.any(String) }]);
    expect((await expectJson(await publish(queue, { id: 'y'.repeat(252), group: 'g' }), 201)).id).toBe(`pub:${'y'.repeat(252)}`);
  });
});

describe('publishRateLimit', () => {
  it('past max jobs in the window: 429 RATE_LIMITED with Retry-After, nothing written; the admin is not limited', async () => {
    const queue = await publishQueue({ publishRateLimit: { max: 3, periodMs: 60_000 } });
    await expectJson(await publish(queue, { jobs: [{ group: 'g' }, { group: 'h' }] }), 201);
    // Two more would make 4: the batch is refused whole.
    const refused = await publish(queue, { jobs: [{ id: 'a', group: 'g' }, { id: 'b', group: 'g' }] });
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect((await expectError(refused, 429, 'RATE_LIMITED')).error.details).toEqual({ limit: 'publishRateLimit', max: 3, periodMs: 60_000 });
    await expectError(await job(queue, 'pub:a'), 404, 'JOB_NOT_FOUND');
    // One more fits exactly; then even one is refused, and the refusal writes nothing.
    await expectJson(await publish(queue, { group: 'g' }), 201);
    await expectRefused(suite, queue, 429, 'RATE_LIMITED', () => publish(queue, { group: 'g' }));
    // A field not allowed is refused before the rate limit is looked at.
    await expectRefused(suite, queue, 403, 'FIELD_NOT_ALLOWED', () => publish(queue, { group: 'g', priority: 1 }));
    for (let i = 0; i < 5; i++) await expectJson(await suite.worker.api(`/v1/queues/${queue}/jobs`, { method: 'POST', json: { group: 'g' } }), 201);
  });

  it("in local development every client is one: a CF-Connecting-IP of the client's own opens no fresh window", async () => {
    const queue = await publishQueue({ publishRateLimit: { max: 2, periodMs: 60_000 } });
    const from = (address: string) => asBrowser(TOKEN, { 'cf-connecting-ip': address, 'mf-cf-blob': JSON.stringify({ clientIp: address }) });
    await expectJson(await publish(queue, { group: 'g' }, from('203.0.113.1')), 201);
    await expectJson(await publish(queue, { group: 'g' }, from('203.0.113.2')), 201);
    for (const address of ['203.0.113.3', '2001:db8::1', '198.51.100.9']) {
      await expectRefused(suite, queue, 429, 'RATE_LIMITED', () => publish(queue, { group: 'g' }, from(address)));
    }
  });

  it('a batch larger than max could never pass: 400 at jobs, not a 429 to retry, nothing written', async () => {
    const queue = await publishQueue({ publishRateLimit: { max: 3, periodMs: 60_000 } });
    const jobs = Array.from({ length: 4 }, () => ({ group: 'g' }));
    const refused = await expectRefused(suite, queue, 400, 'VALIDATION_FAILED', () => publish(queue, { jobs }));
    expect(refused.error.details).toEqual([{ path: 'jobs', message: expect.stringContaining('publishRateLimit.max (3)') }]);
    await expectJson(await publish(queue, { jobs: jobs.slice(1) }), 201);
  });

  it('null: no limit', async () => {
    const queue = await publishQueue({ publishRateLimit: null });
    const jobs = Array.from({ length: 200 }, (_, i) => ({ group: `g${i % 7}` }));
    expect((await expectJson(await publish(queue, { jobs }), 201)).jobs).toHaveLength(200);
  });

  it('defaults to 120 jobs a minute', async () => {
    const queue = await publishQueue();
    const jobs = Array.from({ length: 120 }, (_, i) => ({ group: `g${i % 7}` }));
    await expectJson(await publish(queue, { jobs }), 201);
    const details = (await expectError(await publish(queue, { group: 'g' }), 429, 'RATE_LIMITED')).error.details;
    expect(details).toEqual({ limit: 'publishRateLimit', max: 120, periodMs: 60_000 });
  });
});

describe("on Cloudflare's edge: a client is its address (docs/security.md#what-a-client-is)", () => {
  // A Worker set up as deployed (no GROUPQ_ALLOW_HTTP_LOOPBACK): it trusts CF-Connecting-IP, as
  // Cloudflare's edge sets it; workerd gives it `request.cf` as the edge does.
  let edge: RunningWorker;
  beforeAll(async () => {
    edge = await startWorker(suite.stack, { GROUPQ_ALLOW_HTTP_LOOPBACK: 'false' });
  });
  afterAll(async () => {
    await edge?.dispose();
  });

  const edgeQueue = async (config: Record<string, unknown>) => {
    const queue = uniqueQueue('edge');
    await pausedQueue(edge, queue, { endpoint: 'https://jobs.example.com/jobs', publishTokens: [TOKEN, `${TOKEN}-2`], ...config });
    return queue;
  };
  const from = (address: string, token = TOKEN) => asBrowser(token, { 'cf-connecting-ip': address });
  const send = (queue: string, headers: Record<string, string>, body: unknown = { group: 'g' }) =>
    edge.api(`/v1/queues/${queue}/jobs`, { method: 'POST', json: body, headers });
  /** Whether each address gets a job in, in order, with publishRateLimit.max 1. */
  const admitted = async (queue: string, addresses: string[]) => {
    const statuses: number[] = [];
    for (const address of addresses) statuses.push((await send(queue, from(address))).status);
    return statuses;
  };

  it('IPv4: each address its own window, every token of one address the same; an IPv4-mapped IPv6 address is its IPv4', async () => {
    const queue = await edgeQueue({ publishRateLimit: { max: 1, periodMs: 60_000 } });
    await expectJson(await send(queue, from('203.0.113.7')), 201);
    await expectError(await send(queue, from('203.0.113.7')), 429, 'RATE_LIMITED');
    await expectError(await send(queue, from('203.0.113.7', `${TOKEN}-2`)), 429, 'RATE_LIMITED');
    await expectError(await send(queue, from('::ffff:203.0.113.7')), 429, 'RATE_LIMITED');
    await expectJson(await send(queue, from('203.0.113.8')), 201);
  });

  it('IPv6: a client is its /56 by default, its publishIpv6Prefix when set (48 to 64)', async () => {
    const byDefault = await edgeQueue({ publishRateLimit: { max: 1, periodMs: 60_000 } });
    // 2001:db8:0:1:: and 2001:db8:0:ff:: share a /56; 2001:db8:0:100:: is the next /56.
    expect(await admitted(byDefault, ['2001:db8:0:1::1', '2001:db8:0:ff:abcd::2', '2001:db8:0:100::1'])).toEqual([201, 429, 201]);
    const by64 = await edgeQueue({ publishRateLimit: { max: 1, periodMs: 60_000 }, publishIpv6Prefix: 64 });
    expect(await admitted(by64, ['2001:db8:0:1::1', '2001:db8:0:1:ffff::2', '2001:db8:0:2::1'])).toEqual([201, 429, 201]);
    const by48 = await edgeQueue({ publishRateLimit: { max: 1, periodMs: 60_000 }, publishIpv6Prefix: 48 });
    expect(await admitted(by48, ['2001:db8:0:1::1', '2001:db8:0:ffff::2', '2001:db8:1::1'])).toEqual([201, 429, 201]);
    for (const prefix of [47, 65]) {
      const res = await edge.api(`/v1/queues/${by48}`, { method: 'PATCH', json: { publishIpv6Prefix: prefix } });
      await expectError(res, 400, 'VALIDATION_FAILED');
    }
  });

  it('publishTokenRateLimit bounds all clients of one token together, under concurrency; another token has its own', async () => {
    const queue = await edgeQueue({ publishRateLimit: { max: 5, periodMs: 60_000 }, publishTokenRateLimit: { max: 10, periodMs: 60_000 } });
    const sent = await Promise.all(Array.from({ length: 40 }, (_, i) => send(queue, from(`198.51.100.${i + 1}`), { group: `g${i}` })));
    const statuses = sent.map((res) => res.status);
    expect(statuses.filter((status) => status === 201)).toHaveLength(10);
    expect(statuses.filter((status) => status === 429)).toHaveLength(30);
    const refused = await expectError(await send(queue, from('198.51.100.200')), 429, 'RATE_LIMITED');
    expect(refused.error.details).toEqual({ limit: 'publishTokenRateLimit', max: 10, periodMs: 60_000 });
    await expectJson(await send(queue, from('198.51.100.200', `${TOKEN}-2`)), 201);
    const waiting = (await expectJson(await edge.api(`/v1/queues/${queue}`), 200)).counts.waiting;
    expect(waiting).toBe(11);
  });
});

describe('a partitioned queue counts each client once, on the queue', () => {
  it('8 partitions: many concurrent publishes from one client get exactly publishRateLimit.max jobs in', async () => {
    const queue = await publishQueue({ partitions: 8, concurrency: 8, publishRateLimit: { max: 20, periodMs: 60_000 } });
    // Groups g0..g59 fall in every one of the 8 partitions (fnv1a32(group) % 8).
    const sent = await Promise.all(Array.from({ length: 60 }, (_, i) => publish(queue, { group: `g${i}` })));
    const statuses = sent.map((res) => res.status);
    expect(statuses.filter((status) => status === 201)).toHaveLength(20);
    expect(statuses.filter((status) => status === 429)).toHaveLength(40);
    expect((await expectJson(await suite.worker.api(`/v1/queues/${queue}`), 200)).counts.waiting).toBe(20);
    // A batch over several partitions is refused at the queue's root before any partition is written.
    await expectRefused(suite, queue, 429, 'RATE_LIMITED', () => publish(queue, { jobs: [{ group: 'x' }, { group: 'y' }, { group: 'z' }] }));
    const waiting = (await expectJson(await suite.worker.api(`/v1/queues/${queue}`), 200)).counts.waiting;
    expect(waiting).toBe(20);
  });
});

describe('publishMaxJobs', () => {
  it('past it publishers get 429 QUEUE_FULL naming it, nothing written; the admin still enqueues; room comes back as jobs end', async () => {
    const queue = await publishQueue({ publishMaxJobs: 3, maxJobs: 100 });
    await expectJson(await publish(queue, { jobs: [{ id: 'a', group: 'g' }, { group: 'g', id: 'b' }] }), 201);
    await expectJson(await publish(queue, { group: 'h' }), 201);
    const refused = await expectRefused(suite, queue, 429, 'QUEUE_FULL', () => publish(queue, { group: 'g' }));
    expect(refused.error.details).toEqual({ limit: 'publishMaxJobs', publishMaxJobs: 3 });
    for (let i = 0; i < 3; i++) await expectJson(await suite.worker.api(`/v1/queues/${queue}/jobs`, { method: 'POST', json: { group: 'g' } }), 201);
    // A published job that leaves (removed here; completed, failed, cancelled alike) makes room.
    expect((await suite.worker.api(`/v1/queues/${queue}/jobs/pub:a`, { method: 'DELETE' })).status).toBe(204);
    await expectJson(await publish(queue, { group: 'g' }), 201);
    await expectRefused(suite, queue, 429, 'QUEUE_FULL', () => publish(queue, { group: 'g' }));
  });
});

describe('publishMaxDataBytes', () => {
  it("caps a published job's data (default 64 KiB): 413 PAYLOAD_TOO_LARGE naming it, nothing written; the admin's bound is maxPayloadBytes", async () => {
    const queue = await publishQueue();
    const big = 'x'.repeat(65_536); // 65,538 bytes of JSON
    const refused = await expectRefused(suite, queue, 413, 'PAYLOAD_TOO_LARGE', () => publish(queue, { group: 'g', data: big }));
    expect(refused.error.details).toEqual({ index: 0, publishMaxDataBytes: 65_536 });
    await expectJson(await suite.worker.api(`/v1/queues/${queue}/jobs`, { method: 'POST', json: { group: 'g', data: big } }), 201);
    const small = await publishQueue({ publishMaxDataBytes: 100 });
    const batch = await expectRefused(suite, small, 413, 'PAYLOAD_TOO_LARGE', () =>
      publish(small, { jobs: [{ group: 'g', data: 'x'.repeat(98) }, { group: 'g', data: 'x'.repeat(99) }] }),
    );
    expect(batch.error.details).toEqual({ index: 1, publishMaxDataBytes: 100 });
    // maxPayloadBytes bounds published jobs too, when it is the lower.
    const lower = await publishQueue({ maxPayloadBytes: 50 });
    const capped = await expectRefused(suite, lower, 413, 'PAYLOAD_TOO_LARGE', () => publish(lower, { group: 'g', data: 'x'.repeat(60) }));
    expect(capped.error.details).toEqual({ index: 0, maxPayloadBytes: 50 });
  });
});
