// Bulk actions (docs/http-api.md#jobs): retry every failed job, delete every job of a finished
// state, in steps of BULK_STEP jobs, each answering an exact count and whether it is done. Run
// on the engine with a test clock; test/http/bulk.test.ts runs them through the Worker.
import { describe, expect, it } from 'vitest';
import { BULK_STEP } from '../../src/core/engine/bulk';
import type { Engine } from '../../src/core/engine';
import { spotOf } from '../../src/core/engine/leases';
import { createRedis } from '../../src/core/store/redis';
import { callScript } from '../../src/core/store/scripts';
import { scripts } from '../../src/lua/scripts.generated';
import { rejectsWith, setupQueue } from '../helpers/engine';
import { stack } from '../helpers/stack';

const GROUPS = 50;
const PER_GROUP = 9;
const JOBS = GROUPS * PER_GROUP; // 450: more than two steps

/** `${group}-${i}`, enqueued in that order: group g0 gets g0-0 ... g0-8. */
const jobsOf = (n = PER_GROUP) =>
  Array.from({ length: GROUPS * n }, (_, k) => ({ id: `g${k % GROUPS}-${Math.floor(k / GROUPS)}`, group: `g${k % GROUPS}` }));

/** Leases and ends every job it can, as a drain would; answers the ids in the order they ran. */
async function runAll(engine: Engine, q: string, how: 'complete' | 'fail'): Promise<string[]> {
  const ran: string[] = [];
  let { jobs } = await engine.reserve(q, 1000);
  while (jobs.length > 0) {
    ran.push(...jobs.map((job) => job.id));
    const outcomes = jobs.map((job) =>
      how === 'complete'
        ? { kind: 'complete' as const, id: job.id, lease: job.lease.token, spot: spotOf(job) }
        : { kind: 'fail' as const, id: job.id, lease: job.lease.token, error: 'HTTP 500', retry: false, spot: spotOf(job) },
    );
    ({ jobs } = await engine.settle(q, outcomes, 1000));
  }
  return ran;
}

/** A keepGoing that allows `steps` more steps after the first. */
const stepsAfterFirst = (steps: number) => () => steps-- > 0;

describe('retryJobs', () => {
  it('sends every failed job back to waiting, each at its place in its group, ahead of later jobs', async () => {
    const { engine, q } = await setupQueue({ concurrency: 1000, keepFailed: 1000 });
    await engine.enqueueBatch(q, jobsOf());
    expect(await runAll(engine, q, 'fail')).toHaveLength(JOBS);
    // Each group gets one more job after its failed ones.
    await engine.enqueueBatch(q, Array.from({ length: GROUPS }, (_, g) => ({ id: `g${g}-later`, group: `g${g}` })));
    expect((await engine.getQueue(q)).counts).toMatchObject({ failed: JOBS, waiting: GROUPS });

    expect(await engine.retryJobs(q, { state: 'failed' })).toEqual({ count: JOBS, done: true });
    expect((await engine.getQueue(q)).counts).toMatchObject({ failed: 0, waiting: JOBS + GROUPS });
    const job = await engine.getJob(q, 'g7-3');
    expect(job).toMatchObject({ state: 'waiting', attempts: 0 });
    expect(job).not.toHaveProperty('error');

    // Each group runs its retried jobs in their first order, then the later one.
    const ran = await runAll(engine, q, 'complete');
    for (let g = 0; g < GROUPS; g++) {
      const expected = [...Array.from({ length: PER_GROUP }, (_, i) => `g${g}-${i}`), `g${g}-later`];
      expect(ran.filter((id) => id.startsWith(`g${g}-`))).toEqual(expected);
    }
    expect(await engine.retryJobs(q, { state: 'failed' })).toEqual({ count: 0, done: true });
  });

  it('stops between steps when told to, with an exact count; the next call goes on', async () => {
    const { engine, q } = await setupQueue({ concurrency: 1000, keepFailed: 1000 });
    await engine.enqueueBatch(q, jobsOf());
    await runAll(engine, q, 'fail');
    expect(await engine.retryJobs(q, { state: 'failed' }, stepsAfterFirst(1))).toEqual({ count: 2 * BULK_STEP, done: false });
    expect((await engine.getQueue(q)).counts).toMatchObject({ failed: JOBS - 2 * BULK_STEP, waiting: 2 * BULK_STEP });
    expect(await engine.retryJobs(q, { state: 'failed' }, stepsAfterFirst(0))).toEqual({ count: JOBS - 2 * BULK_STEP, done: true });
  });

  it('leaves a job that changed group after the read to the next read, which retries it in its new group', async () => {
    // No dedup window: x's id is free again once x is removed.
    const { engine, q } = await setupQueue({ keepFailed: 10, maxAttempts: 1, dedupWindowMs: 0 });
    const ctx = { redis: createRedis({ url: stack().restUrl, token: stack().restToken }) };
    await engine.enqueueBatch(q, [{ id: 'x', group: 'old' }, { id: 'y', group: 'other' }]);
    await runAll(engine, q, 'fail');
    const page = await callScript(ctx, scripts.finishedPage, { queue: q }, ['failed', 10]);
    expect(page).toEqual(['x', 'old', 'y', 'other']);
    // Meanwhile x is removed, enqueued again in another group, and fails there.
    await engine.removeJob(q, 'x');
    await engine.enqueue(q, { id: 'x', group: 'new' });
    await runAll(engine, q, 'fail');

    const groups = ['old', 'other'];
    const reply = await callScript(ctx, scripts.retryJobs, { queue: q, groups }, [Date.now(), 'seed', ...page]);
    expect(reply).toMatchObject({ retried: 1, left: 1 }); // y retried, x left failed
    await expect(engine.getGroup(q, 'old')).rejects.toMatchObject({ code: 'GROUP_NOT_FOUND' });
    expect(await engine.retryJobs(q, { state: 'failed' })).toEqual({ count: 1, done: true });
    expect((await engine.getGroup(q, 'new')).jobs.map((job) => job.id)).toEqual(['x']);
  });

  it('refuses a state other than failed, and an unknown queue', async () => {
    const { engine, q } = await setupQueue();
    for (const input of [{ state: 'completed' }, { state: 'waiting' }, {}, { state: 'failed', extra: 1 }, null]) {
      await rejectsWith(engine.retryJobs(q, input), 'VALIDATION_FAILED');
    }
    await rejectsWith(engine.retryJobs('no-such-queue', { state: 'failed' }), 'QUEUE_NOT_FOUND');
  });
});

describe('cleanJobs', () => {
  it('deletes every job of one finished state, oldest first, in steps; the other states keep theirs', async () => {
    const { engine, q } = await setupQueue({ concurrency: 1000, keepCompleted: 1000, keepFailed: 1000 });
    await engine.enqueueBatch(q, jobsOf());
    await runAll(engine, q, 'complete');
    await engine.enqueueBatch(q, Array.from({ length: 10 }, (_, i) => ({ id: `bad-${i}`, group: `bad-${i}` })));
    await runAll(engine, q, 'fail');
    await engine.enqueue(q, { id: 'waits', group: 'w', delayMs: 60_000 });

    expect(await engine.cleanJobs(q, { state: 'completed' }, stepsAfterFirst(0))).toEqual({ count: BULK_STEP, done: false });
    // The oldest went first: the first jobs to complete are gone, the last are still there.
    await rejectsWith(engine.getJob(q, 'g0-0'), 'JOB_NOT_FOUND');
    expect(await engine.getJob(q, `g${GROUPS - 1}-${PER_GROUP - 1}`)).toMatchObject({ state: 'completed' });
    expect(await engine.cleanJobs(q, { state: 'completed' })).toEqual({ count: JOBS - BULK_STEP, done: true });
    expect((await engine.getQueue(q)).counts).toMatchObject({ completed: 0, failed: 10, delayed: 1 });
    expect(await engine.cleanJobs(q, { state: 'failed' })).toEqual({ count: 10, done: true });
    expect((await engine.getQueue(q)).counts).toMatchObject({ completed: 0, failed: 0, delayed: 1 });
    await rejectsWith(engine.getJob(q, 'bad-3'), 'JOB_NOT_FOUND');
    expect(await engine.cleanJobs(q, { state: 'failed' })).toEqual({ count: 0, done: true });
  });

  it('refuses states that are not finished, and an unknown queue', async () => {
    const { engine, q } = await setupQueue();
    for (const query of [{ state: 'waiting' }, { state: 'active' }, { state: 'delayed' }, {}, { state: 'failed', limit: '5' }]) {
      await rejectsWith(engine.cleanJobs(q, query), 'VALIDATION_FAILED');
    }
    await rejectsWith(engine.cleanJobs('no-such-queue', { state: 'completed' }), 'QUEUE_NOT_FOUND');
  });
});
