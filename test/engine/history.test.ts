// A job's attempt history: its last 10 attempts, oldest first, each with its start, end, outcome
// (completed, failed, expired, cancelled), the endpoint's HTTP status when there was one and the
// error. GET of the job shows it; listings do not.
import { describe, expect, it } from 'vitest';
import type { Engine } from '../../src/core/engine';
import type { LeasedJob } from '../../src/core/engine/leases';
import { setupQueue, T0 } from '../helpers/engine';

const now = { type: 'fixed', delayMs: 0, jitter: false } as const;

async function reserveOne(engine: Engine, q: string): Promise<LeasedJob> {
  const { jobs } = await engine.reserve(q, 1);
  expect(jobs).toHaveLength(1);
  return jobs[0]!;
}

/** Ends the job's current lease as a delivery answered with `status` would. */
async function answer(engine: Engine, q: string, job: LeasedJob, status: number) {
  const ref = { id: job.id, lease: job.lease.token, status };
  const outcome = status < 300 ? { kind: 'complete' as const, ...ref, result: 'ok' } : { kind: 'fail' as const, ...ref, error: `HTTP ${status}` };
  expect((await engine.settle(q, [outcome], 0)).results[0]!.state).not.toBe('LEASE_LOST');
}

describe('attempt history', () => {
  it('retries, then success: every attempt with its status and error', async () => {
    const { clock, engine, q } = await setupQueue({ keepCompleted: 10, backoff: now });
    await engine.enqueue(q, { id: 'j', group: 'g' });
    await answer(engine, q, await reserveOne(engine, q), 503);
    clock.advance(1000);
    const second = await reserveOne(engine, q);
    clock.advance(500);
    await engine.fail(q, { id: 'j', lease: second.lease.token, error: 'upstream said no' }); // a callback: no status
    clock.advance(1000);
    await answer(engine, q, await reserveOne(engine, q), 200);
    const job = await engine.getJob(q, 'j');
    expect(job).toMatchObject({ state: 'completed', attempts: 3 });
    expect(job.history).toEqual([
      { attempt: 1, startedAt: T0, finishedAt: T0, outcome: 'failed', status: 503, error: 'HTTP 503' },
      { attempt: 2, startedAt: T0 + 1000, finishedAt: T0 + 1500, outcome: 'failed', error: 'upstream said no' },
      { attempt: 3, startedAt: T0 + 2500, finishedAt: T0 + 2500, outcome: 'completed', status: 200 },
    ]);
  });

  it('retries, then failure for good; a waiting job between attempts shows what came before', async () => {
    const { engine, q } = await setupQueue({ maxAttempts: 2, backoff: now });
    await engine.enqueue(q, { id: 'j', group: 'g' });
    expect((await engine.getJob(q, 'j')).history).toBeUndefined();
    await answer(engine, q, await reserveOne(engine, q), 500);
    const waiting = await engine.getJob(q, 'j');
    expect(waiting).toMatchObject({ state: 'waiting', history: [{ attempt: 1, outcome: 'failed', status: 500 }] });
    // The record's history line does not reach the delivery: the data is the job's own.
    await engine.updateJob(q, 'j', { data: { keep: [1, 2] } });
    const second = await reserveOne(engine, q);
    expect(second.data).toEqual({ keep: [1, 2] });
    await answer(engine, q, second, 422);
    const job = await engine.getJob(q, 'j');
    expect(job).toMatchObject({ state: 'failed', attempts: 2, error: 'HTTP 422', data: { keep: [1, 2] } });
    expect(job.history!.map((a) => [a.attempt, a.outcome, a.status])).toEqual([[1, 'failed', 500], [2, 'failed', 422]]);
  });

  it('a lease that ran out is `expired`; a cancelled attempt is `cancelled`', async () => {
    const { clock, engine, q } = await setupQueue({ timeoutMs: 1000, backoff: now });
    await engine.enqueue(q, { id: 'j', group: 'g' });
    await reserveOne(engine, q);
    clock.advance(6001);
    await engine.tick(q);
    await reserveOne(engine, q);
    clock.advance(100);
    await engine.cancelJob(q, 'j');
    expect((await engine.getJob(q, 'j')).history).toEqual([
      { attempt: 1, startedAt: T0, finishedAt: T0 + 6001, outcome: 'expired', error: 'lease expired: no answer within 6000 ms' },
      { attempt: 2, startedAt: T0 + 6001, finishedAt: T0 + 6101, outcome: 'cancelled' },
    ]);
  });

  it('keeps the last 10 attempts, and the first 500 bytes of each error, whole characters only', async () => {
    const { engine, q } = await setupQueue({ maxAttempts: 12, backoff: now });
    await engine.enqueue(q, { id: 'j', group: 'g' });
    for (let i = 1; i <= 12; i++) {
      const job = await reserveOne(engine, q);
      // 'é' is two bytes in UTF-8: the cut at 500 bytes must not split one.
      await engine.fail(q, { id: 'j', lease: job.lease.token, error: `attempt ${i} `.padEnd(1000, i % 2 ? 'x' : 'é') });
    }
    const job = await engine.getJob(q, 'j');
    expect(job).toMatchObject({ state: 'failed', attempts: 12 });
    expect(job.error).toHaveLength(1000);
    expect(job.history!.map((a) => a.attempt)).toEqual([3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
    for (const { error } of job.history!) {
      expect(error).toMatch(/^attempt \d+ (x+|é+)$/);
      expect(Buffer.byteLength(error!)).toBeGreaterThanOrEqual(499);
      expect(Buffer.byteLength(error!)).toBeLessThanOrEqual(500);
    }
  });

  it('listings and group views leave it out', async () => {
    const { engine, q } = await setupQueue({ backoff: { type: 'fixed', delayMs: 60_000, jitter: false } });
    await engine.enqueueBatch(q, [{ id: 'j', group: 'g' }, { id: 'k', group: 'g' }]);
    await answer(engine, q, await reserveOne(engine, q), 500);
    expect((await engine.getJob(q, 'j')).history).toHaveLength(1);
    const [listed] = (await engine.listJobs(q, { state: 'waiting' })).jobs;
    expect(listed).toMatchObject({ id: 'j', attempts: 1, error: 'HTTP 500' });
    expect(listed).not.toHaveProperty('history');
    for (const job of (await engine.getGroup(q, 'g')).jobs) expect(job).not.toHaveProperty('history');
  });

  it('a retry by hand keeps the history; its attempts count from 1 again', async () => {
    const { engine, q } = await setupQueue({ maxAttempts: 1, keepCompleted: 1 });
    await engine.enqueue(q, { id: 'j', group: 'g' });
    await answer(engine, q, await reserveOne(engine, q), 500);
    await engine.retryJob(q, 'j');
    await answer(engine, q, await reserveOne(engine, q), 200);
    expect((await engine.getJob(q, 'j')).history!.map((a) => [a.attempt, a.outcome])).toEqual([[1, 'failed'], [1, 'completed']]);
  });
});
