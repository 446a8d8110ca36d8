// A queue's `batch` config over HTTP (docs/batches.md): PUT and PATCH set it, PATCH merges it
// field by field and null removes it, GET shows it; its bounds (maxSize 1-100, maxWaitMs
// 0-300000) are accepted, a value past them, an unknown field, a batch without maxSize and a
// maxSize above the queue's concurrency (each job of a batch holds a slot: however the config
// gets there, by PUT or by a PATCH of either field) are 400 VALIDATION_FAILED naming the field,
// and write nothing. With a batch of maxSize 1 every delivery is still a batch body, of one job.
import { describe, expect, it } from 'vitest';
import { useEndpointPerTest } from '../helpers/endpoint';
import { type ErrorBody, expectJson, expectRefused, quietQueue, useHttpSuite } from '../http/support';
import { expectBatchShapes, recordBatches } from './combos-support';
import { enqueueBatch, putQueue, queueName, poll } from '../delivery/support';

const suite = useHttpSuite();
const start = useEndpointPerTest();
const NOWHERE = 'http://127.0.0.1:9/jobs';

const put = (queue: string, config: unknown) => suite.worker.api(`/v1/queues/${queue}`, { method: 'PUT', json: config });
const patch = (queue: string, body: unknown) =>
  suite.worker.api(`/v1/queues/${queue}`, { method: 'PATCH', json: body, headers: { 'content-type': 'application/merge-patch+json' } });
const batchOf = async (queue: string) => (await expectJson(await suite.worker.api(`/v1/queues/${queue}`), 200)).config.batch;
const paths = (body: ErrorBody) => (body.error.details as { path: string }[]).map((d) => d.path);
const invalid = (queue: string, send: () => Promise<Response>) => expectRefused(suite, queue, 400, 'VALIDATION_FAILED', send);

describe('batch config', () => {
  it('PUT sets it (maxWaitMs 0 by default), GET shows it, a PUT without it puts back null', async () => {
    const queue = await quietQueue(suite, 'bcfg-put');
    expect(await batchOf(queue)).toBeNull();
    const putAnswer = await expectJson(await put(queue, { endpoint: NOWHERE, batch: { maxSize: 10, maxWaitMs: 500 } }), 200);
    expect(putAnswer.config.batch).toEqual({ maxSize: 10, maxWaitMs: 500 });
    expect(await batchOf(queue)).toEqual({ maxSize: 10, maxWaitMs: 500 });
    await expectJson(await put(queue, { endpoint: NOWHERE, batch: { maxSize: 4 } }), 200);
    expect(await batchOf(queue)).toEqual({ maxSize: 4, maxWaitMs: 0 });
    await expectJson(await put(queue, { endpoint: NOWHERE, batch: null }), 200);
    expect(await batchOf(queue)).toBeNull();
    await expectJson(await put(queue, { endpoint: NOWHERE, batch: { maxSize: 3 } }), 200);
    await expectJson(await put(queue, { endpoint: NOWHERE }), 200);
    expect(await batchOf(queue)).toBeNull();
  });

  it('the bounds are accepted: maxSize 1 and 100 (with concurrency 100), maxWaitMs 0 and 300000', async () => {
    const queue = await quietQueue(suite, 'bcfg-bounds');
    for (const batch of [
      { maxSize: 1, maxWaitMs: 0 },
      { maxSize: 100, maxWaitMs: 300_000 },
    ]) {
      const answer = await expectJson(await put(queue, { endpoint: NOWHERE, concurrency: 100, batch }), 200);
      expect(answer.config.batch).toEqual(batch);
      expect(await batchOf(queue)).toEqual(batch);
    }
  });

  it('PATCH sets it, merges its fields, and null removes it', async () => {
    const queue = await quietQueue(suite, 'bcfg-patch', { concurrency: 20 });
    expect((await expectJson(await patch(queue, { batch: { maxSize: 5, maxWaitMs: 100 } }), 200)).config.batch).toEqual({ maxSize: 5, maxWaitMs: 100 });
    expect(await batchOf(queue)).toEqual({ maxSize: 5, maxWaitMs: 100 });
    // A merge patch of an object field: what it leaves out is kept.
    await expectJson(await patch(queue, { batch: { maxWaitMs: 2000 } }), 200);
    expect(await batchOf(queue)).toEqual({ maxSize: 5, maxWaitMs: 2000 });
    await expectJson(await patch(queue, { batch: { maxSize: 20 } }), 200);
    expect(await batchOf(queue)).toEqual({ maxSize: 20, maxWaitMs: 2000 });
    // A patch of another field keeps the batch.
    await expectJson(await patch(queue, { timeoutMs: 5000 }), 200);
    expect(await batchOf(queue)).toEqual({ maxSize: 20, maxWaitMs: 2000 });
    const removed = await expectJson(await patch(queue, { batch: null }), 200);
    expect(removed.config.batch).toBeNull();
    expect(await batchOf(queue)).toBeNull();
    expect((await expectJson(await suite.worker.api(`/v1/queues/${queue}`), 200)).config).toMatchObject({ concurrency: 20, timeoutMs: 5000 });
  });

  it('each bad value: 400 naming batch, the stored config unchanged (PUT and PATCH alike)', async () => {
    const queue = await quietQueue(suite, 'bcfg-bad', { concurrency: 200, batch: { maxSize: 7, maxWaitMs: 10 } });
    const bad: unknown[] = [
      { maxSize: 0 },
      { maxSize: 101 },
      { maxSize: -1 },
      { maxSize: 1.5 },
      { maxSize: '5' },
      { maxSize: 5, maxWaitMs: -1 },
      { maxSize: 5, maxWaitMs: 300_001 },
      { maxSize: 5, maxWaitMs: 0.5 },
      { maxSize: 5, maxWaitMs: '10' },
      { maxSize: 5, extra: 1 },
      { maxSize: 5, maxWaitMs: 10, maxBytes: 1000 },
      { maxWaitMs: 10 },
      {},
      5,
      'on',
      true,
      [5],
    ];
    for (const batch of bad) {
      const byPut = await invalid(queue, () => put(queue, { endpoint: NOWHERE, concurrency: 200, batch }));
      expect(paths(byPut).some((p) => p === 'batch' || p.startsWith('batch.')), `PUT batch ${JSON.stringify(batch)}: ${paths(byPut)}`).toBe(true);
    }
    // PATCH merges into { maxSize: 7, maxWaitMs: 10 }: a field that is fine alone in the merge is
    // not a test of the refusal, so only values bad whatever they merge with.
    const badPatches: unknown[] = [{ maxSize: 0 }, { maxSize: 101 }, { maxWaitMs: 300_001 }, { maxWaitMs: -1 }, { extra: 1 }, 5, 'on', [5]];
    for (const batch of badPatches) {
      const byPatch = await invalid(queue, () => patch(queue, { batch }));
      expect(paths(byPatch).some((p) => p === 'batch' || p.startsWith('batch.')), `PATCH batch ${JSON.stringify(batch)}: ${paths(byPatch)}`).toBe(true);
    }
    expect(await batchOf(queue)).toEqual({ maxSize: 7, maxWaitMs: 10 });
  });

  it('a PATCH onto no batch that names no maxSize is refused: the merge holds no maxSize', async () => {
    const queue = await quietQueue(suite, 'bcfg-nosize');
    const body = await invalid(queue, () => patch(queue, { batch: { maxWaitMs: 100 } }));
    expect(paths(body).some((p) => p.startsWith('batch'))).toBe(true);
    expect(await batchOf(queue)).toBeNull();
  });

  it('maxSize above concurrency is refused, by PUT and by a PATCH of either field; equal is fine', async () => {
    const queue = await quietQueue(suite, 'bcfg-conc', { concurrency: 5, batch: { maxSize: 5 } });
    const refused = async (send: () => Promise<Response>) => {
      const body = await invalid(queue, send);
      expect(paths(body), JSON.stringify(body.error)).toContain('batch.maxSize');
    };
    await refused(() => put(queue, { endpoint: NOWHERE, concurrency: 5, batch: { maxSize: 6 } }));
    // concurrency's default is 10.
    await refused(() => put(queue, { endpoint: NOWHERE, batch: { maxSize: 11 } }));
    await refused(() => patch(queue, { batch: { maxSize: 6 } }));
    await refused(() => patch(queue, { concurrency: 4 }));
    await refused(() => patch(queue, { concurrency: 4, batch: { maxSize: 5 } }));
    expect((await expectJson(await suite.worker.api(`/v1/queues/${queue}`), 200)).config).toMatchObject({ concurrency: 5, batch: { maxSize: 5, maxWaitMs: 0 } });
    // Both together, in one patch, and back down to the default concurrency once the batch fits it.
    await expectJson(await patch(queue, { concurrency: 50, batch: { maxSize: 50 } }), 200);
    await refused(() => patch(queue, { concurrency: null }));
    await expectJson(await patch(queue, { concurrency: null, batch: { maxSize: 10 } }), 200);
    expect((await expectJson(await suite.worker.api(`/v1/queues/${queue}`), 200)).config).toMatchObject({ concurrency: 10, batch: { maxSize: 10 } });
  });

  it('maxSize 1: every delivery is a batch body of one job, in group order', async () => {
    const endpoint = await recordBatches(start);
    const queue = queueName('bcfg-one');
    await putQueue(suite.worker, queue, { endpoint: endpoint.url, batch: { maxSize: 1 } });
    const ids = (await enqueueBatch(suite.worker, queue, [1, 2, 3].map((i) => ({ group: 'g', data: i })))).map((j) => j.id);
    await endpoint.until((ds) => ds.length === 3, 'three deliveries', suite.worker);
    expectBatchShapes(endpoint, queue);
    expect(endpoint.batches()).toEqual(ids.map((id) => [id]));
    await poll(async () => {
      const counts = (await expectJson(await suite.worker.api(`/v1/queues/${queue}`), 200)).counts;
      return counts.active === 0 && counts.waiting === 0 ? true : undefined;
    });
  });
});
