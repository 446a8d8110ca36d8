// Leases: reserve, complete, fail (retry and backoff), the fencing of stale tokens, heartbeat,
// progress and batched settle. Every test runs on its own queue against the real Redis.
import { describe, expect, it } from 'vitest';
import type { LeasedJob } from '../../src/core/engine/leases';
import type { Engine } from '../../src/core/engine';
import { rejectsWith, setupQueue, T0 } from '../helpers/engine';
import { uniqueName } from '../helpers/stack';

const DAY_MS = 86_400_000;

async function reserveOne(engine: Engine, q: string): Promise<LeasedJob> {
  const [job] = (await engine.reserve(q, 1)).jobs;
  expect(job).toBeDefined();
  return job!;
}

const ref = (job: LeasedJob) => ({ id: job.id, lease: job.lease.token });

/** What a user can see of a job and its queue: used to check that nothing changed. */
async function observe(engine: Engine, q: string, id: string) {
  const job = await engine.getJob(q, id).catch((error: { code?: string }) => error.code);
  return { job, counts: (await engine.getQueue(q)).counts };
}

describe('reserve', () => {
  it('leases a job with a token, expiresAt = now + timeoutMs + 5 s, and a 1-based attempt', async () => {
    const { engine, q } = await setupQueue();
    await engine.enqueue(q, { id: 'j', group: 'g', data: { n: 1 } });
    const { config, jobs } = await engine.reserve(q, 5);
    expect(config.timeoutMs).toBe(30_000);
    expect(jobs).toEqual([
      {
        id: 'j', queue: q, tag: q, group: 'g', data: { n: 1 }, rawData: '{"n":1}', attempt: 1, maxAttempts: 3,
        orderMs: T0, createdAt: T0, timeoutMs: 30_000, lease: { token: expect.any(String), expiresAt: T0 + 35_000 },
        webhookId: expect.stringMatching(/^msg_[0-9a-f]{32}$/), seq: 1, solo: false, recordNeeded: false, named: true, batchIndex: 0,
      },
    ]);
    expect(jobs[0]!.lease.token.length).toBeGreaterThanOrEqual(16);
  });

  it("uses a job's own timeoutMs and maxAttempts", async () => {
    const { engine, q } = await setupQueue();
    await engine.enqueue(q, { group: 'g', timeoutMs: 2000, maxAttempts: 7 });
    const job = await reserveOne(engine, q);
    expect(job).toMatchObject({ timeoutMs: 2000, maxAttempts: 7, lease: { expiresAt: T0 + 7000 } });
  });

  it('takes one job per group, oldest head first, within the concurrency', async () => {
    const { engine, q } = await setupQueue({ concurrency: 3 });
    await engine.enqueueBatch(q, [
      { id: 'a1', group: 'a', orderMs: T0 - 10 },
      { id: 'a2', group: 'a', orderMs: T0 - 40 },
      { id: 'b1', group: 'b', orderMs: T0 - 30 },
      { id: 'c1', group: 'c', orderMs: T0 - 20 },
      { id: 'd1', group: 'd', orderMs: T0 - 5 },
    ]);
    const first = (await engine.reserve(q, 10)).jobs;
    expect(first.map((job) => job.id)).toEqual(['a2', 'b1', 'c1']);
    expect(new Set(first.map((job) => job.lease.token)).size).toBe(3);
    expect((await engine.reserve(q, 10)).jobs).toEqual([]);
    const { next } = await engine.complete(q, ref(first[0]!), 10);
    expect(next.map((job) => job.id)).toEqual(['a1']);
  });

  it('reserve(0) leases nothing; an unknown queue is QUEUE_NOT_FOUND', async () => {
    const { engine, q } = await setupQueue();
    await engine.enqueue(q, { group: 'g' });
    expect((await engine.reserve(q, 0)).jobs).toEqual([]);
    await rejectsWith(engine.reserve(uniqueName('q'), 1), 'QUEUE_NOT_FOUND');
  });
});

describe('complete', () => {
  it('with keepCompleted 0 the job is deleted at once', async () => {
    const { engine, q } = await setupQueue();
    await engine.enqueue(q, { id: 'j', group: 'g' });
    expect(await engine.complete(q, { ...ref(await reserveOne(engine, q)), result: { ok: 1 } })).toEqual({ state: 'completed', next: [], target: expect.objectContaining({ endpoint: expect.any(String) }), outcomes: [], tag: q });
    await rejectsWith(engine.getJob(q, 'j'), 'JOB_NOT_FOUND');
    expect((await engine.getQueue(q)).counts).toMatchObject({ completed: 0, active: 0, groups: 0 });
  });

  it('with keepCompleted > 0 the result is kept, and only the newest keepCompleted jobs stay', async () => {
    const { clock, engine, q } = await setupQueue({ keepCompleted: 2 });
    await engine.enqueueBatch(q, [{ id: 'j1', group: 'g' }, { id: 'j2', group: 'g' }, { id: 'j3', group: 'g' }]);
    for (const result of [{ a: [] }, 'text', undefined]) {
      clock.advance(100);
      await engine.complete(q, { ...ref(await reserveOne(engine, q)), result });
    }
    await rejectsWith(engine.getJob(q, 'j1'), 'JOB_NOT_FOUND');
    expect(await engine.getJob(q, 'j2')).toMatchObject({ state: 'completed', result: 'text', finishedAt: T0 + 200 });
    expect(await engine.getJob(q, 'j3')).not.toHaveProperty('result');
    expect((await engine.getQueue(q)).counts.completed).toBe(2);
  });

  it("reserveNext returns the group's next job when it is the oldest ready head", async () => {
    const { engine, q } = await setupQueue();
    await engine.enqueueBatch(q, [
      { id: 'a1', group: 'a', orderMs: T0 - 30 },
      { id: 'a2', group: 'a', orderMs: T0 - 20 },
      { id: 'b1', group: 'b', orderMs: T0 - 10 },
    ]);
    const a1 = await reserveOne(engine, q);
    const { next } = await engine.complete(q, ref(a1), 1);
    expect(next.map((job) => [job.id, job.attempt])).toEqual([['a2', 1]]);
  });

  it("reserveNext returns another group's older head first (G5)", async () => {
    const { engine, q } = await setupQueue();
    await engine.enqueueBatch(q, [
      { id: 'a1', group: 'a', orderMs: T0 - 30 },
      { id: 'b1', group: 'b', orderMs: T0 - 20 },
      { id: 'a2', group: 'a', orderMs: T0 - 10 },
    ]);
    const a1 = await reserveOne(engine, q);
    expect((await engine.complete(q, ref(a1), 1)).next.map((job) => job.id)).toEqual(['b1']);
  });
});

describe('fail', () => {
  /** Fails the job's current attempt and returns how long until its retry. */
  async function failAndDelay(engine: Engine, q: string, now: number, id: string) {
    const job = await reserveOne(engine, q);
    expect(job.id).toBe(id);
    expect(await engine.fail(q, { ...ref(job), error: `attempt ${job.attempt}` })).toEqual({ state: 'waiting', next: [], target: expect.objectContaining({ endpoint: expect.any(String) }), outcomes: [], tag: q });
    const view = await engine.getJob(q, id);
    expect(view).toMatchObject({ state: 'waiting', attempts: job.attempt, error: `attempt ${job.attempt}` });
    return view.runAt! - now;
  }

  it.each([
    ['exponential', { type: 'exponential', delayMs: 1000, maxDelayMs: 5000, jitter: false }, [1000, 2000, 4000, 5000]],
    ['fixed', { type: 'fixed', delayMs: 1500, jitter: false }, [1500, 1500, 1500, 1500]],
  ] as const)('retries with %s backoff at exactly now + delay (jitter off)', async (_type, backoff, delays) => {
    const { clock, engine, q } = await setupQueue({ maxAttempts: 5, backoff });
    await engine.enqueue(q, { id: 'j', group: 'g' });
    for (const expected of delays) {
      const delay = await failAndDelay(engine, q, clock.now(), 'j');
      expect(delay).toBe(expected);
      clock.advance(delay);
      await engine.tick(q);
    }
    expect((await reserveOne(engine, q)).attempt).toBe(5);
  });

  it("uses a job's own backoff over the queue's", async () => {
    const { clock, engine, q } = await setupQueue({ backoff: { delayMs: 1000, jitter: false } });
    await engine.enqueue(q, { id: 'j', group: 'g', backoff: { type: 'fixed', delayMs: 250, jitter: false } });
    expect(await failAndDelay(engine, q, clock.now(), 'j')).toBe(250);
  });

  it('with jitter, each delay falls in [delay/2, delay)', async () => {
    const { clock, engine, q } = await setupQueue({ concurrency: 40, backoff: { delayMs: 1000, jitter: true } });
    await engine.enqueueBatch(q, Array.from({ length: 40 }, (_, i) => ({ id: `j${i}`, group: `g${i}` })));
    const jobs = (await engine.reserve(q, 40)).jobs;
    await engine.settle(q, jobs.map((job) => ({ kind: 'fail' as const, ...ref(job), error: 'x' })), 0);
    const delays = await Promise.all(jobs.map(async (job) => (await engine.getJob(q, job.id)).runAt! - clock.now()));
    for (const delay of delays) {
      expect(delay).toBeGreaterThanOrEqual(500);
      expect(delay).toBeLessThan(1000);
    }
    expect(new Set(delays).size).toBeGreaterThan(1);
  });

  it('holds the group until runAt: later jobs of the group do not overtake the retry', async () => {
    const { clock, engine, q } = await setupQueue({ backoff: { type: 'fixed', delayMs: 3000, jitter: false } });
    await engine.enqueueBatch(q, [{ id: 'first', group: 'g' }, { id: 'second', group: 'g' }]);
    await engine.fail(q, { ...ref(await reserveOne(engine, q)), error: 'boom' });
    expect((await engine.reserve(q, 10)).jobs).toEqual([]);
    clock.advance(2999);
    await engine.tick(q);
    expect((await engine.reserve(q, 10)).jobs).toEqual([]);
    clock.advance(1);
    await engine.tick(q);
    expect((await engine.reserve(q, 10)).jobs.map((job) => [job.id, job.attempt])).toEqual([['first', 2]]);
  });

  it('retryAfterMs sets the delay instead of the backoff; 0 retries at once', async () => {
    const { clock, engine, q } = await setupQueue({ backoff: { delayMs: 1000, jitter: false } });
    await engine.enqueue(q, { id: 'j', group: 'g' });
    await engine.fail(q, { ...ref(await reserveOne(engine, q)), error: 'HTTP 429', retryAfterMs: 7000 });
    expect((await engine.getJob(q, 'j')).runAt).toBe(T0 + 7000);
    clock.advance(7000);
    await engine.tick(q);
    await engine.fail(q, { ...ref(await reserveOne(engine, q)), error: 'HTTP 503', retryAfterMs: 0 });
    expect((await reserveOne(engine, q)).attempt).toBe(3);
  });

  it('retry: false fails the job at once and the group continues with its next job', async () => {
    const { engine, q } = await setupQueue({ maxAttempts: 5 });
    await engine.enqueueBatch(q, [{ id: 'bad', group: 'g' }, { id: 'next', group: 'g' }]);
    const bad = await reserveOne(engine, q);
    const error = 'HTTP 400: {"msg":"bad input"}\n<br/> żółć';
    const { state, next } = await engine.fail(q, { ...ref(bad), error, retry: false }, 1);
    expect(state).toBe('failed');
    expect(next.map((job) => job.id)).toEqual(['next']);
    expect(await engine.getJob(q, 'bad')).toMatchObject({ state: 'failed', attempts: 1, error, finishedAt: T0 });
  });

  it('after maxAttempts the job fails and the group continues with its next job', async () => {
    const { clock, engine, q } = await setupQueue({ maxAttempts: 2, backoff: { type: 'fixed', delayMs: 100, jitter: false } });
    await engine.enqueueBatch(q, [{ id: 'bad', group: 'g' }, { id: 'next', group: 'g' }]);
    await engine.fail(q, { ...ref(await reserveOne(engine, q)), error: 'one' });
    clock.advance(100);
    await engine.tick(q);
    const last = await reserveOne(engine, q);
    expect([last.id, last.attempt]).toEqual(['bad', 2]);
    expect((await engine.fail(q, { ...ref(last), error: 'two' })).state).toBe('failed');
    expect(await engine.getJob(q, 'bad')).toMatchObject({ state: 'failed', attempts: 2, error: 'two' });
    expect((await reserveOne(engine, q)).id).toBe('next');
  });

  it('keeps only the newest keepFailed failed jobs; keepFailed 0 deletes them', async () => {
    const { clock, engine, q } = await setupQueue({ keepFailed: 1, maxAttempts: 1 });
    await engine.enqueueBatch(q, [{ id: 'f1', group: 'g' }, { id: 'f2', group: 'g' }]);
    for (let i = 0; i < 2; i++) {
      clock.advance(10);
      await engine.fail(q, { ...ref(await reserveOne(engine, q)), error: 'x' });
    }
    await rejectsWith(engine.getJob(q, 'f1'), 'JOB_NOT_FOUND');
    expect((await engine.getJob(q, 'f2')).state).toBe('failed');
    const { engine: other, q: dropping } = await setupQueue({ keepFailed: 0, maxAttempts: 1 });
    await other.enqueue(dropping, { id: 'gone', group: 'g' });
    await other.fail(dropping, { ...ref(await reserveOne(other, dropping)), error: 'x' });
    await rejectsWith(other.getJob(dropping, 'gone'), 'JOB_NOT_FOUND');
    expect((await other.getQueue(dropping)).counts.failed).toBe(0);
  });
});

describe('LEASE_LOST', () => {
  /** Every lease callback with `lease` must be LEASE_LOST and leave the job and counts as they were. */
  async function expectLost(engine: Engine, q: string, id: string, lease: string) {
    const before = await observe(engine, q, id);
    await rejectsWith(engine.complete(q, { id, lease }), 'LEASE_LOST');
    await rejectsWith(engine.fail(q, { id, lease, error: 'late' }), 'LEASE_LOST');
    await rejectsWith(engine.fail(q, { id, lease, error: 'late', retry: false }), 'LEASE_LOST');
    await rejectsWith(engine.heartbeat(q, { id, lease }), 'LEASE_LOST');
    await rejectsWith(engine.progress(q, { id, lease, progress: 50 }), 'LEASE_LOST');
    const settled = await engine.settle(q, [{ kind: 'complete', id, lease }], 0);
    expect(settled.results).toEqual([{ id, state: 'LEASE_LOST' }]);
    expect(await observe(engine, q, id)).toEqual(before);
  }

  it('a wrong token', async () => {
    const { engine, q } = await setupQueue();
    await engine.enqueue(q, { id: 'j', group: 'g' });
    const job = await reserveOne(engine, q);
    await expectLost(engine, q, 'j', `${job.lease.token.slice(0, -1)}x`);
    expect(await engine.complete(q, ref(job))).toMatchObject({ state: 'completed' });
  });

  it('a token after complete', async () => {
    const { engine, q } = await setupQueue({ keepCompleted: 10 });
    await engine.enqueue(q, { id: 'j', group: 'g' });
    const job = await reserveOne(engine, q);
    await engine.complete(q, { ...ref(job), result: 1 });
    await expectLost(engine, q, 'j', job.lease.token);
  });

  it('a token after the lease expired and the tick retried the job, before and after it is leased again', async () => {
    const { clock, engine, q } = await setupQueue({ timeoutMs: 1000 });
    await engine.enqueue(q, { id: 'j', group: 'g' });
    const stale = await reserveOne(engine, q);
    clock.advance(6001);
    await engine.tick(q);
    expect((await engine.getJob(q, 'j')).state).toBe('waiting');
    await expectLost(engine, q, 'j', stale.lease.token);
    clock.advance(10_000);
    await engine.tick(q);
    const fresh = await reserveOne(engine, q);
    expect(fresh.attempt).toBe(2);
    await expectLost(engine, q, 'j', stale.lease.token);
    expect(await engine.complete(q, ref(fresh))).toMatchObject({ state: 'completed' });
  });

  it('a removed job', async () => {
    const { engine, q } = await setupQueue();
    await engine.enqueue(q, { id: 'j', group: 'g' });
    const job = await reserveOne(engine, q);
    await engine.fail(q, { ...ref(job), error: 'retry later' });
    await engine.removeJob(q, 'j');
    await expectLost(engine, q, 'j', job.lease.token);
  });
});

describe('heartbeat', () => {
  it("extends to now + the job's timeoutMs, or now + extendMs", async () => {
    const { clock, engine, q } = await setupQueue();
    await engine.enqueue(q, { id: 'j', group: 'g', timeoutMs: 4000 });
    const job = await reserveOne(engine, q);
    clock.advance(1000);
    expect(await engine.heartbeat(q, ref(job))).toEqual({ expiresAt: T0 + 5000 });
    expect(await engine.heartbeat(q, { ...ref(job), extendMs: 60_000 })).toEqual({ expiresAt: T0 + 61_000 });
    expect(await engine.heartbeat(q, { ...ref(job), extendMs: DAY_MS })).toEqual({ expiresAt: T0 + 1000 + DAY_MS });
    expect(await engine.getJob(q, 'j')).toMatchObject({ state: 'active', startedAt: T0, leaseExpiresAt: T0 + 1000 + DAY_MS });
  });

  it('caps an extension at 24 h', async () => {
    const { engine, q } = await setupQueue();
    await engine.enqueue(q, { id: 'j', group: 'g' });
    const job = await reserveOne(engine, q);
    expect(await engine.heartbeat(q, { ...ref(job), extendMs: 2 * DAY_MS })).toEqual({ expiresAt: T0 + DAY_MS });
  });

  it('a heartbeated lease is not expired by the tick before its new deadline', async () => {
    const { clock, engine, q } = await setupQueue({ timeoutMs: 1000 });
    await engine.enqueue(q, { id: 'j', group: 'g' });
    const job = await reserveOne(engine, q);
    clock.advance(5000);
    const { expiresAt } = await engine.heartbeat(q, { ...ref(job), extendMs: 30_000 });
    clock.set(expiresAt - 1);
    await engine.tick(q);
    expect((await engine.getJob(q, 'j')).state).toBe('active');
    expect(await engine.complete(q, ref(job))).toMatchObject({ state: 'completed' });
  });

  it('the tick expires it once the new deadline has passed', async () => {
    const { clock, engine, q } = await setupQueue({ timeoutMs: 1000 });
    await engine.enqueue(q, { id: 'j', group: 'g' });
    const job = await reserveOne(engine, q);
    const { expiresAt } = await engine.heartbeat(q, { ...ref(job), extendMs: 30_000 });
    clock.set(expiresAt);
    await engine.tick(q);
    expect(await engine.getJob(q, 'j')).toMatchObject({ state: 'waiting', attempts: 1 });
  });

  it('rejects a bad extendMs', async () => {
    const { engine, q } = await setupQueue();
    await engine.enqueue(q, { id: 'j', group: 'g' });
    const job = await reserveOne(engine, q);
    await rejectsWith(engine.heartbeat(q, { ...ref(job), extendMs: 0 }), 'VALIDATION_FAILED');
    await rejectsWith(engine.heartbeat(q, { ...ref(job), extendMs: 1.5 }), 'VALIDATION_FAILED');
  });
});

describe('progress', () => {
  it('stores a number or a small object, shown by getJob', async () => {
    const { engine, q } = await setupQueue();
    await engine.enqueue(q, { id: 'j', group: 'g' });
    const job = await reserveOne(engine, q);
    expect(await engine.progress(q, { ...ref(job), progress: 42.5 })).toEqual({});
    expect((await engine.getJob(q, 'j')).progress).toBe(42.5);
    await engine.progress(q, { ...ref(job), progress: { step: 'upload', done: [1, 2], ratio: 0.5 } });
    expect((await engine.getJob(q, 'j')).progress).toStrictEqual({ step: 'upload', done: [1, 2], ratio: 0.5 });
  });

  it.each<[string, unknown]>([
    ['below 0', -1],
    ['above 100', 101],
    ['NaN', Number.NaN],
    ['a string', '50%'],
    ['an array', [50]],
    ['null', null],
    ['an object over 4 KiB', { blob: 'x'.repeat(5000) }],
  ])('rejects progress %s with VALIDATION_FAILED', async (_label, value) => {
    const { engine, q } = await setupQueue();
    await engine.enqueue(q, { id: 'j', group: 'g' });
    const job = await reserveOne(engine, q);
    await rejectsWith(engine.progress(q, { ...ref(job), progress: value }), 'VALIDATION_FAILED');
    expect(await engine.getJob(q, 'j')).not.toHaveProperty('progress');
  });
});

describe('settle', () => {
  it('ends a mix of outcomes in one call, then reserves', async () => {
    const { engine, q } = await setupQueue({ keepFailed: 10, backoff: { delayMs: 1000, jitter: false } });
    await engine.enqueueBatch(q, [
      { id: 'ok', group: 'a' },
      { id: 'again', group: 'b' },
      { id: 'dead', group: 'c' },
      { id: 'stale', group: 'd' },
      { id: 'next', group: 'a' },
    ]);
    const leased = (await engine.reserve(q, 4)).jobs;
    const [ok, again, dead, stale] = leased;
    const settled = await engine.settle(
      q,
      [
        { kind: 'complete', ...ref(ok!), result: { done: true } },
        { kind: 'fail', ...ref(again!), error: 'HTTP 500' },
        { kind: 'fail', ...ref(dead!), error: 'bad request', retry: false },
        { kind: 'complete', id: stale!.id, lease: 'not-the-token' },
      ],
      10,
    );
    expect(settled.results).toEqual([
      { id: 'ok', state: 'completed' },
      { id: 'again', state: 'waiting' },
      { id: 'dead', state: 'failed' },
      { id: 'stale', state: 'LEASE_LOST' },
    ]);
    expect(settled.config.concurrency).toBe(10);
    expect(settled.jobs.map((job) => job.id)).toEqual(['next']);
    expect((await engine.getJob(q, 'again')).runAt).toBe(T0 + 1000);
    expect((await engine.getJob(q, 'stale')).state).toBe('active');
    expect((await engine.getQueue(q)).counts).toEqual({ waiting: 1, delayed: 0, active: 2, completed: 0, failed: 1, cancelled: 0, expired: 0, groups: 3 });
  });
});
