// enqueueAndReserve: the Worker's way in. An enqueue leases ready jobs in the same script call,
// by the same rules as reserve (G1 one lease per group, G5 oldest head first, G6 capacity, paused
// queues and groups, the ordering window). A lone job on a quiet queue takes a shorter path
// (leased "solo", without entering `ready` or its group zset): these tests hold it to the same
// rules and state.
import { afterAll, describe, expect, it } from 'vitest';
import { DUE_KEY, queueKeys } from '../../src/core/store/keys';
import { setupQueue } from '../helpers/engine';
import { adminClient } from '../helpers/stack';

describe('enqueueAndReserve', () => {
  const admin = adminClient();
  afterAll(() => admin.close());
  const ready = async (q: string) => ((await admin.call(['ZRANGE', queueKeys(q).ready, 0, -1, 'WITHSCORES'])) as Buffer[]).map(String);

  it('leases a lone job at once: active with its deadline, nothing in ready, the deadline in the due index', async () => {
    const { clock, engine, q } = await setupQueue({ timeoutMs: 10_000 });
    await engine.tick(q); // the new queue's first pass: no timer is left after it
    expect(await ready(q)).toEqual([]);
    const { results, leased } = await engine.enqueueAndReserve(q, { id: 'a', group: 'g', data: { n: 1 } }, 6);
    expect(results).toEqual([{ id: 'a', state: 'waiting' }]);
    expect(leased).toHaveLength(1);
    const deadline = clock.now() + 15_000;
    expect(leased[0]).toMatchObject({ id: 'a', group: 'g', data: { n: 1 }, rawData: '{"n":1}', attempt: 1, lease: { expiresAt: deadline } });
    expect(await ready(q)).toEqual([]);
    expect(Number(await admin.call(['ZSCORE', DUE_KEY, q]))).toBe(deadline);
    expect((await engine.getJob(q, 'a')).state).toBe('active');
    // The lease's deadline is a timer: the tick expires it then, and not before.
    expect(await engine.tick(q)).toMatchObject({ nextDueAt: deadline, readyNow: false });
    // The group is busy: its next job waits, and is leased when the first completes.
    expect((await engine.enqueueAndReserve(q, { id: 'b', group: 'g' }, 6)).leased).toEqual([]);
    const done = await engine.complete(q, { id: 'a', lease: leased[0]!.lease.token }, 6);
    expect(done.next.map((job) => job.id)).toEqual(['b']);
  });

  it("a new earlier head replaces its group's entry in ready and is leased; the group's old head waits its turn", async () => {
    const { clock, engine, q } = await setupQueue({ orderingWindowMs: 1000 });
    await engine.tick(q);
    // 'late' heads group g in ready, not due before now + 1000 (the ordering window).
    await engine.enqueue(q, { id: 'late', group: 'g', orderMs: clock.now() });
    const { leased } = await engine.enqueueAndReserve(q, { id: 'early', group: 'g', orderMs: clock.now() - 2000 }, 6);
    expect(leased.map((job) => job.id)).toEqual(['early']);
    // The group is active: nothing of it is left in ready, so 'late' cannot start.
    expect(await ready(q)).toEqual([]);
    clock.advance(1000);
    expect((await engine.reserve(q, 6)).jobs).toEqual([]);
    const done = await engine.complete(q, { id: 'early', lease: leased[0]!.lease.token }, 6);
    expect(done.next.map((job) => job.id)).toEqual(['late']);
  });

  it('an older head of another group goes first (G5)', async () => {
    const { clock, engine, q } = await setupQueue();
    await engine.enqueue(q, { id: 'old', group: 'x' });
    clock.advance(10);
    const { leased } = await engine.enqueueAndReserve(q, { id: 'new', group: 'y' }, 1);
    expect(leased.map((job) => job.id)).toEqual(['old']);
    expect((await engine.reserve(q, 6)).jobs.map((job) => job.id)).toEqual(['new']);
  });

  it('a younger due head of another group is leased along with the new one', async () => {
    const { clock, engine, q } = await setupQueue();
    await engine.enqueue(q, { id: 'later', group: 'x', orderMs: clock.now() - 10 });
    const { leased } = await engine.enqueueAndReserve(q, { id: 'first', group: 'y', orderMs: clock.now() - 20 }, 6);
    expect(leased.map((job) => job.id)).toEqual(['first', 'later']);
  });

  it('at capacity nothing is leased, and the job is reserved once a slot frees (G6)', async () => {
    const { engine, q } = await setupQueue({ concurrency: 1 });
    const [busy] = (await engine.enqueueAndReserve(q, { id: 'a', group: 'g1' }, 6)).leased;
    expect((await engine.enqueueAndReserve(q, { id: 'b', group: 'g2' }, 6)).leased).toEqual([]);
    expect((await engine.getJob(q, 'b')).state).toBe('waiting');
    const done = await engine.complete(q, { id: 'a', lease: busy!.lease.token }, 6);
    expect(done.next.map((job) => job.id)).toEqual(['b']);
  });

  it('a paused queue or a paused group leases nothing; the job waits', async () => {
    const { engine, q } = await setupQueue();
    await engine.pauseQueue(q);
    expect((await engine.enqueueAndReserve(q, { id: 'a', group: 'g' }, 6)).leased).toEqual([]);
    await engine.resumeQueue(q);
    await engine.pauseGroup(q, 'h');
    expect((await engine.enqueueAndReserve(q, { id: 'b', group: 'h' }, 6)).leased.map((job) => job.id)).toEqual(['a']);
    expect((await engine.getJob(q, 'b')).state).toBe('waiting');
  });

  it('a job inside the ordering window is not leased before orderMs + window', async () => {
    const { clock, engine, q } = await setupQueue({ orderingWindowMs: 5000 });
    expect((await engine.enqueueAndReserve(q, { id: 'a', group: 'g' }, 6)).leased).toEqual([]);
    clock.advance(5000);
    expect((await engine.reserve(q, 6)).jobs.map((job) => job.id)).toEqual(['a']);
  });

  it('reserve 0 leases nothing; a delayed job is not leased', async () => {
    const { engine, q } = await setupQueue();
    expect((await engine.enqueueAndReserve(q, { id: 'a', group: 'g' }, 0)).leased).toEqual([]);
    expect((await engine.enqueueAndReserve(q, { id: 'b', group: 'h', delayMs: 1000 }, 6)).leased.map((job) => job.id)).toEqual(['a']);
  });
});
