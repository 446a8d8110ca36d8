// HTTP conventions of the API, over HTTP against the Worker in workerd: PATCH of a queue's config
// as a JSON merge patch (RFC 7396) that keeps what it does not name, write-only fields included;
// and Idempotency-Key as the id of a single enqueue, allowed through CORS.
import { describe, expect, it } from 'vitest';
import { expectError, expectJson, putQueue, snapshotQueue, uniqueQueue, useHttpSuite } from './support';
import { CONFIG_DEFAULTS } from '../helpers/config-defaults';
import type { StoredConfig } from '../../src/protocol/config';
import { queueKeys } from '../../src/core/store/keys';
import { partitionTags } from '../../src/core/store/partitions';

const suite = useHttpSuite();

const NOWHERE = 'http://127.0.0.1:9/jobs';
const TOKEN = 'publish-token-kept-by-patch-01';
const SECRET = `whsec_${Buffer.alloc(24, 7).toString('base64')}`;

const patch = (queue: string, body: unknown, contentType = 'application/merge-patch+json') =>
  suite.worker.api(`/v1/queues/${queue}`, { method: 'PATCH', body: JSON.stringify(body), headers: { 'content-type': contentType } });

describe('PATCH /v1/queues/{queue}', () => {
  it('changes the fields it names and keeps the others, publish tokens and signing secrets included', async () => {
    const queue = uniqueQueue('patch');
    await putQueue(suite.worker, queue, {
      endpoint: NOWHERE, concurrency: 7, rateLimit: { max: 50, periodMs: 1000 }, publishTokens: [TOKEN], signingSecret: SECRET,
    });
    const changed = await expectJson(await patch(queue, { concurrency: 3, rateLimit: { max: 20 } }), 200);
    const kept = { ...CONFIG_DEFAULTS, endpoint: NOWHERE, publishTokens: 1, signingSecret: true };
    expect(changed.config).toEqual({ ...kept, concurrency: 3, rateLimit: { max: 20, periodMs: 1000 } });
    expect((await expectJson(await suite.worker.api(`/v1/queues/${queue}`), 200)).config).toEqual(changed.config);

    // The kept token still publishes: it was kept as its hash, not dropped.
    const published = await suite.worker.api(`/v1/queues/${queue}/jobs`, {
      method: 'POST', json: { group: 'g' }, headers: { authorization: `Bearer ${TOKEN}` },
    });
    await expectJson(published, 201);
  });

  it('puts a field back to its default when the patch names it null, write-only ones too', async () => {
    const queue = uniqueQueue('patch-null');
    await putQueue(suite.worker, queue, { endpoint: NOWHERE, concurrency: 7, publishTokens: [TOKEN], signingSecret: SECRET });
    const res = await patch(queue, { concurrency: null, publishTokens: null, signingSecret: null }, 'application/json');
    expect((await expectJson(res, 200)).config).toEqual({ ...CONFIG_DEFAULTS, endpoint: NOWHERE });
    const refused = await suite.worker.api(`/v1/queues/${queue}/jobs`, {
      method: 'POST', json: { group: 'g' }, headers: { authorization: `Bearer ${TOKEN}` },
    });
    await expectError(refused, 401, 'UNAUTHORIZED');
  });

  it('checks the result as a whole config: a refused patch writes nothing', async () => {
    const queue = uniqueQueue('patch-bad');
    await putQueue(suite.worker, queue, { endpoint: NOWHERE, partitions: 2, concurrency: 4 });
    const before = await snapshotQueue(suite.redis, queue);
    const cases: [unknown, string][] = [
      [{ concurrency: 1 }, 'concurrency'], // fewer than its partitions
      [{ partitions: 3 }, 'partitions'], // fixed at creation
      [{ timeoutMs: 'soon' }, 'timeoutMs'],
      [{ colour: 'blue' }, ''], // not a field of the config
      [[{ concurrency: 2 }], ''], // not an object
    ];
    for (const [body, path] of cases) {
      const { error } = await expectError(await patch(queue, body), 400, 'VALIDATION_FAILED');
      expect(JSON.stringify(error.details)).toContain(`"path":"${path}`);
    }
    expect(await snapshotQueue(suite.redis, queue)).toEqual(before);
    // A good patch of the same partitioned queue: its partitions take their shares of it.
    expect((await expectJson(await patch(queue, { concurrency: 6 }), 200)).config).toMatchObject({ concurrency: 6, partitions: 2 });
  });

  it('is 404 QUEUE_NOT_FOUND for a queue that does not exist, and creates nothing', async () => {
    const queue = uniqueQueue('patch-none');
    await expectError(await patch(queue, { concurrency: 2 }), 404, 'QUEUE_NOT_FOUND');
    await expectError(await suite.worker.api(`/v1/queues/${queue}`), 404, 'QUEUE_NOT_FOUND');
  });
});

describe('concurrent PATCHes of one queue', () => {
  it('each takes effect: a revoked token stays revoked and a new concurrency stays set, in 12 queues of 1 and 4 partitions', async () => {
    const [revoked, kept] = ['publish-token-revoked-000001', 'publish-token-kept-00000002'];
    const queues = Array.from({ length: 12 }, (_, i) => ({ name: uniqueQueue('patch-race'), partitions: i % 2 === 0 ? 1 : 4 }));
    await Promise.all(
      queues.map(({ name, partitions }) => putQueue(suite.worker, name, { endpoint: NOWHERE, concurrency: 8, partitions, publishTokens: [revoked, kept] })),
    );
    // Both PATCHes of a queue are in flight at once; half the queues send them in the other order.
    await Promise.all(
      queues.map(async ({ name }, i) => {
        const both = [() => patch(name, { publishTokens: [kept] }), () => patch(name, { concurrency: 12 })];
        if (i % 4 >= 2) both.reverse();
        for (const res of await Promise.all(both.map((send) => send()))) expect(res.status).toBe(200);
      }),
    );
    for (const { name, partitions } of queues) {
      const { config } = await expectJson(await suite.worker.api(`/v1/queues/${name}`), 200);
      expect({ name, partitions, concurrency: config.concurrency, publishTokens: config.publishTokens }).toEqual({ name, partitions, concurrency: 12, publishTokens: 1 });
      // Every partition holds its share of the new concurrency: no late write brought back the old one.
      const copies = await Promise.all(
        partitionTags(name, partitions).map(async (tag) => JSON.parse((await suite.redis.hget<string>(queueKeys(tag).meta, 'config'))!) as StoredConfig),
      );
      expect(copies.reduce((sum, copy) => sum + copy.concurrency, 0)).toBe(12);
      expect(copies.every((copy) => copy.publishTokenHashes.length === 1)).toBe(true);
    }
  });
});

describe('Idempotency-Key on POST /v1/queues/{queue}/jobs', () => {
  it("is the job's id: a second enqueue with the same key is the same job, a duplicate", async () => {
    const queue = uniqueQueue('idem');
    await putQueue(suite.worker, queue, { endpoint: NOWHERE });
    await suite.worker.api(`/v1/queues/${queue}/pause`, { method: 'POST' });
    const send = (key: string, body: Record<string, unknown> = { group: 'g', data: { n: 1 } }) =>
      suite.worker.api(`/v1/queues/${queue}/jobs`, { method: 'POST', json: body, headers: { 'idempotency-key': key } });
    expect(await expectJson(await send('order-1'), 201)).toMatchObject({ id: 'order-1', state: 'waiting' });
    expect(await expectJson(await send('order-1'), 200)).toMatchObject({ id: 'order-1', duplicate: true });
    // The IETF draft's form, a quoted string, names the same id.
    expect(await expectJson(await send('"order-1"'), 200)).toMatchObject({ id: 'order-1', duplicate: true });
    // A body that names the same id agrees with it.
    expect(await expectJson(await send('order-2', { id: 'order-2', group: 'g' }), 201)).toMatchObject({ id: 'order-2' });
    const counts = (await expectJson(await suite.worker.api(`/v1/queues/${queue}`), 200)).counts;
    expect(counts.waiting).toBe(2);
  });

  it('is refused, writing nothing, when it is not a valid id or the body names another id', async () => {
    const queue = uniqueQueue('idem-bad');
    await putQueue(suite.worker, queue, { endpoint: NOWHERE });
    const before = await snapshotQueue(suite.redis, queue);
    const send = (key: string, body: Record<string, unknown>) =>
      suite.worker.api(`/v1/queues/${queue}/jobs`, { method: 'POST', json: body, headers: { 'idempotency-key': key } });
    const other = await expectError(await send('order-1', { id: 'order-2', group: 'g' }), 400, 'VALIDATION_FAILED');
    expect(other.error.details).toEqual([{ path: 'id', message: 'differs from the Idempotency-Key header' }]);
    const dots = await expectError(await send('..', { group: 'g' }), 400, 'VALIDATION_FAILED');
    expect(JSON.stringify(dots.error.details)).toContain('"path":"id"');
    expect(await snapshotQueue(suite.redis, queue)).toEqual(before);
  });

  it("is allowed through CORS from the queue's allowed origins", async () => {
    const queue = uniqueQueue('idem-cors');
    await putQueue(suite.worker, queue, { endpoint: NOWHERE, allowedOrigins: ['https://app.example'] });
    const res = await fetch(`${suite.worker.url}/v1/queues/${queue}/jobs`, {
      method: 'OPTIONS',
      headers: { origin: 'https://app.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'idempotency-key' },
    });
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-headers')?.split(',').map((h) => h.trim())).toContain('idempotency-key');
  });
});
