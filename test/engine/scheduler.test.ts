// The scheduler: what tick does (delayed jobs, held groups, expired leases, retention, its
// report), the ordering window, and repeatable jobs. Time moves only through the test clock.
import { describe, expect, it } from 'vitest';
import type { Engine } from '../../src/core/engine';
import { rejectsWith, setupQueue, T0, testEngine } from '../helpers/engine';
import { uniqueName } from '../helpers/stack';

const MINUTE = 60_000;

async function reservedIds(engine: Engine, q: string, n = 10) {
  return (await engine.reserve(q, n)).jobs.map((job) => job.id);
}

describe('tick: delayed jobs', () => {
  it('promotes a delayed job exactly when due, not one ms before', async () => {
    const { clock, engine, q } = await setupQueue();
    await engine.enqueue(q, { id: 'd', group: 'g', delayMs: 5000 });
    clock.set(T0 + 4999);
    expect(await engine.tick(q)).toMatchObject({ nextDueAt: T0 + 5000, readyNow: false });
    expect(await reservedIds(engine, q)).toEqual([]);
    expect((await engine.getJob(q, 'd')).state).toBe('delayed');
    clock.advance(1);
    expect(await engine.tick(q)).toMatchObject({ readyNow: true, more: false });
    expect(await reservedIds(engine, q)).toEqual(['d']);
  });
});

describe('tick: the lock of opportunistic ticks', () => {
  // A burst of requests that each find the queue due runs one pass: the first takes a short
  // Redis lock (a second, in Redis' own time), the others do nothing. The cron ignores it.
  it('a second opportunistic tick while the first holds the lock does nothing; the cron tick still runs', async () => {
    const { clock, engine, q } = await setupQueue();
    await engine.enqueue(q, { id: 'a', group: 'g1', delayMs: 1000 });
    await engine.enqueue(q, { id: 'b', group: 'g2', delayMs: 2000 });
    clock.advance(1000);
    expect(await engine.tick(q, { opportunistic: true })).toMatchObject({ locked: false, readyNow: true });
    clock.advance(1000);
    expect(await engine.tick(q, { opportunistic: true })).toMatchObject({ locked: true, readyNow: false });
    expect((await engine.getJob(q, 'b')).state).toBe('delayed');
    expect(await engine.tick(q)).toMatchObject({ locked: false, readyNow: true });
    expect((await engine.getJob(q, 'b')).state).toBe('waiting');
  });

  it('an opportunistic tick with nothing due takes no lock', async () => {
    const { clock, engine, q } = await setupQueue();
    await engine.tick(q); // the new queue's first full pass
    await engine.enqueue(q, { id: 'a', group: 'g', delayMs: 1000 });
    expect(await engine.tick(q, { opportunistic: true })).toMatchObject({ locked: false, nextDueAt: T0 + 1000 });
    clock.advance(1000);
    expect(await engine.tick(q, { opportunistic: true })).toMatchObject({ locked: false, readyNow: true });
  });
});

describe('tick: held groups', () => {
  it("releases a retrying group when its backoff ends", async () => {
    const { clock, engine, q } = await setupQueue({ backoff: { type: 'fixed', delayMs: 2000, jitter: false } });
    await engine.enqueue(q, { id: 'j', group: 'g' });
    const [job] = (await engine.reserve(q, 1)).jobs;
    await engine.fail(q, { id: 'j', lease: job!.lease.token, error: 'boom' });
    clock.set(T0 + 1999);
    expect(await engine.tick(q)).toMatchObject({ nextDueAt: T0 + 2000, readyNow: false });
    expect(await reservedIds(engine, q)).toEqual([]);
    clock.advance(1);
    expect((await engine.tick(q)).readyNow).toBe(true);
    expect(await reservedIds(engine, q)).toEqual(['j']);
  });
});

describe('tick: expired leases', () => {
  it('retries a job whose lease expired, then fails it after maxAttempts; its group continues', async () => {
    const { clock, engine, q } = await setupQueue({ timeoutMs: 1000, maxAttempts: 2, backoff: { type: 'fixed', delayMs: 100, jitter: false } });
    await engine.enqueueBatch(q, [{ id: 'slow', group: 'g' }, { id: 'next', group: 'g' }]);
    await engine.reserve(q, 1);
    clock.set(T0 + 5999); // the lease lasts timeoutMs + 5000
    await engine.tick(q);
    expect((await engine.getJob(q, 'slow')).state).toBe('active');
    clock.advance(1);
    await engine.tick(q);
    expect(await engine.getJob(q, 'slow')).toMatchObject({
      state: 'waiting', attempts: 1, runAt: T0 + 6100, error: expect.stringMatching(/lease expired/),
    });
    clock.advance(100);
    await engine.tick(q);
    const [again] = (await engine.reserve(q, 1)).jobs;
    expect([again!.id, again!.attempt]).toEqual(['slow', 2]);
    clock.advance(1000 + 5001);
    await engine.tick(q);
    expect(await engine.getJob(q, 'slow')).toMatchObject({ state: 'failed', attempts: 2, error: expect.stringMatching(/lease expired/) });
    expect(await reservedIds(engine, q)).toEqual(['next']);
  });
});

describe('tick: retention', () => {
  it('trims kept jobs in bounded steps after keepCompleted is lowered, keeping the newest', async () => {
    // One tick trims at most 500 per phase (scheduler.ts): 690 to trim take two ticks.
    const config = { concurrency: 700, keepCompleted: 700 };
    const { clock, engine, q } = await setupQueue(config);
    await engine.enqueueBatch(q, Array.from({ length: 700 }, (_, i) => ({ id: `j${i}`, group: `g${i}` })));
    const leased = (await engine.reserve(q, 700)).jobs;
    const done = (jobs: typeof leased) => jobs.map((job) => ({ kind: 'complete' as const, id: job.id, lease: job.lease.token }));
    clock.advance(10);
    await engine.settle(q, done(leased.slice(0, 690)), 0);
    clock.advance(10);
    await engine.settle(q, done(leased.slice(690)), 0);
    expect((await engine.getQueue(q)).counts.completed).toBe(700);

    await engine.putQueue(q, { endpoint: 'http://127.0.0.1:9/jobs', ...config, keepCompleted: 10 });
    const first = await engine.tick(q);
    expect(first.more).toBe(true);
    expect(first.nextDueAt).toBeLessThanOrEqual(clock.now());
    expect((await engine.getQueue(q)).counts.completed).toBe(200);
    expect((await engine.tick(q)).more).toBe(false);
    const kept = await engine.listJobs(q, { state: 'completed' });
    expect(kept.jobs.map((job) => job.id).sort()).toEqual(leased.slice(690).map((job) => job.id).sort());
    expect((await engine.getQueue(q)).counts.completed).toBe(10);
  });
});

describe('tick: what it reports', () => {
  it('nextDueAt is the earliest timer: held group, repeat, delayed job or lease', async () => {
    const { clock, engine, q } = await setupQueue({ backoff: { type: 'fixed', delayMs: 2000, jitter: false } });
    await engine.enqueueBatch(q, [{ id: 'held', group: 'a' }, { id: 'leased', group: 'b' }, { id: 'd', group: 'c', delayMs: 5000 }]);
    await engine.putRepeat(q, 'r', { group: 'r', every: 3000 });
    const [held] = (await engine.reserve(q, 2)).jobs;
    await engine.fail(q, { id: held!.id, lease: held!.lease.token, error: 'x' });
    expect(await engine.tick(q)).toEqual({ nextDueAt: T0 + 2000, readyNow: false, more: false, repeatsCreated: 0, locked: false, outcomes: [] });
    clock.set(T0 + 2000);
    expect(await engine.tick(q)).toMatchObject({ nextDueAt: T0 + 3000, readyNow: true });
    await engine.deleteRepeat(q, 'r');
    expect((await engine.tick(q)).nextDueAt).toBe(T0 + 5000);
    await engine.removeJob(q, 'd');
    expect((await engine.tick(q)).nextDueAt).toBe(T0 + 35_000); // the lease of 'leased'
  });

  it("after creating a repeat's run, nextDueAt is the repeat's next run, not the run just made", async () => {
    const { clock, engine, q } = await setupQueue();
    await engine.putRepeat(q, 'r', { group: 'g', every: MINUTE });
    clock.set(T0 + MINUTE);
    expect(await engine.tick(q)).toMatchObject({ repeatsCreated: 1, nextDueAt: T0 + 2 * MINUTE });
  });

  it('readyNow says jobs can be reserved now, and not while the queue is paused', async () => {
    const { engine, q } = await setupQueue();
    expect((await engine.tick(q)).readyNow).toBe(false);
    await engine.enqueue(q, { group: 'g' });
    expect((await engine.tick(q)).readyNow).toBe(true);
    await engine.pauseQueue(q);
    expect((await engine.tick(q)).readyNow).toBe(false);
    await engine.resumeQueue(q);
    expect((await engine.tick(q)).readyNow).toBe(true);
  });

  it('an idle queue reports nothing to do, tick after tick', async () => {
    const { clock, engine, q } = await setupQueue();
    const idle = { nextDueAt: null, readyNow: false, more: false, repeatsCreated: 0, locked: false, outcomes: [] };
    expect(await engine.tick(q)).toEqual(idle);
    clock.advance(MINUTE);
    expect(await engine.tick(q)).toEqual(idle);
  });
});

describe('orderingWindowMs', () => {
  it('a job does not start before orderMs + window', async () => {
    const { clock, engine, q } = await setupQueue({ orderingWindowMs: 5000 });
    await engine.enqueue(q, { id: 'j', group: 'g' });
    clock.set(T0 + 4999);
    expect(await engine.tick(q)).toMatchObject({ nextDueAt: T0 + 5000, readyNow: false });
    expect(await reservedIds(engine, q)).toEqual([]);
    clock.advance(1);
    expect((await engine.tick(q)).readyNow).toBe(true);
    expect(await reservedIds(engine, q)).toEqual(['j']);
  });

  it('a late job with an earlier orderMs inside the window runs first, in its group and across groups', async () => {
    const { clock, engine, q } = await setupQueue({ orderingWindowMs: 5000 });
    await engine.enqueue(q, { id: 'x-on-time', group: 'x' });
    await engine.enqueue(q, { id: 'g-on-time', group: 'g' });
    clock.set(T0 + 3000);
    await engine.enqueue(q, { id: 'g-late', group: 'g', orderMs: T0 - 1000 });
    await engine.enqueue(q, { id: 'y-late', group: 'y', orderMs: T0 - 500 });
    clock.set(T0 + 5000);
    const leased = (await engine.reserve(q, 10)).jobs;
    expect(leased.map((job) => job.id)).toEqual(['g-late', 'y-late', 'x-on-time']);
    const { next } = await engine.complete(q, { id: 'g-late', lease: leased[0]!.lease.token }, 10);
    expect(next.map((job) => job.id)).toEqual(['g-on-time']);
  });
});

describe('putRepeat', () => {
  it('every: the first run is at now + every, or at startAt', async () => {
    const { engine, q } = await setupQueue();
    expect(await engine.putRepeat(q, 'a', { group: 'g', data: [], every: MINUTE })).toEqual({ key: 'a', nextRunAt: T0 + MINUTE });
    expect(await engine.putRepeat(q, 'b', { group: 'g', every: MINUTE, startAt: T0 + 5 })).toEqual({ key: 'b', nextRunAt: T0 + 5 });
    expect(await engine.listRepeats(q)).toEqual([
      { key: 'a', group: 'g', data: [], every: MINUTE, tz: 'UTC', nextRunAt: T0 + MINUTE, count: 0 },
      { key: 'b', group: 'g', data: null, every: MINUTE, tz: 'UTC', startAt: T0 + 5, nextRunAt: T0 + 5, count: 0 },
    ]);
  });

  it('pattern: the first occurrence at or after max(now, startAt), in its time zone', async () => {
    const { clock, engine, q } = await setupQueue();
    const weekdays9 = { group: 'g', pattern: '0 9 * * 1-5', tz: 'Europe/Berlin' };
    // T0 is Tuesday 2023-11-14 23:13 in Berlin (UTC+1): next is Wednesday 09:00 = 08:00Z.
    expect((await engine.putRepeat(q, 'b', weekdays9)).nextRunAt).toBe(Date.UTC(2023, 10, 15, 8, 0));
    // Summer time (UTC+2): Monday 2024-07-01 09:00 Berlin = 07:00Z.
    const summer = await engine.putRepeat(q, 's', { ...weekdays9, startAt: Date.UTC(2024, 6, 1) });
    expect(summer.nextRunAt).toBe(Date.UTC(2024, 6, 1, 7, 0));
    clock.set(Date.UTC(2023, 10, 15, 8, 0));
    expect((await engine.putRepeat(q, 'b', weekdays9)).nextRunAt).toBe(Date.UTC(2023, 10, 15, 8, 0));
    expect((await engine.putRepeat(q, 'u', { group: 'g', pattern: '30 6 1 * *' })).nextRunAt).toBe(Date.UTC(2023, 11, 1, 6, 30));
  });

  it('accepts day names in a pattern', async () => {
    const { engine, q } = await setupQueue();
    // T0 is Tuesday: the next Thursday 09:00 UTC is 2023-11-16.
    expect((await engine.putRepeat(q, 't', { group: 'g', pattern: '0 9 * * thu' })).nextRunAt).toBe(Date.UTC(2023, 10, 16, 9, 0));
    expect((await engine.putRepeat(q, 'm', { group: 'g', pattern: '0 9 * * MON-THU' })).nextRunAt).toBe(Date.UTC(2023, 10, 15, 9, 0));
  });

  it.each<[string, string, Record<string, unknown>]>([
    ['an invalid pattern', 'k', { group: 'g', pattern: 'every day at 9' }],
    ['a 6-field pattern', 'k', { group: 'g', pattern: '0 0 9 * * *' }],
    ['a 4-field pattern', 'k', { group: 'g', pattern: '0 9 * *' }],
    ['an out-of-range field', 'k', { group: 'g', pattern: '0 25 * * *' }],
    ['an unknown time zone', 'k', { group: 'g', pattern: '0 9 * * *', tz: 'Mars/Olympus' }],
    ['both every and pattern', 'k', { group: 'g', every: MINUTE, pattern: '0 9 * * *' }],
    ['neither every nor pattern', 'k', { group: 'g' }],
    ['every below 1000', 'k', { group: 'g', every: 999 }],
    ['a bad group', 'k', { group: '', every: MINUTE }],
    ['a bad key', 'a b', { group: 'g', every: MINUTE }],
    ['a key of 129 characters', 'k'.repeat(129), { group: 'g', every: MINUTE }],
  ])('rejects %s with VALIDATION_FAILED and stores nothing', async (_label, key, input) => {
    const { engine, q } = await setupQueue();
    await rejectsWith(engine.putRepeat(q, key, input), 'VALIDATION_FAILED');
    expect(await engine.listRepeats(q)).toEqual([]);
  });

  it('an unknown queue is QUEUE_NOT_FOUND', async () => {
    const engine = testEngine();
    await rejectsWith(engine.putRepeat(uniqueName('q'), 'k', { group: 'g', every: MINUTE }), 'QUEUE_NOT_FOUND');
    await rejectsWith(engine.listRepeats(uniqueName('q')), 'QUEUE_NOT_FOUND');
  });
});

describe('repeat runs', () => {
  it('the tick creates each run once, with the id repeat:{key}:{runAtMs}', async () => {
    const { clock, engine, q } = await setupQueue();
    await engine.putRepeat(q, 'sync', { group: 'g', data: { items: [] }, every: MINUTE });
    clock.set(T0 + MINUTE);
    expect(await engine.tick(q)).toMatchObject({ repeatsCreated: 1, readyNow: true });
    expect(await engine.tick(q)).toMatchObject({ repeatsCreated: 0 });
    const id = `repeat:sync:${T0 + MINUTE}`;
    expect(await engine.getJob(q, id)).toMatchObject({ id, group: 'g', state: 'waiting', data: { items: [] }, orderMs: T0 + MINUTE });
    expect((await engine.getQueue(q)).counts.waiting).toBe(1);
    expect(await engine.listRepeats(q)).toMatchObject([{ key: 'sync', count: 1, nextRunAt: T0 + 2 * MINUTE }]);
  });

  it('two schedulers ticking at once create one run', async () => {
    const { clock, engine, q } = await setupQueue();
    const other = testEngine(clock);
    await engine.putRepeat(q, 'r', { group: 'g', every: MINUTE });
    clock.set(T0 + MINUTE);
    const results = await Promise.all([engine.tick(q), other.tick(q), engine.tick(q), other.tick(q)]);
    expect(results.reduce((sum, result) => sum + result.repeatsCreated, 0)).toBe(1);
    expect((await engine.getQueue(q)).counts.waiting).toBe(1);
    expect(await engine.listRepeats(q)).toMatchObject([{ count: 1, nextRunAt: T0 + 2 * MINUTE }]);
  });

  it('missed runs are not replayed in a burst: one run, then the next future occurrence', async () => {
    const { clock, engine, q } = await setupQueue();
    await engine.putRepeat(q, 'r', { group: 'g', every: MINUTE });
    clock.set(T0 + 10 * MINUTE + 500);
    expect((await engine.tick(q)).repeatsCreated).toBe(1);
    expect((await engine.tick(q)).repeatsCreated).toBe(0);
    const [repeat] = await engine.listRepeats(q);
    expect(repeat!.nextRunAt).toBe(T0 + 11 * MINUTE);
    expect((await engine.getQueue(q)).counts.waiting).toBe(1);
  });

  it('a pattern run is created at its time zone occurrence', async () => {
    const { clock, engine, q } = await setupQueue();
    const { nextRunAt } = await engine.putRepeat(q, 'b', { group: 'g', pattern: '0 9 * * 1-5', tz: 'Europe/Berlin' });
    clock.set(nextRunAt!);
    expect((await engine.tick(q)).repeatsCreated).toBe(1);
    expect((await engine.getJob(q, `repeat:b:${Date.UTC(2023, 10, 15, 8, 0)}`)).state).toBe('waiting');
    expect((await engine.listRepeats(q))[0]!.nextRunAt).toBe(Date.UTC(2023, 10, 16, 8, 0));
  });

  it('limit caps the runs; no run after endAt; count is the runs created', async () => {
    const { clock, engine, q } = await setupQueue();
    await engine.putRepeat(q, 'limited', { group: 'a', every: 1000, limit: 2 });
    await engine.putRepeat(q, 'ending', { group: 'b', every: 1000, endAt: T0 + 2500 });
    for (let i = 1; i <= 4; i++) {
      clock.set(T0 + i * 1000);
      await engine.tick(q);
    }
    expect(await engine.listRepeats(q)).toMatchObject([
      { key: 'ending', count: 2, nextRunAt: null },
      { key: 'limited', count: 2, nextRunAt: null },
    ]);
    expect((await engine.getQueue(q)).counts.waiting).toBe(4);
    expect(await engine.putRepeat(q, 'past', { group: 'c', every: 1000, endAt: T0 })).toEqual({ key: 'past', nextRunAt: null });
  });

  it('a limit used up stays used up when the repeat is replaced', async () => {
    const { clock, engine, q } = await setupQueue();
    await engine.putRepeat(q, 'r', { group: 'g', every: 1000, limit: 2 });
    for (let i = 1; i <= 3; i++) {
      clock.set(T0 + i * 1000);
      await engine.tick(q);
    }
    expect(await engine.putRepeat(q, 'r', { group: 'g', every: 1000, limit: 2, data: { n: 2 } })).toEqual({ key: 'r', nextRunAt: null });
    clock.set(T0 + 10_000);
    expect((await engine.tick(q)).repeatsCreated).toBe(0);
    expect(await engine.listRepeats(q)).toMatchObject([{ key: 'r', count: 2, nextRunAt: null }]);
  });

  it('replacing a repeat keeps its count', async () => {
    const { clock, engine, q } = await setupQueue();
    await engine.putRepeat(q, 'r', { group: 'g', every: 1000 });
    clock.set(T0 + 1000);
    await engine.tick(q);
    expect(await engine.putRepeat(q, 'r', { group: 'g', every: 5000 })).toEqual({ key: 'r', nextRunAt: T0 + 6000 });
    expect(await engine.listRepeats(q)).toMatchObject([{ key: 'r', every: 5000, count: 1 }]);
  });
});

describe('deleteRepeat', () => {
  it('stops future runs; runs already enqueued stay', async () => {
    const { clock, engine, q } = await setupQueue();
    await engine.putRepeat(q, 'r', { group: 'g', every: 1000 });
    clock.set(T0 + 1000);
    await engine.tick(q);
    await engine.deleteRepeat(q, 'r');
    expect(await engine.listRepeats(q)).toEqual([]);
    expect((await engine.getJob(q, `repeat:r:${T0 + 1000}`)).state).toBe('waiting');
    clock.set(T0 + 5000);
    expect((await engine.tick(q)).repeatsCreated).toBe(0);
    expect((await engine.getQueue(q)).counts.waiting).toBe(1);
  });

  it('an unknown key is REPEAT_NOT_FOUND', async () => {
    const { engine, q } = await setupQueue();
    await rejectsWith(engine.deleteRepeat(q, 'nope'), 'REPEAT_NOT_FOUND');
  });
});
