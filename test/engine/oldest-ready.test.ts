// A queue's `oldestReady` (GET /v1/queues/{queue} and GET /v1/queues, queue-info.lua): the job
// with the lowest orderMs among those that could start now, the figure the dashboard's overview
// ages. Jobs behind their group's lease, in a held (retrying) or paused group, and delayed jobs
// are not counted; every priority's heads are; a partitioned queue answers its partitions' oldest.
import { describe, expect, it, onTestFinished } from 'vitest';
import { partitionOf } from '../../src/core/store/partitions';
import { T0, setupQueue, testClock, testEngine } from '../helpers/engine';
import { uniqueName } from '../helpers/stack';

const ENDPOINT = 'http://127.0.0.1:9/jobs';

describe('oldestReady', () => {
  it('is absent while no job is ready, in the queue and in the list of queues', async () => {
    const { engine, q } = await setupQueue();
    expect(await engine.getQueue(q)).not.toHaveProperty('oldestReady');
    await engine.enqueue(q, { group: 'later', data: null, delayMs: 60_000 });
    expect(await engine.getQueue(q)).not.toHaveProperty('oldestReady');
    expect((await engine.listQueues()).find((entry) => entry.name === q)).toEqual({
      name: q,
      paused: false,
      counts: expect.objectContaining({ delayed: 1, waiting: 0 }),
    });
  });

  it('is the ready head with the lowest orderMs; jobs behind a lease, held groups and delayed jobs do not count', async () => {
    const { clock, engine, q } = await setupQueue({ backoff: { type: 'fixed', delayMs: 60_000 } });
    const a1 = await engine.enqueue(q, { group: 'a', data: 'a1' });
    clock.advance(1000);
    await engine.enqueue(q, { group: 'a', data: 'a2' });
    clock.advance(1000);
    const b1 = await engine.enqueue(q, { group: 'b', data: 'b1' });
    clock.advance(1000);
    const c1 = await engine.enqueue(q, { group: 'c', data: 'c1' });
    await engine.enqueue(q, { group: 'd', data: 'd1', delayMs: 60_000, orderMs: T0 - 5000 });
    expect((await engine.getQueue(q)).oldestReady).toEqual({ id: a1.id, orderMs: T0 });

    // a1 leased: a2 (older than b1) waits behind its group's lease, not for the queue.
    const [leased] = (await engine.reserve(q, 1)).jobs;
    expect(leased!.id).toBe(a1.id);
    expect((await engine.getQueue(q)).oldestReady).toEqual({ id: b1.id, orderMs: T0 + 2000 });
    expect((await engine.listQueues()).find((entry) => entry.name === q)?.oldestReady).toEqual({ id: b1.id, orderMs: T0 + 2000 });

    // a1 failed with attempts left: group a is held for its backoff, a1 and a2 are not ready.
    await engine.fail(q, { id: a1.id, lease: leased!.lease.token, error: 'again' });
    expect((await engine.getQueue(q)).oldestReady).toEqual({ id: b1.id, orderMs: T0 + 2000 });

    // A paused group's head does not count; a paused queue's heads do (the queue keeps them).
    await engine.pauseGroup(q, 'b');
    expect((await engine.getQueue(q)).oldestReady).toEqual({ id: c1.id, orderMs: T0 + 3000 });
    await engine.pauseQueue(q);
    expect((await engine.getQueue(q)).oldestReady).toEqual({ id: c1.id, orderMs: T0 + 3000 });
    await engine.resumeQueue(q);

    // c1 leased, the rest held, paused or delayed: nothing is ready, though jobs wait.
    expect((await engine.reserve(q, 5)).jobs.map((job) => job.id)).toEqual([c1.id]);
    const info = await engine.getQueue(q);
    expect(info).not.toHaveProperty('oldestReady');
    expect(info.counts).toMatchObject({ waiting: 3, delayed: 1, active: 1 });
  });

  it('looks at the heads of every priority, not only those that start first', async () => {
    const { engine, q } = await setupQueue();
    await engine.enqueue(q, { group: 'normal', data: 'normal', orderMs: T0 - 2000 });
    await engine.enqueue(q, { group: 'urgent', data: 'urgent', priority: 10, orderMs: T0 - 1000 });
    const low = await engine.enqueue(q, { group: 'low', data: 'low', priority: -5, orderMs: T0 - 3000 });
    await engine.enqueue(q, { group: 'low-2', data: 'low-2', priority: -5, orderMs: T0 - 500 });
    expect((await engine.getQueue(q)).oldestReady).toEqual({ id: low.id, orderMs: T0 - 3000 });
    // The urgent head starts first; the oldest, of the lowest priority, still waits.
    expect((await engine.reserve(q, 1)).jobs.map((job) => job.data)).toEqual(['urgent']);
    expect((await engine.getQueue(q)).oldestReady).toEqual({ id: low.id, orderMs: T0 - 3000 });
    await engine.cancelJob(q, low.id);
    expect((await engine.getQueue(q)).oldestReady?.orderMs).toBe(T0 - 2000);
  });

  it("a partitioned queue's is the oldest of its partitions'", async () => {
    const engine = testEngine(testClock());
    const q = uniqueName('part');
    await engine.putQueue(q, { endpoint: ENDPOINT, partitions: 4 });
    onTestFinished(() => engine.deleteQueue(q).catch(() => undefined));
    // Two groups in two different partitions, the older job in the later partition.
    const groups = Array.from({ length: 40 }, (_, i) => `tenant-${i}`);
    const first = groups.find((group) => partitionOf(group, 4) === 0)!;
    const last = groups.find((group) => partitionOf(group, 4) === 3)!;
    await engine.enqueue(q, { group: first, data: null, orderMs: T0 - 1000 });
    const oldest = await engine.enqueue(q, { group: last, data: null, orderMs: T0 - 9000 });
    const info = await engine.getQueue(q);
    expect(info.counts).toMatchObject({ waiting: 2, groups: 2 });
    expect(info.oldestReady).toEqual({ id: oldest.id, orderMs: T0 - 9000 });
    expect((await engine.listQueues()).find((entry) => entry.name === q)?.oldestReady).toEqual(info.oldestReady);
    // That one cancelled: the other partition's is the oldest now.
    await engine.cancelJob(q, oldest.id);
    expect((await engine.getQueue(q)).oldestReady?.orderMs).toBe(T0 - 1000);
  });
});
