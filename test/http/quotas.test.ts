// Quotas for every producer (docs/security.md#every-limit-and-its-default), through the Worker against real Redis: maxJobs
// caps a queue's waiting + delayed jobs (429 QUEUE_FULL with Retry-After, a batch refused whole,
// nothing written) and room comes back as jobs end, however they end; maxDelayMs caps delayMs
// and runAt (400 VALIDATION_FAILED at the field). A queue stored before the count was kept gets
// it from its keys on its first enqueue. maxBytes caps the data of waiting + delayed jobs, and
// publishMaxJobs a publish token's waiting and delayed jobs, with room back as jobs leave; QUEUE_FULL's details
// name the limit.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queueKeys } from '../../src/core/store/keys';
import { partitionOf } from '../../src/core/store/partitions';
import { type Endpoint, startEndpoint } from '../helpers/endpoint';
import { expectError, expectJson, expectRefused, putQueue, quietQueue, uniqueQueue, useHttpSuite, waitForState } from './support';

const suite = useHttpSuite();
let endpoint: Endpoint;
beforeAll(async () => {
  endpoint = await startEndpoint(() => ({ status: 200 }));
});
afterAll(async () => {
  await endpoint?.close();
});

const TOKEN = 'quota-publish-token-0001';

function post(queue: string, body: unknown, headers: Record<string, string> = {}) {
  const path = typeof body === 'object' && body !== null && 'jobs' in body ? 'jobs/batch' : 'jobs';
  return suite.worker.api(`/v1/queues/${queue}/${path}`, { method: 'POST', json: body, headers });
}

async function counts(queue: string) {
  return (await expectJson(await suite.worker.api(`/v1/queues/${queue}`), 200)).counts as Record<string, number>;
}

/** Refused as full, with a Retry-After, and the queue's keys unchanged. */
async function expectFull(queue: string, body: unknown, headers: Record<string, string> = {}) {
  let retryAfter: string | null = null;
  const refused = await expectRefused(suite, queue, 429, 'QUEUE_FULL', async () => {
    const res = await post(queue, body, headers);
    retryAfter = res.headers.get('retry-after');
    return res;
  });
  expect(Number(retryAfter)).toBeGreaterThanOrEqual(1);
  return refused;
}

describe('maxJobs', () => {
  it('caps waiting + delayed jobs: 429 QUEUE_FULL with Retry-After, a batch refused whole, nothing written', async () => {
    const queue = await quietQueue(suite, 'full', { maxJobs: 3, publishTokens: [TOKEN] });
    await expectJson(await post(queue, { id: 'a', group: 'g' }), 201);
    await expectJson(await post(queue, { id: 'b', group: 'g', delayMs: 60_000 }), 201);
    const body = await expectFull(queue, { jobs: [{ id: 'c', group: 'g' }, { id: 'd', group: 'h' }] });
    expect(body.error.details).toEqual({ limit: 'maxJobs', maxJobs: 3 });
    await expectError(await suite.worker.api(`/v1/queues/${queue}/jobs/c`), 404, 'JOB_NOT_FOUND');
    await expectJson(await post(queue, { id: 'c', group: 'g' }), 201);
    expect(await counts(queue)).toMatchObject({ waiting: 2, delayed: 1 });
    await expectFull(queue, { id: 'd', group: 'g' });
    await expectFull(queue, { group: 'g', data: 1 }, { authorization: `Bearer ${TOKEN}` });
    await expectFull(queue, { jobs: [{ id: 'a', group: 'g' }, { id: 'd', group: 'g' }] });
    // A known id adds nothing: it answers as a duplicate, full or not.
    expect(await expectJson(await post(queue, { id: 'a', group: 'g' }), 200)).toMatchObject({ id: 'a', duplicate: true });
    const dupes = await expectJson(await post(queue, { jobs: [{ id: 'a', group: 'g' }, { id: 'b', group: 'g' }] }), 201);
    expect(dupes.jobs.map((j: { duplicate?: true }) => j.duplicate)).toEqual([true, true]);
  });

  it('room comes back as jobs end: removed, cancelled, completed', async () => {
    const queue = await quietQueue(suite, 'room', { maxJobs: 2 });
    await expectJson(await post(queue, { jobs: [{ id: 'a', group: 'g' }, { id: 'b', group: 'h', delayMs: 60_000 }] }), 201);
    await expectFull(queue, { id: 'c', group: 'g' });
    expect((await suite.worker.api(`/v1/queues/${queue}/jobs/a`, { method: 'DELETE' })).status).toBe(204);
    await expectJson(await post(queue, { id: 'c', group: 'g' }), 201);
    await expectFull(queue, { id: 'd', group: 'g' });
    await expectJson(await suite.worker.api(`/v1/queues/${queue}/jobs/b/cancel`, { method: 'POST' }), 200);
    await expectJson(await post(queue, { id: 'd', group: 'h' }), 201);
    await expectFull(queue, { id: 'e', group: 'g' });
    // Delivered and completed: the endpoint answers 200.
    await putQueue(suite.worker, queue, { endpoint: endpoint.url, maxJobs: 2, keepCompleted: 10 });
    await expectJson(await suite.worker.api(`/v1/queues/${queue}/resume`, { method: 'POST' }), 200);
    await waitForState(suite.worker, queue, 'c', 'completed');
    await waitForState(suite.worker, queue, 'd', 'completed');
    await expectJson(await post(queue, { jobs: [{ id: 'e', group: 'g' }, { id: 'f', group: 'h' }] }), 201);
  });

  it('a failed job retried by hand counts again', async () => {
    const failing = await startEndpoint(() => ({ status: 500, headers: { 'groupq-retry': 'false' }, body: 'no' }));
    try {
      const queue = uniqueQueue('retry');
      await putQueue(suite.worker, queue, { endpoint: failing.url, maxJobs: 1 });
      await expectJson(await post(queue, { id: 'a', group: 'g' }), 201);
      await waitForState(suite.worker, queue, 'a', 'failed');
      await expectJson(await suite.worker.api(`/v1/queues/${queue}/pause`, { method: 'POST' }), 200);
      await expectJson(await suite.worker.api(`/v1/queues/${queue}/jobs/a/retry`, { method: 'POST' }), 200);
      await expectFull(queue, { id: 'b', group: 'g' });
    } finally {
      await failing.close();
    }
  });

  it('a queue stored before the count gets it from its keys on its first enqueue', async () => {
    const queue = await quietQueue(suite, 'old', { maxJobs: 3 });
    await expectJson(await post(queue, { jobs: [{ id: 'a', group: 'g' }, { id: 'b', group: 'g' }, { id: 'c', group: 'h', delayMs: 60_000 }] }), 201);
    await expectJson(await suite.worker.api(`/v1/queues/${queue}/jobs/a/cancel`, { method: 'POST' }), 200); // kept: keepFailed
    // As a queue of an earlier version: no count in meta.
    await suite.redis.hdel(queueKeys(queue).meta, 'live');
    await expectJson(await post(queue, { id: 'd', group: 'g' }), 201); // b, c, d: the cancelled a is not counted
    await expectFull(queue, { id: 'e', group: 'g' });
    await suite.redis.hdel(queueKeys(queue).meta, 'live');
    await expectFull(queue, { id: 'e', group: 'g' });
  });
});

describe('maxBytes', () => {
  const data = 'x'.repeat(299_998); // 300,000 bytes of JSON
  const MIB = 1_048_576;

  it('caps the data of waiting + delayed jobs, every producer: 429 QUEUE_FULL naming it, nothing written; room comes back as jobs leave', async () => {
    const queue = await quietQueue(suite, 'bytes', { maxBytes: MIB, maxPayloadBytes: MIB, publishMaxDataBytes: MIB, publishTokens: [TOKEN] });
    await expectJson(await post(queue, { jobs: [{ id: 'a', group: 'g', data }, { id: 'b', group: 'h', data, delayMs: 60_000 }] }), 201);
    await expectJson(await post(queue, { id: 'c', group: 'g', data }), 201);
    const body = await expectFull(queue, { id: 'd', group: 'g', data });
    expect(body.error.details).toEqual({ limit: 'maxBytes', maxBytes: MIB });
    await expectFull(queue, { group: 'g', data }, { authorization: `Bearer ${TOKEN}` });
    await expectJson(await post(queue, { id: 'small', group: 'g', data: 'x'.repeat(100_000) }), 201); // 900,000 + 100,002
    // Removed, cancelled: their data leaves the count.
    expect((await suite.worker.api(`/v1/queues/${queue}/jobs/a`, { method: 'DELETE' })).status).toBe(204);
    await expectJson(await post(queue, { id: 'd', group: 'g', data }), 201);
    await expectFull(queue, { id: 'e', group: 'g', data });
    await expectJson(await suite.worker.api(`/v1/queues/${queue}/jobs/b/cancel`, { method: 'POST' }), 200);
    await expectJson(await post(queue, { id: 'e', group: 'h', data }), 201);
    await expectFull(queue, { id: 'f', group: 'i', data });
    // Delivered: a started job's data no longer waits.
    await putQueue(suite.worker, queue, { endpoint: endpoint.url, maxBytes: MIB, maxPayloadBytes: MIB, keepCompleted: 10 });
    await expectJson(await suite.worker.api(`/v1/queues/${queue}/resume`, { method: 'POST' }), 200);
    for (const id of ['c', 'small', 'd', 'e']) await waitForState(suite.worker, queue, id, 'completed');
    await expectJson(await post(queue, { jobs: ['f', 'g', 'h'].map((id) => ({ id, group: id, data, delayMs: 60_000 })) }), 201);
    expect((await expectFull(queue, { id: 'i', group: 'i', data })).error.details).toEqual({ limit: 'maxBytes', maxBytes: MIB });
  });

  it('null: no bound; below 1 MiB or above 1 TiB: 400', async () => {
    const queue = await quietQueue(suite, 'nobytes', { maxBytes: null, maxPayloadBytes: MIB });
    await expectJson(await post(queue, { jobs: Array.from({ length: 4 }, (_, i) => ({ group: `g${i}`, data })) }), 201);
    for (const maxBytes of [MIB - 1, 2 ** 40 + 1]) {
      await expectError(await suite.worker.api(`/v1/queues/${queue}`, { method: 'PATCH', json: { maxBytes } }), 400, 'VALIDATION_FAILED');
    }
  });
});

describe('publishMaxJobs', () => {
  const asPublisher = { authorization: `Bearer ${TOKEN}` };

  it("publishers' room comes back as their jobs leave waiting (cancelled, delivered); the admin's jobs take none of it", async () => {
    const queue = await quietQueue(suite, 'pubroom', { publishMaxJobs: 2, publishTokens: [TOKEN] });
    await expectJson(await post(queue, { jobs: [{ id: 'a', group: 'g' }, { id: 'b', group: 'h' }] }, asPublisher), 201);
    const body = await expectFull(queue, { group: 'g' }, asPublisher);
    expect(body.error.details).toEqual({ limit: 'publishMaxJobs', publishMaxJobs: 2 });
    await expectJson(await post(queue, { jobs: [{ group: 'g' }, { group: 'h' }, { group: 'i' }] }), 201); // the backend's
    await expectJson(await suite.worker.api(`/v1/queues/${queue}/jobs/pub:b/cancel`, { method: 'POST' }), 200);
    await expectJson(await post(queue, { id: 'c', group: 'h' }, asPublisher), 201);
    await expectFull(queue, { group: 'g' }, asPublisher);
    // Delivered and completed: the endpoint answers 200.
    await putQueue(suite.worker, queue, { endpoint: endpoint.url, publishMaxJobs: 2, publishTokens: [TOKEN], keepCompleted: 10 });
    await expectJson(await suite.worker.api(`/v1/queues/${queue}/resume`, { method: 'POST' }), 200);
    await waitForState(suite.worker, queue, 'pub:a', 'completed');
    await waitForState(suite.worker, queue, 'pub:c', 'completed');
    await expectJson(await post(queue, { jobs: [{ group: 'x' }, { group: 'y' }] }, asPublisher), 201);
  });

  it('counts waiting and delayed jobs only: published jobs that have started take no room', async () => {
    // The endpoint takes each job asynchronously (202): delivered, they stay active.
    const held = await startEndpoint(() => ({ status: 202 }));
    try {
      const queue = uniqueQueue('pubstarted');
      await putQueue(suite.worker, queue, { endpoint: held.url, publishMaxJobs: 2, publishTokens: [TOKEN], concurrency: 10 });
      await expectJson(await post(queue, { jobs: [{ group: 'a' }, { group: 'b' }] }, asPublisher), 201);
      await held.waitFor(2);
      expect(await counts(queue)).toMatchObject({ waiting: 0, delayed: 0, active: 2 });
      await expectJson(await post(queue, { jobs: [{ group: 'c' }, { group: 'd' }] }, asPublisher), 201);
    } finally {
      await held.close();
    }
  });

  it('a partitioned queue gives each partition its share, as maxJobs', async () => {
    const queue = await quietQueue(suite, 'pubshare', { partitions: 2, concurrency: 2, publishMaxJobs: 4, publishTokens: [TOKEN] });
    const groups = Array.from({ length: 20 }, (_, i) => `g${i}`);
    const [first, second] = [0, 1].map((p) => groups.filter((group) => partitionOf(group, 2) === p));
    await expectJson(await post(queue, { jobs: first!.slice(0, 2).map((group) => ({ group })) }, asPublisher), 201);
    const refused = await expectError(await post(queue, { group: first![2] }, asPublisher), 429, 'QUEUE_FULL');
    expect(refused.error.details).toEqual({ limit: 'publishMaxJobs', publishMaxJobs: 2 });
    await expectJson(await post(queue, { jobs: second!.slice(0, 2).map((group) => ({ group })) }, asPublisher), 201);
  });
});

describe('maxDelayMs', () => {
  it('caps delayMs and runAt for every producer: 400 VALIDATION_FAILED at the field, nothing written', async () => {
    const queue = await quietQueue(suite, 'late', { maxDelayMs: 60_000, publishMaxDelayMs: 3_600_000, publishTokens: [TOKEN] });
    expect((await expectJson(await post(queue, { group: 'g', delayMs: 60_000 }), 201)).state).toBe('delayed');
    const cases: [unknown, string, Record<string, string>?][] = [
      [{ group: 'g', delayMs: 60_001 }, 'delayMs'],
      [{ group: 'g', runAt: Date.now() + 3_600_000 }, 'runAt'],
      [{ jobs: [{ group: 'g' }, { group: 'g', delayMs: 120_000 }] }, 'jobs.1.delayMs'],
      [{ jobs: [{ group: 'g', runAt: Date.now() + 3_600_000 }] }, 'jobs.0.runAt'],
      [{ group: 'g', delayMs: 600_000 }, 'delayMs', { authorization: `Bearer ${TOKEN}` }],
    ];
    for (const [body, path, headers] of cases) {
      const refused = await expectRefused(suite, queue, 400, 'VALIDATION_FAILED', () => post(queue, body, headers));
      expect(refused.error.details).toEqual([{ path, message: expect.stringContaining('maxDelayMs') }]);
    }
  });

  it('caps the delayMs of a job change too (PATCH): 400 at delayMs, the job unchanged', async () => {
    const queue = await quietQueue(suite, 'latepatch', { maxDelayMs: 60_000 });
    await expectJson(await post(queue, { id: 'j', group: 'g', data: 1 }), 201);
    const patch = () => suite.worker.api(`/v1/queues/${queue}/jobs/j`, { method: 'PATCH', json: { data: 2, delayMs: 60_001 } });
    const refused = await expectRefused(suite, queue, 400, 'VALIDATION_FAILED', patch);
    expect(refused.error.details).toEqual([{ path: 'delayMs', message: expect.stringContaining('maxDelayMs') }]);
    const job = await expectJson(await suite.worker.api(`/v1/queues/${queue}/jobs/j`), 200);
    expect(job).toMatchObject({ state: 'waiting', data: 1 });
    const moved = await suite.worker.api(`/v1/queues/${queue}/jobs/j`, { method: 'PATCH', json: { delayMs: 60_000 } });
    expect((await expectJson(moved, 200)).state).toBe('delayed');
  });

  it('defaults to 366 days', async () => {
    const queue = await quietQueue(suite, 'year');
    const day = 86_400_000;
    expect((await expectJson(await post(queue, { group: 'g', runAt: Date.now() + 365 * day }), 201)).state).toBe('delayed');
    await expectRefused(suite, queue, 400, 'VALIDATION_FAILED', () => post(queue, { group: 'g', runAt: Date.now() + 367 * day }));
  });
});
