// Cancelling a job by id: waiting, delayed and active jobs end `cancelled` at once (an active
// job's lease is revoked and its group moves on), finished ones are INVALID_STATE, and the
// revoked lease's callbacks hear JOB_CANCELLED, not LEASE_LOST, and change nothing.
import { describe, expect, it } from 'vitest';
import type { Engine } from '../../src/core/engine';
import type { LeasedJob } from '../../src/core/engine/leases';
import { rejectsWith, setupQueue, T0 } from '../helpers/engine';

async function reserveOne(engine: Engine, q: string): Promise<LeasedJob> {
  const { jobs } = await engine.reserve(q, 1);
  expect(jobs).toHaveLength(1);
  return jobs[0]!;
}

const ref = (job: LeasedJob) => ({ id: job.id, lease: job.lease.token });

async function counts(engine: Engine, q: string) {
  return (await engine.getQueue(q)).counts;
}

describe('cancel', () => {
  it('a waiting job ends cancelled; the job behind it becomes the head and runs', async () => {
    const { engine, q } = await setupQueue();
    await engine.enqueueBatch(q, [{ id: 'a', group: 'g' }, { id: 'b', group: 'g' }]);
    expect(await engine.cancelJob(q, 'a')).toEqual({ id: 'a', state: 'cancelled', outcomes: [] });
    expect(await engine.getJob(q, 'a')).toMatchObject({ state: 'cancelled', attempts: 0, finishedAt: T0 });
    expect((await reserveOne(engine, q)).id).toBe('b');
    expect(await counts(engine, q)).toMatchObject({ waiting: 0, active: 1, cancelled: 1, groups: 1 });
  });

  it('a waiting job behind a lease leaves the group busy; one holding a retry backoff releases it', async () => {
    const { clock, engine, q } = await setupQueue({ backoff: { type: 'fixed', delayMs: 60_000, jitter: false } });
    await engine.enqueueBatch(q, [{ id: 'a', group: 'g' }, { id: 'b', group: 'g' }, { id: 'c', group: 'g' }]);
    const a = await reserveOne(engine, q);
    await engine.cancelJob(q, 'b');
    expect((await engine.reserve(q, 5)).jobs).toEqual([]);
    // a fails and holds the group for 60 s; cancelling it lets c run now.
    await engine.fail(q, { ...ref(a), error: 'busy' });
    clock.advance(1000);
    expect((await engine.reserve(q, 5)).jobs).toEqual([]);
    await engine.cancelJob(q, 'a');
    expect((await reserveOne(engine, q)).id).toBe('c');
  });

  it('a delayed job ends cancelled and never runs', async () => {
    const { clock, engine, q } = await setupQueue();
    await engine.enqueue(q, { id: 'later', group: 'g', delayMs: 5000 });
    await engine.cancelJob(q, 'later');
    expect(await engine.getJob(q, 'later')).toMatchObject({ state: 'cancelled' });
    expect((await engine.getJob(q, 'later')).runAt).toBeUndefined();
    clock.advance(10_000);
    await engine.tick(q);
    expect((await engine.reserve(q, 5)).jobs).toEqual([]);
    expect(await counts(engine, q)).toMatchObject({ waiting: 0, delayed: 0, cancelled: 1, groups: 0 });
  });

  for (const solo of [false, true]) {
    it(`an active job${solo ? ' leased solo' : ''}: the lease is revoked and the group's next job can be leased at once`, async () => {
      const { clock, engine, q } = await setupQueue();
      let job: LeasedJob;
      if (solo) {
        const enqueued = await engine.enqueueAndReserve(q, { id: 'a', group: 'g' }, 1);
        job = enqueued.leased[0]!;
        expect(job.solo).toBe(true);
        await engine.enqueue(q, { id: 'b', group: 'g' });
      } else {
        await engine.enqueueBatch(q, [{ id: 'a', group: 'g' }, { id: 'b', group: 'g' }]);
        job = await reserveOne(engine, q);
      }
      clock.advance(1000);
      await engine.cancelJob(q, 'a');
      expect(await engine.getJob(q, 'a')).toMatchObject({ state: 'cancelled', attempts: 1, startedAt: T0, finishedAt: T0 + 1000 });
      expect((await reserveOne(engine, q)).id).toBe('b');
      expect(await counts(engine, q)).toMatchObject({ waiting: 0, active: 1, cancelled: 1, groups: 1 });
    });
  }

  it('the revoked lease: heartbeat, progress, complete and fail are JOB_CANCELLED and change nothing', async () => {
    const { engine, q } = await setupQueue();
    await engine.enqueueBatch(q, [{ id: 'a', group: 'g' }, { id: 'b', group: 'g' }]);
    const job = await reserveOne(engine, q);
    await engine.cancelJob(q, 'a');
    const next = await reserveOne(engine, q);
    const cancelled = await engine.getJob(q, 'a');
    await rejectsWith(engine.heartbeat(q, ref(job)), 'JOB_CANCELLED');
    await rejectsWith(engine.progress(q, { ...ref(job), progress: 50 }), 'JOB_CANCELLED');
    await rejectsWith(engine.complete(q, { ...ref(job), result: 'late' }, 5), 'JOB_CANCELLED');
    await rejectsWith(engine.fail(q, { ...ref(job), error: 'late', retry: true }), 'JOB_CANCELLED');
    // A drain's batch settle reports it per outcome, and acks the others.
    const settled = await engine.settle(q, [{ kind: 'complete', ...ref(job) }, { kind: 'complete', ...ref(next) }], 0);
    expect(settled.results).toEqual([{ id: 'a', state: 'JOB_CANCELLED' }, { id: 'b', state: 'completed' }]);
    expect(await engine.getJob(q, 'a')).toEqual(cancelled);
    expect(await counts(engine, q)).toMatchObject({ active: 0, cancelled: 1, groups: 0 });
  });

  it('with keepFailed 0 the job is deleted, and its late callbacks still hear JOB_CANCELLED', async () => {
    const { engine, q } = await setupQueue({ keepFailed: 0 });
    await engine.enqueue(q, { id: 'a', group: 'g' });
    const job = await reserveOne(engine, q);
    await engine.cancelJob(q, 'a');
    await rejectsWith(engine.getJob(q, 'a'), 'JOB_NOT_FOUND');
    await rejectsWith(engine.complete(q, ref(job)), 'JOB_CANCELLED');
    await rejectsWith(engine.heartbeat(q, ref(job)), 'JOB_CANCELLED');
    expect(await counts(engine, q)).toMatchObject({ waiting: 0, active: 0, cancelled: 0, groups: 0 });
  });

  it('an expired lease stays LEASE_LOST: only the lease a cancel ended is JOB_CANCELLED', async () => {
    const { clock, engine, q } = await setupQueue({ timeoutMs: 1000, backoff: { type: 'fixed', delayMs: 0, jitter: false } });
    await engine.enqueue(q, { id: 'a', group: 'g' });
    const stale = await reserveOne(engine, q);
    clock.advance(6001);
    await engine.tick(q);
    const current = await reserveOne(engine, q);
    await engine.cancelJob(q, 'a');
    await rejectsWith(engine.heartbeat(q, ref(stale)), 'LEASE_LOST');
    await rejectsWith(engine.heartbeat(q, ref(current)), 'JOB_CANCELLED');
  });

  it('a finished job is INVALID_STATE, and so is a second cancel; an unknown one JOB_NOT_FOUND', async () => {
    const { engine, q } = await setupQueue({ keepCompleted: 10 });
    await engine.enqueueBatch(q, [{ id: 'done', group: 'a' }, { id: 'dead', group: 'b' }, { id: 'gone', group: 'c' }]);
    await engine.complete(q, ref(await reserveOne(engine, q)));
    await engine.fail(q, { ...ref(await reserveOne(engine, q)), error: 'no', retry: false });
    await engine.cancelJob(q, 'gone');
    for (const id of ['done', 'dead', 'gone']) {
      const before = await engine.getJob(q, id);
      await rejectsWith(engine.cancelJob(q, id), 'INVALID_STATE');
      expect(await engine.getJob(q, id)).toEqual(before);
    }
    await rejectsWith(engine.cancelJob(q, 'nope'), 'JOB_NOT_FOUND');
    await rejectsWith(engine.cancelJob(`${q}-missing`, 'nope'), 'QUEUE_NOT_FOUND');
    await rejectsWith(engine.cancelJob(q, ''), 'VALIDATION_FAILED');
  });

  it('cancelled jobs are listed newest first, counted, removable, and kept per keepFailed', async () => {
    const { clock, engine, q } = await setupQueue({ keepFailed: 3 });
    await engine.enqueueBatch(q, ['j1', 'j2', 'j3', 'j4', 'j5'].map((id) => ({ id, group: id })));
    await engine.removeJob(q, 'j5'); // nothing waiting: the tick runs for the trim alone
    for (const id of ['j1', 'j2', 'j3', 'j4']) {
      await engine.cancelJob(q, id);
      clock.advance(1000);
    }
    const listed = await engine.listJobs(q, { state: 'cancelled' });
    expect(listed.jobs.map((job) => job.id)).toEqual(['j4', 'j3', 'j2']);
    expect(listed.jobs.every((job) => job.state === 'cancelled')).toBe(true);
    expect((await engine.listJobs(q, { state: 'cancelled', group: 'j3' })).jobs.map((job) => job.id)).toEqual(['j3']);
    expect(await counts(engine, q)).toMatchObject({ waiting: 0, cancelled: 3 });
    await engine.removeJob(q, 'j3');
    expect(await counts(engine, q)).toMatchObject({ waiting: 0, cancelled: 2 });

    // A lowered keepFailed is trimmed by the tick, as for failed jobs.
    await engine.putQueue(q, { endpoint: 'http://127.0.0.1:9/jobs', keepFailed: 1 });
    await engine.tick(q);
    expect((await engine.listJobs(q, { state: 'cancelled' })).jobs.map((job) => job.id)).toEqual(['j4']);
  });

  it('a duplicate enqueue of a cancelled id reports cancelled; retry, promote and update refuse it', async () => {
    const { engine, q } = await setupQueue();
    await engine.enqueue(q, { id: 'a', group: 'g' });
    await engine.cancelJob(q, 'a');
    expect(await engine.enqueue(q, { id: 'a', group: 'g' })).toEqual({ id: 'a', state: 'cancelled', duplicate: true });
    await rejectsWith(engine.retryJob(q, 'a'), 'INVALID_STATE');
    await rejectsWith(engine.promoteJob(q, 'a'), 'INVALID_STATE');
    await rejectsWith(engine.updateJob(q, 'a', { data: 1 }), 'INVALID_STATE');
  });
});
