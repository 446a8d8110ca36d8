// Debounce: enqueues with the same debounce key collapse into one job until it starts; it takes
// the last data, starts delayMs after the last enqueue, but never later than its first enqueue +
// maxDelayMs. Through the Worker to a real endpoint, and with the engine and a test clock where
// the feature's own times are checked.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Engine } from '../../src/core/engine';
import { queueKeys } from '../../src/core/store/keys';
import { type Endpoint, startEndpoint } from '../helpers/endpoint';
import { T0, rejectsWith, setupQueue } from '../helpers/engine';
import { adminClient } from '../helpers/stack';
import { enqueue, enqueueAnswer, poll, putQueue, queueName, useWorker } from '../delivery/support';

describe('debounce, through the Worker', () => {
  const env = useWorker();
  let endpoint: Endpoint;
  beforeAll(async () => {
    endpoint = await startEndpoint();
  });
  afterAll(() => endpoint?.close());

  const deliveries = (queue: string) => endpoint.received.filter((r) => r.job.queue === queue);

  async function queueWith(): Promise<string> {
    const queue = queueName('debounce');
    await putQueue(env.worker, queue, { endpoint: endpoint.url });
    return queue;
  }

  /** Runs a marker job in `group` to its delivery: whatever the queue would still deliver there came before it. */
  async function settled(queue: string, group: string): Promise<void> {
    const marker = await enqueue(env.worker, queue, { group, data: 'marker' });
    await poll(async () => (deliveries(queue).some((r) => r.job.id === marker.id) ? true : undefined), {
      pump: env.worker,
      what: 'the marker job',
    });
  }

  it('enqueues with one key collapse into one delivery that carries the last data', async () => {
    const queue = await queueWith();
    const debounce = { key: 'user:1:profile', delayMs: 1000 };
    const first = await enqueueAnswer(env.worker, queue, { group: 'g', data: 1, debounce });
    expect(first).toMatchObject({ status: 201, body: { state: 'delayed' } });
    for (const data of [2, 3]) {
      expect(await enqueueAnswer(env.worker, queue, { group: 'g', data, debounce })).toEqual({
        status: 200,
        body: { id: first.body.id, state: 'delayed', debounced: true },
      });
    }
    await poll(async () => (deliveries(queue).length > 0 ? true : undefined), { pump: env.worker, what: 'the delivery' });
    await settled(queue, 'g');
    expect(deliveries(queue).map((r) => [r.job.id, r.job.data])).toEqual([
      [first.body.id, 3],
      [expect.any(String), 'marker'],
    ]);
  });

  it('once the job has started, the same key makes a new job', async () => {
    const queue = await queueWith();
    const debounce = { key: 'k', delayMs: 0 };
    const first = await enqueueAnswer(env.worker, queue, { group: 'g', data: 1, debounce });
    await poll(async () => (deliveries(queue).length === 1 ? true : undefined), { what: 'the first delivery' });
    const second = await enqueueAnswer(env.worker, queue, { group: 'g', data: 2, debounce });
    expect(second.status).toBe(201);
    expect(second.body.id).not.toBe(first.body.id);
    await poll(async () => (deliveries(queue).length === 2 ? true : undefined), { what: 'the second delivery' });
    expect(deliveries(queue).map((r) => r.job.data)).toEqual([1, 2]);
  });

  it('in a batch, a later job with the same key collapses into the first', async () => {
    const queue = await queueWith();
    const debounce = { key: 'k', delayMs: 60_000 };
    const res = await env.worker.api(`/v1/queues/${queue}/jobs/batch`, {
      method: 'POST',
      json: { jobs: [{ group: 'g', data: 'a', debounce }, { group: 'h', data: 'other' }, { group: 'g', data: 'b', debounce }] },
    });
    expect(res.status).toBe(201);
    const { jobs } = (await res.json()) as { jobs: { id: string; state: string }[] };
    expect(jobs).toEqual([
      { id: jobs[0]!.id, state: 'delayed' },
      { id: expect.any(String), state: 'waiting' },
      { id: jobs[0]!.id, state: 'delayed', debounced: true },
    ]);
    const job = (await (await env.worker.api(`/v1/queues/${queue}/jobs/${jobs[0]!.id}`)).json()) as { data: unknown };
    expect(job.data).toBe('b');
  });

  it('removing or cancelling the waiting job frees its key', async () => {
    const queue = await queueWith();
    const debounce = { key: 'k', delayMs: 60_000 };
    const first = await enqueueAnswer(env.worker, queue, { group: 'g', debounce });
    expect((await env.worker.api(`/v1/queues/${queue}/jobs/${first.body.id}`, { method: 'DELETE' })).status).toBe(204);
    const second = await enqueueAnswer(env.worker, queue, { group: 'g', debounce });
    expect(second).toMatchObject({ status: 201, body: { state: 'delayed' } });
    expect(second.body.id).not.toBe(first.body.id);
    expect((await env.worker.api(`/v1/queues/${queue}/jobs/${second.body.id}/cancel`, { method: 'POST' })).status).toBe(200);
    const third = await enqueueAnswer(env.worker, queue, { group: 'g', debounce });
    expect(third.status).toBe(201);
    expect(third.body.id).not.toBe(second.body.id);
  });

  it('refuses delayMs or runAt beside debounce, writing nothing', async () => {
    const queue = await queueWith();
    for (const extra of [{ delayMs: 5 }, { runAt: T0 }]) {
      const res = await env.worker.api(`/v1/queues/${queue}/jobs`, {
        method: 'POST',
        json: { group: 'g', debounce: { key: 'k', delayMs: 10 }, ...extra },
      });
      expect(res.status).toBe(400);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('VALIDATION_FAILED');
    }
    const info = (await (await env.worker.api(`/v1/queues/${queue}`)).json()) as { counts: Record<string, number> };
    expect(info.counts).toMatchObject({ waiting: 0, delayed: 0 });
  });
});

describe('debounce, with a test clock', () => {
  async function reserveIds(engine: Engine, q: string): Promise<string[]> {
    await engine.tick(q);
    return (await engine.reserve(q, 10)).jobs.map((job) => job.id);
  }

  it('maxDelayMs caps the delay: the job starts by its first enqueue + maxDelayMs while enqueues keep coming', async () => {
    const { clock, engine, q } = await setupQueue();
    const debounce = { key: 'k', delayMs: 10_000, maxDelayMs: 15_000 };
    const { id } = await engine.enqueue(q, { group: 'g', data: 0, debounce });
    for (let i = 1; i <= 7; i++) {
      clock.advance(2000);
      expect(await engine.enqueue(q, { group: 'g', data: i, debounce })).toEqual({ id, state: 'delayed', debounced: true });
      expect(await reserveIds(engine, q)).toEqual([]);
    }
    // The last enqueue (at +14 s) asked for +24 s; the first one's cap holds.
    expect(await engine.getJob(q, id)).toMatchObject({ state: 'delayed', runAt: T0 + 15_000, data: 7, orderMs: T0 });
    clock.set(T0 + 15_000);
    expect(await reserveIds(engine, q)).toEqual([id]);
  });

  it('a waiting job that must now start later leaves its group; a delayed one due now joins it, at its place', async () => {
    const { clock, engine, q } = await setupQueue();
    const { id } = await engine.enqueue(q, { group: 'g', data: 1, debounce: { key: 'k', delayMs: 0 } });
    await engine.enqueue(q, { group: 'g', id: 'behind', orderMs: T0 + 1 });
    expect(await engine.enqueue(q, { group: 'g', data: 2, debounce: { key: 'k', delayMs: 5000 } })).toEqual({
      id,
      state: 'delayed',
      debounced: true,
    });
    // Out of its group: the job behind it is the head now.
    expect((await engine.getGroup(q, 'g')).jobs.map((job) => job.id)).toEqual(['behind']);
    clock.advance(1000);
    expect(await engine.enqueue(q, { group: 'g', data: 3, debounce: { key: 'k', delayMs: 0 } })).toEqual({
      id,
      state: 'waiting',
      debounced: true,
    });
    expect((await engine.getGroup(q, 'g')).jobs.map((job) => job.id)).toEqual([id, 'behind']);
    const { jobs } = await engine.reserve(q, 10);
    expect(jobs.map((job) => [job.id, job.data])).toEqual([[id, 3]]);
  });

  it('a started job frees its key; retried, it does not take the key back from the job that has it now', async () => {
    const admin = adminClient();
    const keys = async (q: string) => Number(await admin.call(['HLEN', queueKeys(q).debounce]));
    try {
      const { engine, q } = await setupQueue({ backoff: { type: 'fixed', delayMs: 0, jitter: false } });
      const debounce = { key: 'k', delayMs: 0 };
      const a = await engine.enqueue(q, { group: 'g', data: 'a', debounce });
      const [leased] = (await engine.reserve(q, 1)).jobs;
      expect(await keys(q)).toBe(0);
      await engine.fail(q, { id: a.id, lease: leased!.lease.token, error: 'again' });
      const b = await engine.enqueue(q, { group: 'g', data: 'b', debounce });
      expect(b.id).not.toBe(a.id);
      expect((await engine.reserve(q, 1)).jobs.map((job) => job.id)).toEqual([a.id]); // a's retry, at the head
      expect(await engine.enqueue(q, { group: 'g', data: 'b2', debounce })).toEqual({ id: b.id, state: 'waiting', debounced: true });
    } finally {
      admin.close();
    }
  });

  it('an enqueue with its own id that collapses answers the surviving job, and its id stays unused', async () => {
    const { engine, q } = await setupQueue();
    const debounce = { key: 'k', delayMs: 1000 };
    await engine.enqueue(q, { group: 'g', id: 'first', debounce });
    expect(await engine.enqueue(q, { group: 'g', id: 'second', debounce })).toEqual({ id: 'first', state: 'delayed', debounced: true });
    await rejectsWith(engine.getJob(q, 'second'), 'JOB_NOT_FOUND');
  });

  it('a key whose job is in another group makes a new job in this group, and moves to it', async () => {
    const { engine, q } = await setupQueue();
    const debounce = { key: 'k', delayMs: 1000 };
    const a = await engine.enqueue(q, { group: 'a', debounce });
    const b = await engine.enqueue(q, { group: 'b', debounce });
    expect(b).toEqual({ id: expect.any(String), state: 'delayed' });
    expect(b.id).not.toBe(a.id);
    expect(await engine.enqueue(q, { group: 'b', data: 'last', debounce })).toEqual({ id: b.id, state: 'delayed', debounced: true });
    expect((await engine.getQueue(q)).counts).toMatchObject({ delayed: 2 });
  });
});
