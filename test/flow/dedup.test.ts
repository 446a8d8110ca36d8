// The dedup window: a job id its producer gave stays known for dedupWindowMs after its job ends
// (completed, failed, removed, cancelled), whatever keepCompleted/keepFailed keep. Through the
// Worker to a real endpoint with the default keepCompleted 0; the window's end and the trim of
// remembered ids with the engine and a test clock.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Engine } from '../../src/core/engine';
import { queueKeys } from '../../src/core/store/keys';
import { type Endpoint, startEndpoint } from '../helpers/endpoint';
import { setupQueue } from '../helpers/engine';
import { adminClient } from '../helpers/stack';
import type { RunningWorker } from '../helpers/worker';
import { enqueue, enqueueAnswer, poll, putQueue, queueName, useWorker } from '../delivery/support';

/** Waits until the job is gone from the queue (it ended and is not kept). */
function deleted(worker: RunningWorker, queue: string, id: string): Promise<true> {
  return poll(async () => ((await worker.api(`/v1/queues/${queue}/jobs/${id}`)).status === 404 ? true : undefined), {
    what: `job ${id} to end and be deleted`,
  });
}

describe('dedup window, through the Worker (keepCompleted 0, keepFailed 0)', () => {
  const env = useWorker();
  let endpoint: Endpoint;
  beforeAll(async () => {
    endpoint = await startEndpoint((r) => ((r.job.data as { fail?: boolean } | null)?.fail ? { status: 500, body: 'no' } : {}));
  });
  afterAll(() => endpoint?.close());

  const deliveriesOf = (queue: string, id: string) => endpoint.received.filter((r) => r.job.queue === queue && r.job.id === id).length;

  async function queueWith(config: Record<string, unknown> = {}): Promise<string> {
    const queue = queueName('dedup');
    await putQueue(env.worker, queue, { endpoint: endpoint.url, keepFailed: 0, maxAttempts: 1, ...config });
    return queue;
  }

  /** Runs a marker job in group `g` to the end: whatever the queue would still deliver there came before it. */
  async function settled(queue: string): Promise<void> {
    const marker = await enqueue(env.worker, queue, { group: 'g' });
    await deleted(env.worker, queue, marker.id);
  }

  it('an id enqueued again after its job completed answers 200 duplicate, state completed, and runs nothing', async () => {
    const queue = await queueWith();
    expect(await enqueueAnswer(env.worker, queue, { id: 'order-1', group: 'g', data: 1 })).toMatchObject({ status: 201 });
    await deleted(env.worker, queue, 'order-1');
    expect(await enqueueAnswer(env.worker, queue, { id: 'order-1', group: 'g', data: 2 })).toEqual({
      status: 200,
      body: { id: 'order-1', state: 'completed', duplicate: true },
    });
    await settled(queue);
    expect(deliveriesOf(queue, 'order-1')).toBe(1);
  });

  it('after failing for good it answers state failed', async () => {
    const queue = await queueWith();
    await enqueueAnswer(env.worker, queue, { id: 'bad', group: 'g', data: { fail: true } });
    await deleted(env.worker, queue, 'bad');
    expect(await enqueueAnswer(env.worker, queue, { id: 'bad', group: 'g' })).toEqual({
      status: 200,
      body: { id: 'bad', state: 'failed', duplicate: true },
    });
    await settled(queue);
    expect(deliveriesOf(queue, 'bad')).toBe(1);
  });

  it('after remove and after cancel (of a waiting or delayed job) it answers removed and cancelled', async () => {
    const queue = await queueWith();
    await enqueueAnswer(env.worker, queue, { id: 'r', group: 'g', delayMs: 60_000 });
    await enqueueAnswer(env.worker, queue, { id: 'c', group: 'g', delayMs: 60_000 });
    expect((await env.worker.api(`/v1/queues/${queue}/jobs/r`, { method: 'DELETE' })).status).toBe(204);
    expect((await env.worker.api(`/v1/queues/${queue}/jobs/c/cancel`, { method: 'POST' })).status).toBe(200);
    expect((await enqueueAnswer(env.worker, queue, { id: 'r', group: 'g' })).body).toEqual({ id: 'r', state: 'removed', duplicate: true });
    expect((await enqueueAnswer(env.worker, queue, { id: 'c', group: 'g' })).body).toEqual({ id: 'c', state: 'cancelled', duplicate: true });
    await settled(queue);
    expect(deliveriesOf(queue, 'r') + deliveriesOf(queue, 'c')).toBe(0);
  });

  it('a job still kept answers its current state, as without the window', async () => {
    const queue = await queueWith({ keepCompleted: 10 });
    await enqueueAnswer(env.worker, queue, { id: 'kept', group: 'g' });
    await poll(async () => ((await enqueueAnswer(env.worker, queue, { id: 'kept', group: 'g' })).body.state === 'completed' ? true : undefined));
    expect(deliveriesOf(queue, 'kept')).toBe(1);
  });

  it('a batch answers each known id with its state and adds only the new jobs', async () => {
    const queue = await queueWith();
    await enqueueAnswer(env.worker, queue, { id: 'done', group: 'g' });
    await deleted(env.worker, queue, 'done');
    await enqueueAnswer(env.worker, queue, { id: 'later', group: 'g', delayMs: 60_000 });
    const res = await env.worker.api(`/v1/queues/${queue}/jobs/batch`, {
      method: 'POST',
      json: { jobs: [{ id: 'done', group: 'g' }, { id: 'fresh', group: 'h', delayMs: 60_000 }, { id: 'later', group: 'g' }] },
    });
    expect(res.status).toBe(201);
    expect(await res.json()).toEqual({
      jobs: [
        { id: 'done', state: 'completed', duplicate: true },
        { id: 'fresh', state: 'delayed' },
        { id: 'later', state: 'delayed', duplicate: true },
      ],
    });
  });

  it('dedupWindowMs 0 keeps no id: an id enqueued again after its job completed runs again', async () => {
    const queue = await queueWith({ dedupWindowMs: 0 });
    await enqueueAnswer(env.worker, queue, { id: 'again', group: 'g' });
    await deleted(env.worker, queue, 'again');
    expect(await enqueueAnswer(env.worker, queue, { id: 'again', group: 'g' })).toMatchObject({ status: 201, body: { id: 'again', state: 'waiting' } });
    await poll(async () => (deliveriesOf(queue, 'again') === 2 ? true : undefined), { what: 'the second delivery' });
  });
});

describe('dedup window, with a test clock', () => {
  const admin = adminClient();
  afterAll(() => admin.close());

  async function completeAll(engine: Engine, q: string): Promise<void> {
    const { jobs } = await engine.reserve(q, 100);
    for (const job of jobs) await engine.complete(q, { id: job.id, lease: job.lease.token });
  }
  const remembered = async (q: string) => Number(await admin.call(['ZCARD', queueKeys(q).dedup]));
  const counted = async (q: string) => String((await admin.call(['HGET', queueKeys(q).meta, 'dedup'])) ?? '');

  it('an id is known until dedupWindowMs after its job ended, then enqueues a new job', async () => {
    const { clock, engine, q } = await setupQueue({ dedupWindowMs: 1000 });
    await engine.enqueue(q, { id: 'a', group: 'g' });
    await completeAll(engine, q);
    clock.advance(999);
    expect(await engine.enqueue(q, { id: 'a', group: 'g' })).toEqual({ id: 'a', state: 'completed', duplicate: true });
    clock.advance(1);
    expect(await engine.enqueue(q, { id: 'a', group: 'g' })).toEqual({ id: 'a', state: 'waiting' });
    expect(await engine.getJob(q, 'a')).toMatchObject({ state: 'waiting', attempts: 0 });
  });

  it('keeps nothing for jobs without an id, or with dedupWindowMs 0', async () => {
    for (const [config, id] of [[{}, undefined], [{ dedupWindowMs: 0 }, 'named']] as const) {
      const { engine, q } = await setupQueue(config);
      await engine.enqueueBatch(q, [{ group: 'g', id }, { group: 'h' }]);
      await completeAll(engine, q);
      expect(await remembered(q)).toBe(0);
      expect(await counted(q)).toBe('');
    }
  });

  it('ids past their window are trimmed as later jobs end: memory stays bounded by the window', async () => {
    const { clock, engine, q } = await setupQueue({ dedupWindowMs: 1000, concurrency: 100 });
    await engine.enqueueBatch(q, Array.from({ length: 50 }, (_, i) => ({ id: `old-${i}`, group: `g${i}` })));
    await completeAll(engine, q);
    expect(await remembered(q)).toBe(50);
    clock.advance(120_000); // past the window, and past the next trim
    await engine.enqueue(q, { id: 'new', group: 'g' });
    await completeAll(engine, q);
    expect(await remembered(q)).toBe(1);
    expect(await counted(q)).toBe('1');
  });

  it('a failed job retried by hand answers its state now, and is remembered again when it ends', async () => {
    const { engine, q } = await setupQueue({ maxAttempts: 1, keepFailed: 10 });
    await engine.enqueue(q, { id: 'x', group: 'g' });
    const { jobs } = await engine.reserve(q, 1);
    await engine.fail(q, { id: 'x', lease: jobs[0]!.lease.token, error: 'boom' });
    await engine.retryJob(q, 'x');
    expect(await engine.enqueue(q, { id: 'x', group: 'g' })).toEqual({ id: 'x', state: 'waiting', duplicate: true });
    await completeAll(engine, q);
    expect(await engine.enqueue(q, { id: 'x', group: 'g' })).toEqual({ id: 'x', state: 'completed', duplicate: true });
    expect(await remembered(q)).toBe(1);
  });
});
