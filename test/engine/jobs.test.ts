// Producing and handling jobs: enqueue and batches, reading jobs, and the by-hand operations
// (remove, retry, promote, update). Every test runs on its own queue against the real Redis.
import { describe, expect, it, onTestFinished } from 'vitest';
import type { Engine } from '../../src/core/engine';
import { createQueue, rejectsWith, setupQueue, T0, testClock, testEngine } from '../helpers/engine';
import { uniqueName } from '../helpers/stack';

const NO_COUNTS = { waiting: 0, delayed: 0, active: 0, completed: 0, failed: 0, cancelled: 0, expired: 0, groups: 0 };

async function counts(engine: Engine, q: string) {
  return (await engine.getQueue(q)).counts;
}

/** Jobs with the given [id, group] pairs and no data. */
const jobsIn = (...pairs: [string, string][]) => pairs.map(([id, group]) => ({ id, group }));

/** Leases one job and ends it: completed, or failed for good. */
async function finish(engine: Engine, q: string, how: 'complete' | 'fail') {
  const [job] = (await engine.reserve(q, 1)).jobs;
  if (how === 'complete') await engine.complete(q, { id: job!.id, lease: job!.lease.token, result: { ok: true } });
  else await engine.fail(q, { id: job!.id, lease: job!.lease.token, error: 'HTTP 500: nope', retry: false });
  return job!;
}

/** Every page of listJobs, following the cursor until it is null. */
async function allPages(engine: Engine, q: string, query: Record<string, unknown>) {
  const pages: string[][] = [];
  let cursor: string | undefined;
  do {
    const page = await engine.listJobs(q, { ...query, cursor });
    pages.push(page.jobs.map((job) => job.id));
    cursor = page.cursor ?? undefined;
  } while (cursor !== undefined);
  return pages;
}

describe('enqueue', () => {
  it('generates unique, URL-safe ids', async () => {
    const { engine, q } = await setupQueue();
    const results = await engine.enqueueBatch(q, Array.from({ length: 300 }, (_, i) => ({ group: `g${i % 7}`, data: i })));
    results.push(await engine.enqueue(q, { group: 'g0', data: 'one more' }));
    const ids = results.map((result) => result.id);
    expect(new Set(ids).size).toBe(301);
    for (const id of ids) {
      expect(id).toMatch(/^[A-Za-z0-9_-]{16,}$/);
      expect(encodeURIComponent(id)).toBe(id);
    }
  });

  it('keeps an explicit id; a duplicate id returns the existing job and changes nothing', async () => {
    const { clock, engine, q } = await setupQueue();
    expect(await engine.enqueue(q, { id: 'order:42/a~!', group: 'g', data: { v: 1 } })).toEqual({ id: 'order:42/a~!', state: 'waiting' });
    const before = await engine.getJob(q, 'order:42/a~!');
    clock.advance(1000);
    const again = await engine.enqueue(q, { id: 'order:42/a~!', group: 'other', data: { v: 2 }, delayMs: 5000 });
    expect(again).toEqual({ id: 'order:42/a~!', state: 'waiting', duplicate: true });
    expect(await engine.getJob(q, 'order:42/a~!')).toEqual(before);
    expect(await counts(engine, q)).toEqual({ ...NO_COUNTS, waiting: 1, groups: 1 });
  });

  it("reports a duplicate with the existing job's state", async () => {
    const { engine, q } = await setupQueue({ keepCompleted: 10, keepFailed: 10 });
    await engine.enqueueBatch(q, [...jobsIn(['done', 'a'], ['dead', 'b'], ['busy', 'c']), { id: 'later', group: 'd', delayMs: 1000 }]);
    await finish(engine, q, 'complete');
    await finish(engine, q, 'fail');
    await engine.reserve(q, 1);
    const dupes = await engine.enqueueBatch(q, ['done', 'dead', 'busy', 'later'].map((id) => ({ id, group: 'z' })));
    expect(dupes.map((dupe) => [dupe.id, dupe.state, dupe.duplicate])).toEqual(
      [['done', 'completed'], ['dead', 'failed'], ['busy', 'active'], ['later', 'delayed']].map((row) => [...row, true]),
    );
  });

  it('orderMs defaults to now, data to null; createdAt is always the enqueue time', async () => {
    const { engine, q } = await setupQueue();
    const implicit = await engine.enqueue(q, { group: 'g' });
    const explicit = await engine.enqueue(q, { group: 'g', data: 2, orderMs: T0 - 60_000 });
    expect(await engine.getJob(q, implicit.id)).toMatchObject({ orderMs: T0, createdAt: T0, data: null });
    expect(await engine.getJob(q, explicit.id)).toMatchObject({ orderMs: T0 - 60_000, createdAt: T0 });
  });

  it('delayMs or a future runAt makes a job delayed; a runAt not in the future does not', async () => {
    const { engine, q } = await setupQueue();
    const byDelay = await engine.enqueue(q, { group: 'g', data: 1, delayMs: 1500 });
    const byRunAt = await engine.enqueue(q, { group: 'g', data: 2, runAt: T0 + 9000 });
    expect([byDelay.state, byRunAt.state]).toEqual(['delayed', 'delayed']);
    expect((await engine.getJob(q, byDelay.id)).runAt).toBe(T0 + 1500);
    expect((await engine.getJob(q, byRunAt.id)).runAt).toBe(T0 + 9000);
    expect((await engine.enqueue(q, { group: 'g', data: 3, runAt: T0 })).state).toBe('waiting');
    expect((await engine.enqueue(q, { group: 'g', data: 4, delayMs: 0 })).state).toBe('waiting');
    expect(await counts(engine, q)).toEqual({ ...NO_COUNTS, waiting: 2, delayed: 2, groups: 1 });
  });

  it.each<[string, Record<string, unknown>]>([
    ['delayMs and runAt together', { group: 'g', delayMs: 10, runAt: T0 + 10 }], ['an empty id', { id: '', group: 'g' }],
    ['an id with a space', { id: 'a b', group: 'g' }], ['a non-ASCII id', { id: 'zamówienie', group: 'g' }],
    ['an id of 257 characters', { id: 'x'.repeat(257), group: 'g' }], ['a numeric id', { id: 42, group: 'g' }],
    ['no group', { data: 1 }], ['an empty group', { group: '' }],
    ['a group of 257 characters', { group: 'ü'.repeat(257) }], ['a group with a newline', { group: 'a\nb' }],
    ['a group with a C1 control character', { group: 'a\u0085b' }], ['a group with a lone surrogate', { group: 'a\ud800' }],
    ['a numeric group', { group: 7 }], ['a function as data', { group: 'g', data: () => 1 }],
    ['a bigint as data', { group: 'g', data: 10n }], ['NaN inside data', { group: 'g', data: { n: Number.NaN } }],
    ['Infinity as data', { group: 'g', data: Infinity }], ['undefined inside an array', { group: 'g', data: [undefined] }],
    ['a negative orderMs', { group: 'g', orderMs: -1 }], ['a fractional orderMs', { group: 'g', orderMs: 1.5 }],
    ['a negative delayMs', { group: 'g', delayMs: -1 }], ['a delay over a year', { group: 'g', delayMs: 367 * 86_400_000 }],
    ['maxAttempts 0', { group: 'g', maxAttempts: 0 }], ['timeoutMs 99', { group: 'g', timeoutMs: 99 }],
    ['an unknown backoff type', { group: 'g', backoff: { type: 'linear' } }], ['an unknown field', { group: 'g', colour: 'red' }],
  ])('rejects %s with VALIDATION_FAILED and writes nothing', async (_label, input) => {
    const { engine, q } = await setupQueue();
    await rejectsWith(engine.enqueue(q, input), 'VALIDATION_FAILED');
    expect(await counts(engine, q)).toEqual(NO_COUNTS);
  });

  it('accepts a group of 256 characters of any printable UTF-8', async () => {
    const { engine, q } = await setupQueue();
    const start = 'user:żółć 🚀 日本';
    const group = start + 'é'.repeat(256 - [...start].length); // 256 code points, 257 UTF-16 units
    const { id } = await engine.enqueue(q, { group, data: null });
    expect((await engine.getJob(q, id)).group).toBe(group);
  });

  it('bounds data by maxPayloadBytes counted as UTF-8 JSON bytes', async () => {
    const { engine, q } = await setupQueue({ maxPayloadBytes: 100 });
    // "x" * 98 with its quotes is exactly 100 bytes.
    expect((await engine.enqueue(q, { group: 'g', data: 'x'.repeat(98) })).state).toBe('waiting');
    const tooLong = engine.enqueue(q, { group: 'g', data: 'x'.repeat(99) });
    await expect(tooLong).rejects.toMatchObject({ code: 'PAYLOAD_TOO_LARGE', details: { index: 0, maxPayloadBytes: 100 } });
    // 50 characters, but 102 bytes.
    await rejectsWith(engine.enqueue(q, { group: 'g', data: 'é'.repeat(50) }), 'PAYLOAD_TOO_LARGE');
    expect(await counts(engine, q)).toEqual({ ...NO_COUNTS, waiting: 1, groups: 1 });
  });

  it('an unknown queue is QUEUE_NOT_FOUND', async () => {
    await rejectsWith(testEngine().enqueue(uniqueName('q'), { group: 'g', data: 1 }), 'QUEUE_NOT_FOUND');
  });

  it.each<[string, unknown]>([
    ['an empty array', []], ['an empty object', {}],
    ['nested empty arrays and objects', { a: [], b: [[], {}], c: { d: [] } }],
    ['unicode and escapes', { text: 'żółć 🚀 日本語 \u2028 "quoted" \\ line\nbreak\ttab' }], ['null', null],
    ['numbers', [0, -1.5, 1e21, 9_007_199_254_740_991, 12345678901234567, 0.1]],
    ['a deep structure', { l1: { l2: { l3: { l4: [1, [2, [3, [4, { l5: true }]]]] } } } }], ['a bare string', 'just text'],
    ['false', false],
  ])('round-trips %s exactly', async (_label, data) => {
    const { engine, q } = await setupQueue();
    const { id } = await engine.enqueue(q, { group: 'g', data });
    expect((await engine.getJob(q, id)).data).toStrictEqual(data);
    const [leased] = (await engine.reserve(q, 1)).jobs;
    expect(leased!.data).toStrictEqual(data);
    expect(leased!.rawData).toBe(JSON.stringify(data));
  });

  it('keeps orderMs and runAt exact up to the largest allowed instant, and refuses later ones', async () => {
    // Instants are capped at 10^14 - 1 ms (year 5138): Redis' cjson keeps 14 digits exactly. The
    // clock is an hour before: a runAt that close is inside the queue's maxDelayMs.
    const orderMs = 99_999_999_999_999;
    const runAt = 99_999_999_999_998;
    const engine = testEngine(testClock(runAt - 3_600_000));
    const q = await createQueue(engine);
    onTestFinished(() => engine.deleteQueue(q).catch(() => undefined));
    const { id } = await engine.enqueue(q, { group: 'g', data: 1, orderMs, runAt });
    expect(await engine.getJob(q, id)).toMatchObject({ orderMs, runAt, state: 'delayed' });
    await expect(engine.enqueue(q, { group: 'g', data: 1, orderMs: 100_000_000_000_000 })).rejects.toMatchObject({
      code: 'VALIDATION_FAILED',
    });
  });
});

describe('enqueueBatch', () => {
  it('returns one result per job, in order; jobs of a group run in batch order', async () => {
    const { engine, q } = await setupQueue();
    const results = await engine.enqueueBatch(q, [...jobsIn(['a1', 'a'], ['b1', 'b'], ['a2', 'a']), { id: 'd1', group: 'a', delayMs: 100 }]);
    expect(results).toEqual([...['a1', 'b1', 'a2'].map((id) => ({ id, state: 'waiting' })), { id: 'd1', state: 'delayed' }]);
    expect((await engine.listJobs(q, { group: 'a' })).jobs.map((job) => job.id)).toEqual(['a1', 'a2']);
  });

  it('is validated whole: one bad job writes nothing', async () => {
    const { engine, q } = await setupQueue();
    const bad = engine.enqueueBatch(q, [{ group: 'a', data: 1 }, { group: 'b', data: 2 }, { group: '', data: 3 }]);
    await expect(bad).rejects.toMatchObject({ code: 'VALIDATION_FAILED', details: [expect.objectContaining({ path: 'jobs.2.group' })] });
    expect(await counts(engine, q)).toEqual(NO_COUNTS);
  });

  it('one job over maxPayloadBytes writes nothing and names the job', async () => {
    const { engine, q } = await setupQueue({ maxPayloadBytes: 50 });
    const big = engine.enqueueBatch(q, [{ group: 'a', data: 1 }, { group: 'b', data: 'y'.repeat(60) }, { group: 'c', data: 3 }]);
    await expect(big).rejects.toMatchObject({ code: 'PAYLOAD_TOO_LARGE', details: { index: 1, maxPayloadBytes: 50 } });
    expect(await counts(engine, q)).toEqual(NO_COUNTS);
  });

  it('accepts 1000 jobs; rejects an empty batch, 1001 jobs and a non-array', async () => {
    const { engine, q } = await setupQueue();
    await rejectsWith(engine.enqueueBatch(q, []), 'VALIDATION_FAILED');
    await rejectsWith(engine.enqueueBatch(q, Array.from({ length: 1001 }, () => ({ group: 'g' }))), 'VALIDATION_FAILED');
    await rejectsWith(engine.enqueueBatch(q, { group: 'g' }), 'VALIDATION_FAILED');
    expect(await counts(engine, q)).toEqual(NO_COUNTS);
    expect(await engine.enqueueBatch(q, Array.from({ length: 1000 }, (_, i) => ({ group: `g${i % 10}` })))).toHaveLength(1000);
    expect((await counts(engine, q)).waiting).toBe(1000);
  });

  it('a repeated id inside a batch is a duplicate of the first', async () => {
    const { engine, q } = await setupQueue();
    await engine.enqueue(q, { id: 'old', group: 'g', data: 'first' });
    const results = await engine.enqueueBatch(q, [
      { id: 'x', group: 'g', data: 'x1' }, { id: 'x', group: 'h', data: 'x2' }, { id: 'old', group: 'g', data: 'second' },
    ]);
    expect(results).toEqual([
      { id: 'x', state: 'waiting' }, { id: 'x', state: 'waiting', duplicate: true }, { id: 'old', state: 'waiting', duplicate: true },
    ]);
    expect((await engine.getJob(q, 'x')).data).toBe('x1');
    expect((await engine.getJob(q, 'old')).data).toBe('first');
    expect(await counts(engine, q)).toEqual({ ...NO_COUNTS, waiting: 2, groups: 1 });
  });
});

describe('getJob', () => {
  it('shows each state with its fields', async () => {
    const { clock, engine, q } = await setupQueue({ keepCompleted: 10, keepFailed: 10 });
    const base = { queue: q, attempts: 0, maxAttempts: 3, orderMs: T0, createdAt: T0, priority: 0 };
    await engine.enqueueBatch(q, [
      { id: 'c', group: 'a', data: 'c' }, { id: 'f', group: 'b', data: 'f' }, { id: 'act', group: 'c', data: 'act', maxAttempts: 5 },
      { id: 'w', group: 'c', data: 'w' }, { id: 'd', group: 'd', data: 'd', delayMs: 500 },
    ]);
    expect(await engine.getJob(q, 'w')).toEqual({ ...base, id: 'w', group: 'c', data: 'w', state: 'waiting' });
    expect(await engine.getJob(q, 'd')).toEqual({ ...base, id: 'd', group: 'd', data: 'd', state: 'delayed', runAt: T0 + 500 });
    clock.advance(100);
    await finish(engine, q, 'complete');
    clock.advance(100);
    await finish(engine, q, 'fail');
    clock.advance(100);
    await engine.reserve(q, 1);
    expect(await engine.getJob(q, 'c')).toEqual({
      ...base, id: 'c', group: 'a', data: 'c', state: 'completed', attempts: 1,
      startedAt: T0 + 100, finishedAt: T0 + 100, result: { ok: true },
      history: [{ attempt: 1, startedAt: T0 + 100, finishedAt: T0 + 100, outcome: 'completed' }],
    });
    expect(await engine.getJob(q, 'f')).toEqual({
      ...base, id: 'f', group: 'b', data: 'f', state: 'failed', attempts: 1,
      startedAt: T0 + 200, finishedAt: T0 + 200, error: 'HTTP 500: nope',
      history: [{ attempt: 1, startedAt: T0 + 200, finishedAt: T0 + 200, outcome: 'failed', error: 'HTTP 500: nope' }],
    });
    expect(await engine.getJob(q, 'act')).toEqual({
      ...base, id: 'act', group: 'c', data: 'act', state: 'active', attempts: 1, maxAttempts: 5,
      startedAt: T0 + 300, leaseExpiresAt: T0 + 300 + 35_000,
    });
  });

  it('rejects an unknown job, a bad id and an unknown queue', async () => {
    const { engine, q } = await setupQueue();
    await rejectsWith(engine.getJob(q, 'nope'), 'JOB_NOT_FOUND');
    await rejectsWith(engine.getJob(q, 'a b'), 'VALIDATION_FAILED');
    await rejectsWith(engine.getJob(uniqueName('q'), 'x'), 'QUEUE_NOT_FOUND');
  });
});

describe('listJobs', () => {
  it('lists each state, paging with limit and cursor until the cursor is null', async () => {
    const { clock, engine, q } = await setupQueue({ keepCompleted: 100, keepFailed: 100, concurrency: 100 });
    await engine.enqueueBatch(q, Array.from({ length: 20 }, (_, i) => ({ id: `j${i}`, group: `g${i}` })));
    await engine.enqueueBatch(q, Array.from({ length: 5 }, (_, i) => ({ id: `d${i}`, group: 'd', delayMs: 5000 - i * 100 })));
    for (let i = 0; i < 10; i++) {
      clock.advance(10);
      await finish(engine, q, i < 5 ? 'complete' : 'fail'); // j0..j4 completed, j5..j9 failed
    }
    await engine.reserve(q, 5); // j10..j14 active
    const ids = (from: number, to: number, prefix = 'j') => Array.from({ length: to - from }, (_, i) => `${prefix}${from + i}`);
    expect((await allPages(engine, q, { state: 'delayed', limit: 2 })).flat()).toEqual(['d4', 'd3', 'd2', 'd1', 'd0']);
    expect((await allPages(engine, q, { state: 'active', limit: 2 })).flat().sort()).toEqual(ids(10, 15).sort());
    expect((await allPages(engine, q, { state: 'completed', limit: 2 })).flat()).toEqual(ids(0, 5).reverse());
    expect((await allPages(engine, q, { state: 'failed', limit: 3 })).flat()).toEqual(ids(5, 10).reverse());
    const waiting = (await allPages(engine, q, { limit: 4 })).flat();
    expect(waiting.sort()).toEqual(ids(15, 20).sort());
    expect((await engine.listJobs(q, { state: 'waiting' })).jobs.every((job) => job.state === 'waiting')).toBe(true);
  });

  it('never returns more jobs than the limit on a page', async () => {
    const { engine, q } = await setupQueue();
    await engine.enqueueBatch(q, Array.from({ length: 12 }, (_, i) => ({ group: `g${i}` })));
    const pages = await allPages(engine, q, { state: 'waiting', limit: 2 });
    expect(pages.flat()).toHaveLength(12);
    for (const page of pages) expect(page.length).toBeLessThanOrEqual(2);
  });

  it('with a group: waiting in run order, completed and failed newest first', async () => {
    const { clock, engine, q } = await setupQueue({ keepCompleted: 10, keepFailed: 10 });
    await engine.enqueueBatch(q, [
      { id: 'late', group: 'g', orderMs: T0 + 50 }, { id: 'early', group: 'g', orderMs: T0 - 50 }, { id: 'same1', group: 'g', orderMs: T0 },
      { id: 'same2', group: 'g', orderMs: T0 }, { id: 'other', group: 'h', orderMs: T0 - 100 },
    ]);
    expect((await allPages(engine, q, { group: 'g', limit: 3 })).flat()).toEqual(['early', 'same1', 'same2', 'late']);
    for (const how of ['complete', 'complete', 'fail'] as const) {
      clock.advance(10);
      await finish(engine, q, how); // other, early, same1
    }
    expect((await engine.listJobs(q, { state: 'completed', group: 'g' })).jobs.map((job) => job.id)).toEqual(['early']);
    expect((await engine.listJobs(q, { state: 'completed' })).jobs.map((job) => job.id)).toEqual(['early', 'other']);
    expect((await engine.listJobs(q, { state: 'failed', group: 'g' })).jobs.map((job) => job.id)).toEqual(['same1']);
  });

  it('rejects a bad state, limit or group', async () => {
    const { engine, q } = await setupQueue();
    for (const query of [{ state: 'done' }, { limit: 1001 }, { limit: 0 }, { group: '' }]) {
      await rejectsWith(engine.listJobs(q, query), 'VALIDATION_FAILED');
    }
  });
});

describe('removeJob', () => {
  it('removes waiting, delayed, completed and failed jobs', async () => {
    const { engine, q } = await setupQueue({ keepCompleted: 10, keepFailed: 10 });
    await engine.enqueueBatch(q, [...jobsIn(['c', 'a'], ['f', 'b'], ['w', 'c']), { id: 'd', group: 'd', delayMs: 1000 }]);
    await finish(engine, q, 'complete');
    await finish(engine, q, 'fail');
    for (const id of ['c', 'f', 'w', 'd']) {
      await engine.removeJob(q, id);
      await rejectsWith(engine.getJob(q, id), 'JOB_NOT_FOUND');
    }
    expect(await counts(engine, q)).toEqual(NO_COUNTS);
  });

  it("active is INVALID_STATE, unknown is JOB_NOT_FOUND; removing a group's head lets its next job run", async () => {
    const { engine, q } = await setupQueue();
    await engine.enqueueBatch(q, jobsIn(['busy', 'a'], ['head', 'g'], ['next', 'g']));
    await engine.reserve(q, 1);
    await rejectsWith(engine.removeJob(q, 'busy'), 'INVALID_STATE');
    expect((await engine.getJob(q, 'busy')).state).toBe('active');
    await rejectsWith(engine.removeJob(q, 'nope'), 'JOB_NOT_FOUND');
    await engine.removeJob(q, 'head');
    expect((await engine.reserve(q, 5)).jobs.map((job) => job.id)).toEqual(['next']);
  });

  it('removing a head that waits for its retry backoff lets the next job of its group run at once', async () => {
    const { engine, q } = await setupQueue({ backoff: { type: 'fixed', delayMs: 3_600_000, jitter: false } });
    await engine.enqueueBatch(q, jobsIn(['poison', 'g'], ['next', 'g']));
    const [poison] = (await engine.reserve(q, 1)).jobs;
    await engine.fail(q, { id: 'poison', lease: poison!.lease.token, error: 'HTTP 500' });
    await engine.removeJob(q, 'poison');
    // The hour-long hold belonged to the removed job; nothing else holds the group back.
    expect((await engine.reserve(q, 5)).jobs.map((job) => job.id)).toEqual(['next']);
  });
});

describe('retryJob', () => {
  it('sends a failed job back to waiting with attempts reset, ahead of later jobs of its group', async () => {
    const { engine, q } = await setupQueue({ maxAttempts: 1 });
    await engine.enqueueBatch(q, jobsIn(['first', 'g'], ['second', 'g']));
    await finish(engine, q, 'fail');
    const retried = await engine.retryJob(q, 'first');
    expect(retried).toEqual(await engine.getJob(q, 'first'));
    expect(retried).toMatchObject({ state: 'waiting', attempts: 0 });
    expect(retried).not.toHaveProperty('error');
    expect(retried).not.toHaveProperty('finishedAt');
    const [again] = (await engine.reserve(q, 5)).jobs;
    expect([again!.id, again!.attempt]).toEqual(['first', 1]);
  });

  it('any other state is INVALID_STATE; an unknown job is JOB_NOT_FOUND', async () => {
    const { engine, q } = await setupQueue({ keepCompleted: 10 });
    await engine.enqueueBatch(q, [...jobsIn(['c', 'a'], ['act', 'b'], ['w', 'b']), { id: 'd', group: 'c', delayMs: 1000 }]);
    await finish(engine, q, 'complete');
    await engine.reserve(q, 1);
    for (const id of ['c', 'act', 'w', 'd']) await rejectsWith(engine.retryJob(q, id), 'INVALID_STATE');
    await rejectsWith(engine.retryJob(q, 'nope'), 'JOB_NOT_FOUND');
  });
});

describe('promoteJob', () => {
  it('makes a delayed job waiting now, reservable without a tick; any other state is INVALID_STATE', async () => {
    const { engine, q } = await setupQueue();
    await engine.enqueueBatch(q, [...jobsIn(['act', 'a'], ['w', 'a']), { id: 'd', group: 'g', delayMs: 60_000 }]);
    await engine.reserve(q, 1);
    for (const id of ['act', 'w']) await rejectsWith(engine.promoteJob(q, id), 'INVALID_STATE');
    await rejectsWith(engine.promoteJob(q, 'nope'), 'JOB_NOT_FOUND');
    const promoted = await engine.promoteJob(q, 'd');
    expect(promoted).toMatchObject({ id: 'd', state: 'waiting' });
    expect(promoted).not.toHaveProperty('runAt');
    expect((await engine.reserve(q, 1)).jobs.map((job) => job.id)).toEqual(['d']);
  });
});

describe('updateJob', () => {
  it('changes the data of waiting and delayed jobs', async () => {
    const { engine, q } = await setupQueue();
    await engine.enqueueBatch(q, [{ id: 'w', group: 'g', data: 1 }, { id: 'd', group: 'h', data: 2, delayMs: 1000 }]);
    expect(await engine.updateJob(q, 'w', { data: { v: [] } })).toMatchObject({ state: 'waiting', data: { v: [] } });
    expect(await engine.updateJob(q, 'd', { data: [] })).toMatchObject({ state: 'delayed', data: [], runAt: T0 + 1000 });
    const [leased] = (await engine.reserve(q, 1)).jobs;
    expect(leased!.rawData).toBe('{"v":[]}');
  });

  it('delayMs on a waiting head delays it and lets the next job of its group run', async () => {
    const { engine, q } = await setupQueue();
    await engine.enqueueBatch(q, jobsIn(['head', 'g'], ['next', 'g']));
    expect(await engine.updateJob(q, 'head', { delayMs: 5000 })).toMatchObject({ state: 'delayed', runAt: T0 + 5000 });
    expect((await engine.reserve(q, 5)).jobs.map((job) => job.id)).toEqual(['next']);
    expect(await counts(engine, q)).toMatchObject({ delayed: 1, active: 1, waiting: 0 });
  });

  it('delayMs moves a delayed job; delayMs 0 promotes it', async () => {
    const { clock, engine, q } = await setupQueue();
    await engine.enqueue(q, { id: 'd', group: 'g', delayMs: 60_000 });
    clock.advance(1000);
    expect((await engine.updateJob(q, 'd', { delayMs: 2000 })).runAt).toBe(T0 + 3000);
    expect(await engine.updateJob(q, 'd', { delayMs: 0 })).toMatchObject({ state: 'waiting' });
    expect((await engine.reserve(q, 1)).jobs.map((job) => job.id)).toEqual(['d']);
  });

  it('active, completed and failed jobs are INVALID_STATE; too large data is PAYLOAD_TOO_LARGE', async () => {
    const { engine, q } = await setupQueue({ keepCompleted: 10, keepFailed: 10, maxPayloadBytes: 20 });
    await engine.enqueueBatch(q, [...jobsIn(['c', 'a'], ['f', 'b'], ['act', 'c']), { id: 'w', group: 'c', data: 'small' }]);
    await finish(engine, q, 'complete');
    await finish(engine, q, 'fail');
    await engine.reserve(q, 1);
    for (const id of ['c', 'f', 'act']) await rejectsWith(engine.updateJob(q, id, { data: 1 }), 'INVALID_STATE');
    await rejectsWith(engine.updateJob(q, 'w', { data: 'z'.repeat(30) }), 'PAYLOAD_TOO_LARGE');
    expect((await engine.getJob(q, 'w')).data).toBe('small');
  });

  it('rejects an empty or unknown patch and an unknown job', async () => {
    const { engine, q } = await setupQueue();
    await engine.enqueue(q, { id: 'w', group: 'g' });
    for (const patch of [{}, { group: 'h' }, { delayMs: -5 }]) await rejectsWith(engine.updateJob(q, 'w', patch), 'VALIDATION_FAILED');
    await rejectsWith(engine.updateJob(q, 'nope', { data: 1 }), 'JOB_NOT_FOUND');
  });
});
