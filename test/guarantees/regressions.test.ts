// Ordering and recovery bugs a peer queue (GroupMQ) shipped, each pinned by a test: late jobs
// with an earlier orderMs, ties in orderMs, delayed jobs in busy groups, vanished lease holders,
// retried heads, exhausted attempts and order keys near their limits.
import { afterEach, describe, expect, it } from 'vitest';
import type { Engine } from '../../src/core/engine';
import { epochMsSchema } from '../../src/protocol/job-input';
import type { LeasedJob } from '../../src/core/engine/leases';
import { DeliveryChecker, type Delivery, type JobSpec } from '../helpers/checker';
import { T0, type TestClock, createQueue, testClock, testEngine } from '../helpers/engine';
import { adminClient } from '../helpers/stack';

let cleanup: (() => Promise<void>) | undefined;
afterEach(async () => {
  await cleanup?.();
  cleanup = undefined;
});

async function setup(config: Record<string, unknown> = {}, clock: TestClock = testClock()) {
  const engine = testEngine(clock);
  const queue = await createQueue(engine, config);
  cleanup = () => engine.deleteQueue(queue);
  return { clock, engine, queue };
}

const lease = (job: Pick<LeasedJob, 'id' | 'lease'>) => ({ id: job.id, lease: job.lease.token });
const ids = (jobs: Pick<LeasedJob, 'id'>[]) => jobs.map((j) => j.id);

/** Completes jobs one at a time, each completion asking for the next (a one-slot drain). */
async function drainOneByOne(engine: Engine, queue: string): Promise<LeasedJob[]> {
  const started: LeasedJob[] = [];
  let next = (await engine.reserve(queue, 1)).jobs;
  while (next.length > 0) {
    started.push(...next);
    next = (await engine.complete(queue, lease(next[0]!), 1)).next;
  }
  return started;
}

/** A seeded shuffle (mulberry32), so a failure reads the same on every run. */
function shuffled<T>(items: T[], seed: number): T[] {
  let a = seed >>> 0;
  const rand = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), a | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

describe('(1) a late job with an earlier orderMs', () => {
  it('runs next in its group after 1,500 others, whether the group is idle or busy', async () => {
    const { engine, queue } = await setup({ concurrency: 1 });
    const checker = new DeliveryChecker();
    const put = (specs: JobSpec[]) =>
      checker.enqueue(specs, () => engine.enqueueBatch(queue, specs.map(({ id, group, orderMs }) => ({ id, group, orderMs }))));
    const job = (id: string, orderMs: number): JobSpec => ({ id, group: 'g', orderMs, maxAttempts: 3 });
    const jobs = Array.from({ length: 1500 }, (_, i) => job(`j${i}`, T0 - 100_000 + 10 * i));
    for (let i = 0; i < jobs.length; i += 500) await put(jobs.slice(i, i + 500));

    // Idle group, 1,500 jobs deep: the earlier job becomes its head at once.
    await put([job('early-idle', T0 - 200_000)]);
    const reserve = () => checker.exchange('r', [], async () => ({ results: [], ...(await engine.reserve(queue, 1)) }));
    let held: Delivery[] = (await reserve()).deliveries;
    expect(ids(held.map((d) => d.job))).toEqual(['early-idle']);

    const started = ['early-idle'];
    while (held.length > 0) {
      const d = held[0]!;
      // Busy group: enqueued while j699 is in flight, it starts right after j699.
      if (d.job.id === 'j699') await put([job('early-busy', T0 - 150_000)]);
      // Same orderMs as j1300 but enqueued later: right after j1300, before j1301.
      if (d.job.id === 'j1200') await put([job('tie', jobs[1300]!.orderMs)]);
      // j1000 completes without asking for more: the group is idle with j1001 as its ready head.
      const reserveNext = d.job.id === 'j1000' ? 0 : 1;
      checker.finish(d, 'complete');
      held = (
        await checker.exchange('r', [d], async () => {
          const r = await engine.complete(queue, lease(d.job), reserveNext);
          return { results: [{ id: d.job.id, state: r.state }], jobs: r.next };
        })
      ).deliveries;
      if (d.job.id === 'j1000') {
        await put([job('early-again', T0 - 120_000)]);
        held = (await reserve()).deliveries;
      }
      started.push(...held.map((h) => h.job.id));
    }

    expect(started[started.indexOf('j699') + 1]).toBe('early-busy');
    expect(started[started.indexOf('j1000') + 1]).toBe('early-again');
    expect(started[started.indexOf('j1300') + 1]).toBe('tie');
    expect(started).toHaveLength(1504);
    expect(checker.violations({ concurrency: 1, oldestFirst: true })).toEqual([]);
  });
});

describe('(2) equal orderMs keeps exact enqueue order', () => {
  it('within a group of 1,500 and across groups, in batches and single enqueues', async () => {
    const { engine, queue } = await setup({ concurrency: 1 });
    // Ids sort backwards, so neither id order nor group names can explain the result.
    const plan = Array.from({ length: 1800 }, (_, i) => ({
      id: `id-${String(9999 - i).padStart(4, '0')}`,
      group: i % 6 === 5 ? `other-${i % 10}` : 'main',
      orderMs: T0 - 1000,
    }));
    const enqueued: string[] = [];
    for (let i = 0, size = 1; i < plan.length; i += size, size = (size * 7) % 190 + 1) {
      const chunk = plan.slice(i, i + size);
      if (chunk.length === 1) await engine.enqueue(queue, chunk[0]);
      else await engine.enqueueBatch(queue, chunk);
      enqueued.push(...chunk.map((j) => j.id));
    }
    // One slot: each reservation takes the oldest head, so the whole run is enqueue order.
    expect(ids(await drainOneByOne(engine, queue))).toEqual(enqueued);
  });

  it('across groups: the group whose head was enqueued first is reserved first (G5)', async () => {
    const { engine, queue } = await setup({ concurrency: 10 });
    const groups = Array.from({ length: 30 }, (_, i) => `g${String(i).padStart(2, '0')}`);
    const heads = shuffled(groups, 7);
    const tails = shuffled(groups, 8);
    for (const group of heads) await engine.enqueue(queue, { group, id: `${group}-head`, orderMs: T0 });
    await engine.enqueueBatch(queue, tails.map((group) => ({ group, id: `${group}-tail`, orderMs: T0 })));

    const expected = [...heads.map((g) => `${g}-head`), ...tails.map((g) => `${g}-tail`)];
    for (let batch = 0; batch < 6; batch++) {
      const { jobs } = await engine.reserve(queue, 10);
      expect(ids(jobs).sort()).toEqual(expected.slice(batch * 10, batch * 10 + 10).sort());
      for (const job of jobs) await engine.complete(queue, lease(job));
    }
  });
});

describe('(3) a delayed job in a busy group', () => {
  it('never comes back from complete-with-reserveNext before its runAt passed and a tick promoted it', async () => {
    const { clock, engine, queue } = await setup({ concurrency: 5 });
    await engine.enqueueBatch(queue, Array.from({ length: 60 }, (_, i) => ({ group: 'busy', id: `b${i}` })));
    await engine.enqueueBatch(queue, Array.from({ length: 60 }, (_, i) => ({ group: 'other', id: `o${i}` })));
    // Sorts before every job of its group, so it would be picked at once if it leaked.
    const runAt = T0 + 5000;
    expect(await engine.enqueue(queue, { group: 'busy', id: 'late', orderMs: T0 - 1, runAt })).toEqual({ id: 'late', state: 'delayed' });

    let held = (await engine.reserve(queue, 5)).jobs;
    const step = async () => {
      const next: LeasedJob[] = [];
      for (const job of held) next.push(...(await engine.complete(queue, lease(job), 2)).next);
      held = next;
      return ids(next);
    };
    for (let t = T0 + 100; t < runAt; t += 100) {
      clock.set(t);
      await engine.tick(queue);
      const next = await step();
      expect(next, `at now = runAt - ${runAt - t}`).not.toContain('late');
      expect(next.some((id) => id.startsWith('b')), 'the busy group keeps running').toBe(true);
    }
    clock.set(runAt - 1);
    await engine.tick(queue);
    expect(await step()).not.toContain('late');
    expect((await engine.getJob(queue, 'late')).state).toBe('delayed');

    // Due now, but not promoted until a tick runs: still never handed out.
    clock.set(runAt);
    expect(await step()).not.toContain('late');
    await engine.tick(queue);
    expect((await engine.getJob(queue, 'late')).state).toBe('waiting');
    expect(await step()).toContain('late');
  });
});

describe('(4) a lease holder that vanished', () => {
  it('does not block its group beyond its lease: after timeoutMs + 5000 and a tick the job is retried and the group follows', async () => {
    const timeoutMs = 1000;
    const { clock, engine, queue } = await setup({ timeoutMs });
    await engine.enqueueBatch(queue, ['a', 'b', 'c'].map((id) => ({ group: 'g', id })));
    await engine.enqueueBatch(queue, Array.from({ length: 20 }, (_, i) => ({ group: 'h', id: `h${i}` })));
    const { jobs } = await engine.reserve(queue, 10);
    const lost = jobs.find((j) => j.id === 'a')!;
    expect(lost.lease.expiresAt).toBe(T0 + timeoutMs + 5000);
    // The holder never answers. Other groups keep running; g's later jobs never overtake.
    let h = jobs.find((j) => j.group === 'h')!;
    clock.advance(timeoutMs + 4999);
    await engine.tick(queue);
    expect((await engine.getJob(queue, 'a')).state).toBe('active');
    const { next } = await engine.complete(queue, lease(h), 10);
    expect(ids(next)).toEqual(['h1']);
    h = next[0]!;

    clock.advance(1);
    await engine.tick(queue);
    const expired = await engine.getJob(queue, 'a');
    expect(expired).toMatchObject({ state: 'waiting', attempts: 1, error: expect.stringMatching(/lease expired/) });
    // The default backoff (at most 1 s for a first retry) holds the group; b still waits.
    expect(ids((await engine.complete(queue, lease(h), 10)).next)).toEqual(['h2']);
    clock.set(expired.runAt!);
    await engine.tick(queue);
    const retried = (await engine.reserve(queue, 10)).jobs;
    expect(retried.map((j) => [j.id, j.attempt])).toEqual([['a', 2]]);

    // The vanished holder comes back: its token is dead and changes nothing.
    await expect(engine.complete(queue, lease(lost))).rejects.toMatchObject({ code: 'LEASE_LOST' });
    expect((await engine.getJob(queue, 'a')).state).toBe('active');
    expect(ids((await engine.complete(queue, lease(retried[0]!), 1)).next)).toEqual(['b']);
  });
});

describe('(5) a retried job stays at the head of its group', () => {
  it('later jobs are not reserved during its backoff, even with capacity free and new jobs arriving', async () => {
    const { clock, engine, queue } = await setup({ concurrency: 10 });
    await engine.enqueueBatch(queue, ['a', 'b', 'c'].map((id) => ({ group: 'g', id })));
    await engine.enqueueBatch(queue, Array.from({ length: 20 }, (_, i) => ({ group: 'h', id: `h${i}` })));
    const notG = (jobs: LeasedJob[]) => expect(jobs.filter((j) => j.group === 'g'), 'a job of g').toEqual([]);

    let [a, h] = (await engine.reserve(queue, 10)).jobs;
    expect([a!.id, h!.id]).toEqual(['a', 'h0']);
    // First retry: the queue's default backoff (exponential 1 s with jitter: 0.5-1 s).
    expect((await engine.fail(queue, { ...lease(a!), error: 'boom' })).state).toBe('waiting');
    await engine.enqueue(queue, { group: 'g', id: 'd' });
    const { runAt } = await engine.getJob(queue, 'a');
    expect(runAt).toBeGreaterThanOrEqual(T0 + 500);
    for (const at of [T0 + 400, runAt! - 1]) {
      clock.set(at);
      await engine.tick(queue);
      notG((await engine.reserve(queue, 10)).jobs);
      const { next } = await engine.complete(queue, lease(h!), 10);
      notG(next);
      h = next[0];
    }
    clock.set(runAt!);
    await engine.tick(queue);
    [a] = (await engine.reserve(queue, 10)).jobs;
    expect([a!.id, a!.attempt]).toEqual(['a', 2]);

    // Second retry with an explicit retryAfterMs: same hold, then a again.
    await engine.fail(queue, { ...lease(a!), error: 'busy', retryAfterMs: 5000 });
    clock.advance(4999);
    await engine.tick(queue);
    notG((await engine.reserve(queue, 10)).jobs);
    notG((await engine.complete(queue, lease(h!), 10)).next);
    clock.advance(1);
    await engine.tick(queue);
    [a] = (await engine.reserve(queue, 10)).jobs;
    expect([a!.id, a!.attempt]).toEqual(['a', 3]);
    expect(ids((await engine.complete(queue, lease(a!), 1)).next)).toEqual(['b']);
  });
});

describe('(6) a job that exhausts its attempts', () => {
  it('moves to failed and its group moves on: by retries, by retry: false and by lease expiry', async () => {
    const { clock, engine, queue } = await setup({ timeoutMs: 1000 });
    await engine.enqueueBatch(queue, [
      { group: 'g', id: 'a', maxAttempts: 2 },
      { group: 'g', id: 'b' },
      { group: 'g', id: 'c', maxAttempts: 1 },
      { group: 'g', id: 'd' },
    ]);
    const [a1] = (await engine.reserve(queue, 1)).jobs;
    expect((await engine.fail(queue, { ...lease(a1!), error: 'x', retryAfterMs: 0 })).state).toBe('waiting');
    const [a2] = (await engine.reserve(queue, 1)).jobs;
    expect([a2!.id, a2!.attempt, a2!.maxAttempts]).toEqual(['a', 2, 2]);
    const failedA = await engine.fail(queue, { ...lease(a2!), error: 'x', retryAfterMs: 0 }, 1);
    expect([failedA.state, ids(failedA.next)]).toEqual(['failed', ['b']]);

    const failedB = await engine.fail(queue, { ...lease(failedA.next[0]!), error: 'bad input', retry: false }, 1);
    expect([failedB.state, ids(failedB.next)]).toEqual(['failed', ['c']]);

    // c's only attempt times out: the tick fails it and d is ready at once.
    clock.advance(1000 + 5000);
    await engine.tick(queue);
    expect((await engine.getJob(queue, 'c')).state).toBe('failed');
    expect(ids((await engine.reserve(queue, 1)).jobs)).toEqual(['d']);
    expect((await engine.getQueue(queue)).counts).toMatchObject({ failed: 3, active: 1, waiting: 0 });
  });
});

describe('(7) order keys do not overflow', () => {
  // The largest orderMs/runAt the API accepts, whatever it is: every accepted value must stay
  // exact (Redis' cjson writes numbers with 14 significant digits; at 8.64e15 it rounded them).
  const MAX = epochMsSchema.maxValue!;

  // Offsets below MAX, shuffled, with ties: neither enqueue order nor ids explain the result.
  const offsets = shuffled([...Array.from({ length: 40 }, (_, i) => i * 37 + 1), 300, 300, 300, 0, 0, 1, 2], 3);
  const plan = offsets.map((offset, i) => ({ group: 'g', id: `k${i}`, orderMs: MAX - offset }));
  const expectedOrder = plan
    .map((job, index) => ({ ...job, index }))
    .sort((x, y) => x.orderMs - y.orderMs || x.index - y.index)
    .map((job) => job.id);

  it('runs jobs with orderMs near the largest accepted in exact (orderMs, enqueue) order', async () => {
    const { engine, queue } = await setup({ concurrency: 1 }, testClock(MAX));
    for (const job of plan.slice(0, 20)) await engine.enqueue(queue, job);
    await engine.enqueueBatch(queue, plan.slice(20));
    expect(ids(await drainOneByOne(engine, queue))).toEqual(expectedOrder);
  });

  it('hands out the exact orderMs a job was enqueued with, near the largest accepted', async () => {
    const { engine, queue } = await setup({ concurrency: 1 }, testClock(MAX));
    await engine.enqueueBatch(queue, plan);
    const started = await drainOneByOne(engine, queue);
    const enqueuedAt = new Map(plan.map((j) => [j.id, j.orderMs]));
    const changed = started.filter((j) => j.orderMs !== enqueuedAt.get(j.id));
    expect(changed.map((j) => `${j.id}: enqueued ${enqueuedAt.get(j.id)}, leased ${j.orderMs}`)).toEqual([]);
  });

  it('orders a promoted delayed job by its exact orderMs, near the largest accepted', async () => {
    const clock = testClock(MAX - 10_000);
    const { engine, queue } = await setup({ concurrency: 1 }, clock);
    // The delayed job sorts first (earlier orderMs, enqueued first); they differ by 30 ms.
    await engine.enqueue(queue, { group: 'g', id: 'delayed', orderMs: MAX - 10_050, runAt: MAX - 5000 });
    await engine.enqueue(queue, { group: 'g', id: 'waiting', orderMs: MAX - 10_020 });
    clock.set(MAX - 5000);
    await engine.tick(queue);
    expect(ids(await drainOneByOne(engine, queue))).toEqual(['delayed', 'waiting']);
  });

  it('keeps exact enqueue order across large sequence numbers', async () => {
    const { engine, queue } = await setup({ concurrency: 1 });
    const admin = adminClient();
    try {
      // A long-lived queue: its enqueue sequence crosses 2^31, 2^32 and a new decimal digit.
      for (const start of [2 ** 31 - 3, 2 ** 32 - 3, 10 ** 12 - 3, 2 ** 40 - 3]) {
        await admin.call(['HSET', `gq:{${queue}}:meta`, 'seq', String(start)]);
        const batch = Array.from({ length: 6 }, (_, i) => ({ group: `g${i % 2}`, id: `s${start}-${9 - i}`, orderMs: T0 }));
        await engine.enqueueBatch(queue, batch.slice(0, 3));
        for (const job of batch.slice(3)) await engine.enqueue(queue, job);
        expect(ids(await drainOneByOne(engine, queue))).toEqual(batch.map((j) => j.id));
      }
    } finally {
      admin.close();
    }
  });
});
