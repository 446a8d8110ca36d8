// Batches within the queue's limits, across groups: a reservation never leases past `concurrency`
// or the rate limit's window, however many heads it found (a batch takes their room), a
// follower's history starts with its batch, and a callback out of order is 409 OUT_OF_ORDER.
import { describe, expect, it } from 'vitest';
import { useEndpointPerTest } from '../helpers/endpoint';
import { batchQueue, countsWhen, expectBatchShapes, expectStartsWithin, expectOneAtATime, idsOf, jobsOf, recordBatches } from './combos-support';
import { callback, enqueueBatch, getJob, useWorker } from '../delivery/support';

const env = useWorker();
const start = useEndpointPerTest();

describe('limits across groups', () => {
  it('concurrency: a 4-job group and a 1-job group, concurrency 4, maxSize 4: at most 4 jobs out', async () => {
    const endpoint = await recordBatches(start, () => ({ delayMs: 300 }));
    const queue = await batchQueue(env.worker, 'bug-conc', endpoint.url, { concurrency: 4, batch: { maxSize: 4 } });
    const base = Date.now() - 60_000;
    await enqueueBatch(env.worker, queue, [
      ...[0, 1, 2, 3].map((i) => ({ id: `a${i}`, group: 'a', orderMs: base + i })),
      { id: 'b0', group: 'b', orderMs: base + 10 },
    ]);
    await countsWhen(env.worker, queue, (c) => c.completed === 5, '5 completed');
    expect(endpoint.peakJobs()).toBeLessThanOrEqual(4); // got 5: [a0..a3] and [b0] out together
  });

  it('rate: rateLimit 4 per minute, maxSize 10, a 6-job group and a 1-job group: 4 jobs start in the minute', async () => {
    const endpoint = await recordBatches(start);
    const queue = await batchQueue(env.worker, 'bug-rate', endpoint.url, { concurrency: 10, rateLimit: { max: 4, periodMs: 60_000 }, batch: { maxSize: 10 } });
    const base = Date.now() - 60_000;
    await enqueueBatch(env.worker, queue, [
      ...[0, 1, 2, 3, 4, 5].map((i) => ({ id: `a${i}`, group: 'a', orderMs: base + i })),
      { id: 'b0', group: 'b', orderMs: base + 10 },
    ]);
    await countsWhen(env.worker, queue, (c) => (c.completed ?? 0) >= 4 && c.active === 0, 'the first window');
    expect(endpoint.delivered()).toEqual(['a0', 'a1', 'a2', 'a3']); // got a0..a3 and b0
  });

  it("a follower's history startedAt: its batch's start, whatever its own timeoutMs", async () => {
    const endpoint = await recordBatches(start);
    const queue = await batchQueue(env.worker, 'bug-started', endpoint.url, { timeoutMs: 10_000, batch: { maxSize: 3 } });
    await enqueueBatch(env.worker, queue, [{ id: 's0', group: 'g' }, { id: 's1', group: 'g', timeoutMs: 60_000 }, { id: 's2', group: 'g', timeoutMs: 1000 }]);
    await countsWhen(env.worker, queue, (c) => c.completed === 3, '3 jobs completed');
    const jobs = await Promise.all(['s0', 's1', 's2'].map((id) => getJob(env.worker, queue, id)));
    // got s0: createdAt + ~0, s1: createdAt - 50000, s2: createdAt + 9000
    expect(jobs.map((j) => j.history![0]!.startedAt - j.createdAt).map((d) => d >= 0 && d < 5000)).toEqual([true, true, true]);
  });

  it('a callback out of order answers 409 OUT_OF_ORDER', async () => {
    const endpoint = await recordBatches(start, () => ({ status: 202 }));
    const queue = await batchQueue(env.worker, 'bug-ooo', endpoint.url, { batch: { maxSize: 2 } });
    await enqueueBatch(env.worker, queue, [{ id: 'x0', group: 'g' }, { id: 'x1', group: 'g' }]);
    await endpoint.until((ds) => ds.length === 1, 'the batch');
    const x1 = endpoint.deliveries[0]!.body.jobs[1]!;
    const res = await callback(x1.callbacks.complete, { lease: x1.lease.token, result: 'early' });
    expect({ status: res.status, code: res.json?.error?.code }).toEqual({ status: 409, code: 'OUT_OF_ORDER' }); // got 500 INTERNAL
  });
  it('6 groups of 7 jobs, concurrency 4, batches of 4, answers after 0-15 ms: never more than 4 jobs at the endpoint', async () => {
    const endpoint = await recordBatches(start, (d) => ({ delayMs: (d.arrived * 7) % 16 }));
    const queue = await batchQueue(env.worker, 'combo-conc', endpoint.url, { concurrency: 4, batch: { maxSize: 4 } });
    const groups = ['g0', 'g1', 'g2', 'g3', 'g4', 'g5'];
    const jobs = groups.flatMap((g) => jobsOf(g, 7));
    await enqueueBatch(env.worker, queue, jobs);
    await countsWhen(env.worker, queue, (c) => c.completed === jobs.length, `${jobs.length} jobs completed`);
    expectBatchShapes(endpoint, queue);
    expect(endpoint.peakJobs()).toBeLessThanOrEqual(4);
    expect(endpoint.batches().every((b) => b.length >= 1 && b.length <= 4)).toBe(true);
    for (const g of groups) {
      expect(endpoint.ofGroup(g).flatMap((d) => d.body.jobs.map((j) => j.id))).toEqual(idsOf(jobsOf(g, 7)));
      expectOneAtATime(endpoint, g);
    }
  });
  it('max 4 per second over 14 jobs in batches of 10: no window starts more than 4 jobs, none is dropped', async () => {
    const rateLimit = { max: 4, periodMs: 1000 };
    const endpoint = await recordBatches(start);
    const queue = await batchQueue(env.worker, 'combo-rate', endpoint.url, { concurrency: 10, rateLimit, batch: { maxSize: 10 } });
    const jobs = [...jobsOf('hot', 10), ...jobsOf('other', 4)];
    await enqueueBatch(env.worker, queue, jobs);
    await countsWhen(env.worker, queue, (c) => c.completed === jobs.length, `${jobs.length} jobs completed`);
    expectBatchShapes(endpoint, queue);
    expect(endpoint.batches().every((b) => b.length <= rateLimit.max)).toBe(true);
    expect(endpoint.ofGroup('hot').flatMap((d) => d.body.jobs.map((j) => j.id))).toEqual(idsOf(jobsOf('hot', 10)));
    await expectStartsWithin(env.worker, queue, jobs, rateLimit);
  });
});
