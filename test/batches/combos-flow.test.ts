// Batches with flow control, through the Worker to a recording endpoint (docs/batches.md, "How
// batches combine"): a group that runs more than one job at a time (groupConcurrency, its own
// limits, a group rate limit) gets one job per delivery, still a batch body, within its
// concurrency, while the one-job groups beside it batch; `concurrency` counts jobs, so the jobs
// at the endpoint never outnumber it and a batch takes only the slots that are left; the queue's
// rateLimit counts jobs, so no window of it starts more (the jobs' own startedAt, one clock: the
// scripts'); priority picks the group whose batch goes first and never reorders a group.
import { describe, expect, it } from 'vitest';
import { useEndpointPerTest } from '../helpers/endpoint';
import { setGroupLimits } from '../helpers/flow-endpoint';
import { enqueueBatch, getJob, useWorker } from '../delivery/support';
import {
  idsOf,
  jobsOf,
  batchQueue,
  countsWhen,
  expectBatchShapes,
  expectOneAtATime,
  gate,
  groupAction,
  recordBatches,
  within,
  expectStartsWithin,
} from './combos-support';

const env = useWorker();
const start = useEndpointPerTest();


describe('groups that run more than one job at a time', () => {
  it("a group's own concurrency 3: one job per delivery, 3 at once at most and reached; a one-job group beside it batches", async () => {
    const WIDE = 3;
    let wideOpen = 0;
    let widePeak = 0;
    const threeIn = gate();
    const endpoint = await recordBatches(start, async (d) => {
      if (d.body.group !== 'wide') return {};
      wideOpen++;
      widePeak = Math.max(widePeak, wideOpen);
      if (wideOpen === WIDE) threeIn.open();
      // Held until three are in at once (the first round) so that the peak is seen, not assumed.
      await within(threeIn.opened, 5000);
      wideOpen--;
      return {};
    });
    const queue = await batchQueue(env.worker, 'combo-wide', endpoint.url, { concurrency: 20, batch: { maxSize: 5 } });
    await setGroupLimits(env.worker, queue, 'wide', { concurrency: WIDE });
    const wide = jobsOf('wide', 9);
    const narrow = jobsOf('narrow', 10);
    await enqueueBatch(env.worker, queue, [...wide, ...narrow]);
    await countsWhen(env.worker, queue, (c) => c.completed === 19, '19 jobs completed');

    expectBatchShapes(endpoint, queue);
    // One job each; started in group order (by lease: pushes that start together may arrive in any order).
    const wideBatches = endpoint.ofGroup('wide').map((d) => d.body.jobs);
    expect(wideBatches.every((jobs) => jobs.length === 1)).toBe(true);
    const leasedAt = new Map(wideBatches.map(([job]) => [job!.id, job!.lease.expiresAt]));
    expect([...leasedAt.keys()].sort()).toEqual(idsOf(wide));
    const leases = idsOf(wide).map((id) => leasedAt.get(id)!);
    expect(leases, 'lease deadlines in group order').toEqual([...leases].sort((x, y) => x - y));
    expect(widePeak).toBe(WIDE);
    const narrowBatches = endpoint.ofGroup('narrow').map((d) => d.body.jobs.map((j) => j.id));
    expect(narrowBatches.flat()).toEqual(idsOf(narrow));
    expect(Math.max(...narrowBatches.map((b) => b.length))).toBe(5);
    expectOneAtATime(endpoint, 'narrow');
  });

  it('queue-wide groupConcurrency 2: every delivery holds one job, at most 2 of a group at once', async () => {
    const open = new Map<string, number>();
    let peak = 0;
    const endpoint = await recordBatches(start, async (d) => {
      const n = (open.get(d.body.group) ?? 0) + 1;
      open.set(d.body.group, n);
      peak = Math.max(peak, n);
      await new Promise((resolve) => setTimeout(resolve, 20));
      open.set(d.body.group, open.get(d.body.group)! - 1);
      return {};
    });
    const queue = await batchQueue(env.worker, 'combo-gc2', endpoint.url, { concurrency: 10, groupConcurrency: 2, batch: { maxSize: 4 } });
    const jobs = [...jobsOf('a', 6), ...jobsOf('b', 6)];
    await enqueueBatch(env.worker, queue, jobs);
    await countsWhen(env.worker, queue, (c) => c.completed === 12, '12 jobs completed');
    expectBatchShapes(endpoint, queue);
    expect(endpoint.batches().every((b) => b.length === 1)).toBe(true);
    expect(peak).toBeLessThanOrEqual(2);
    // Started in group order (by lease deadline: pushes that start together may arrive in any order).
    for (const g of ['a', 'b']) {
      const leasedAt = new Map(endpoint.ofGroup(g).map((d) => [d.body.jobs[0]!.id, d.body.jobs[0]!.lease.expiresAt]));
      expect([...leasedAt.keys()].sort()).toEqual(idsOf(jobsOf(g, 6)));
      const leases = idsOf(jobsOf(g, 6)).map((id) => leasedAt.get(id)!);
      expect(leases, `group ${g}: lease deadlines in group order`).toEqual([...leases].sort((x, y) => x - y));
    }
  });

  it('a group with a rate limit of its own: one job per delivery; the one-job group beside it batches', async () => {
    const endpoint = await recordBatches(start);
    const queue = await batchQueue(env.worker, 'combo-grl', endpoint.url, { concurrency: 20, batch: { maxSize: 5 } });
    await setGroupLimits(env.worker, queue, 'limited', { rateLimit: { max: 100, periodMs: 1000 } });
    const limited = jobsOf('limited', 4);
    const plain = jobsOf('plain', 5);
    await enqueueBatch(env.worker, queue, [...limited, ...plain]);
    await countsWhen(env.worker, queue, (c) => c.completed === 9, '9 jobs completed');
    expectBatchShapes(endpoint, queue);
    expect(endpoint.ofGroup('limited').map((d) => d.body.jobs.map((j) => j.id))).toEqual(idsOf(limited).map((id) => [id]));
    expect(endpoint.ofGroup('plain').map((d) => d.body.jobs.map((j) => j.id))).toEqual([idsOf(plain)]);
  });
});

describe('concurrency counts jobs', () => {
  it('a batch waits for room for all of it: with 3 of 5 out, the next group of 5 goes once they are back, whole', async () => {
    const endpoint = await recordBatches(start, async (d) => {
      // Group a's batch takes a moment: b is ready all along, and must not be cut to the 2 left.
      if (d.body.group === 'a') await new Promise((resolve) => setTimeout(resolve, 300));
      return {};
    });
    const queue = await batchQueue(env.worker, 'combo-slots', endpoint.url, { concurrency: 5, batch: { maxSize: 5 } });
    const base = Date.now() - 60_000;
    // a's jobs are older: its head is first in line, and takes 3 slots.
    await enqueueBatch(env.worker, queue, [...jobsOf('a', 3, base), ...jobsOf('b', 5, base + 1000)]);
    await countsWhen(env.worker, queue, (c) => c.completed === 8, '8 jobs completed');
    expectBatchShapes(endpoint, queue);
    const [a] = endpoint.ofGroup('a');
    expect(endpoint.ofGroup('a').map((d) => d.body.jobs.map((j) => j.id))).toEqual([idsOf(jobsOf('a', 3))]);
    // b's batch did not start while a's 3 were out: it came after, with all 5 of its jobs.
    expect(endpoint.ofGroup('b').map((d) => d.body.jobs.map((j) => j.id))).toEqual([idsOf(jobsOf('b', 5))]);
    expect(endpoint.ofGroup('b')[0]!.arrived).toBeGreaterThan(a!.answered!);
    expect(endpoint.peakJobs()).toBeLessThanOrEqual(5);
  });
});

describe('the queue rate limit counts jobs', () => {
  it('max 4 per second, a group of 10 in batches of 10: each batch cut to the window, no window starts more than 4 jobs', async () => {
    const rateLimit = { max: 4, periodMs: 1000 };
    const endpoint = await recordBatches(start);
    const queue = await batchQueue(env.worker, 'combo-rate', endpoint.url, { concurrency: 10, rateLimit, batch: { maxSize: 10 } });
    const jobs = jobsOf('hot', 10);
    await enqueueBatch(env.worker, queue, jobs);
    await countsWhen(env.worker, queue, (c) => c.completed === jobs.length, `${jobs.length} jobs completed`);
    expectBatchShapes(endpoint, queue);
    expect(endpoint.batches()).toEqual([idsOf(jobs.slice(0, 4)), idsOf(jobs.slice(4, 8)), idsOf(jobs.slice(8))]);
    await expectStartsWithin(env.worker, queue, jobs, rateLimit);
  });
});

describe('priority and orderMs', () => {
  it("a batch is in orderMs order, then enqueue order, whatever the order the jobs were enqueued in", async () => {
    const endpoint = await recordBatches(start);
    const queue = await batchQueue(env.worker, 'combo-order', endpoint.url, { batch: { maxSize: 10 } });
    const base = Date.now() - 60_000;
    await groupAction(env.worker, queue, 'g', 'pause');
    // Enqueued one call at a time, orderMs out of order; two share an orderMs.
    const sent = [
      { id: 'o4', orderMs: base + 4 },
      { id: 'o1', orderMs: base + 1 },
      { id: 'o3a', orderMs: base + 3 },
      { id: 'o2', orderMs: base + 2 },
      { id: 'o3b', orderMs: base + 3 },
      { id: 'o0', orderMs: base },
    ];
    for (const job of sent) await enqueueBatch(env.worker, queue, [{ group: 'g', ...job }]);
    await groupAction(env.worker, queue, 'g', 'resume');
    await countsWhen(env.worker, queue, (c) => c.completed === sent.length, 'every job completed');
    expectBatchShapes(endpoint, queue);
    expect(endpoint.batches()).toEqual([['o0', 'o1', 'o2', 'o3a', 'o3b', 'o4']]);
  });

  it('a job whose orderMs is still to come is not in a batch before it; orderingWindowMs adds to it', async () => {
    const WINDOW = 1500;
    const endpoint = await recordBatches(start);
    const queue = await batchQueue(env.worker, 'combo-future', endpoint.url, { orderingWindowMs: WINDOW, batch: { maxSize: 10 } });
    const now = Date.now();
    const due = [
      { id: 'due-0', group: 'g', orderMs: now - 10_000 },
      { id: 'due-1', group: 'g', orderMs: now - 9_000 },
    ];
    const later = { id: 'later', group: 'g', orderMs: now + 500 };
    await enqueueBatch(env.worker, queue, [...due, later]);
    await endpoint.until((ds) => ds.length >= 1, 'the first batch');
    // The late event of the window: its orderMs comes before `later`'s, so it runs before it.
    const late = { id: 'late', group: 'g', orderMs: now + 400 };
    const laterNotOut = !endpoint.delivered().includes('later');
    await enqueueBatch(env.worker, queue, [late]);
    await countsWhen(env.worker, queue, (c) => c.completed === 4, '4 jobs completed');
    expectBatchShapes(endpoint, queue);
    expect(endpoint.batches()[0]).toEqual(['due-0', 'due-1']);
    const arrival = (id: string) => endpoint.deliveries.find((d) => d.body.jobs.some((j) => j.id === id))!;
    expect(arrival('later').arrivedAt).toBeGreaterThanOrEqual(later.orderMs + WINDOW);
    expect(arrival('late').arrivedAt).toBeGreaterThanOrEqual(late.orderMs + WINDOW);
    expect((await getJob(env.worker, queue, 'later')).history![0]!.startedAt).toBeGreaterThanOrEqual(later.orderMs + WINDOW);
    if (laterNotOut) expect(endpoint.delivered()).toEqual(['due-0', 'due-1', 'late', 'later']);
  });

  it("a higher priority head's group goes first; a priority inside a group reorders nothing", async () => {
    const endpoint = await recordBatches(start);
    // One batch at a time: concurrency is the batch's size.
    const queue = await batchQueue(env.worker, 'combo-prio', endpoint.url, { concurrency: 3, batch: { maxSize: 3 } });
    await env.worker.api(`/v1/queues/${queue}/pause`, { method: 'POST' });
    const base = Date.now() - 60_000;
    const low = jobsOf('low', 3, base);
    // high's head has priority 10 and is the newest; mixed's head has -1, with a priority-10 job behind it.
    const high = jobsOf('high', 3, base + 5000).map((j, i) => (i === 0 ? { ...j, priority: 10 } : j));
    const mixed = jobsOf('mixed', 3, base - 1000).map((j, i) => ({ ...j, priority: [-1, 10, 0][i] }));
    await enqueueBatch(env.worker, queue, [...low, ...mixed, ...high]);
    await env.worker.api(`/v1/queues/${queue}/resume`, { method: 'POST' });
    await countsWhen(env.worker, queue, (c) => c.completed === 9, '9 jobs completed');
    expectBatchShapes(endpoint, queue);
    expect(endpoint.batches()).toEqual([idsOf(high), idsOf(low), idsOf(mixed)]);
    expect(endpoint.peakJobs()).toBeLessThanOrEqual(3);
  });
});
