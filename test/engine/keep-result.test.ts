// keepResult (finish.lua keepResult): a job a waiter asked for keeps its end and result for 5
// minutes after it completes on a queue that keeps no completed jobs, outside the queue's
// completed jobs and counts; later such ends trim the expired ones; the queue's deletion takes
// them; and what it costs, on a Redis of this file's own.
import { describe, expect, it } from 'vitest';
import { commandStats, diffCounts } from '../../bench/lib/redis-stats';
import { type LeasedJob, spotOf } from '../../src/core/engine/leases';
import { queueKeys } from '../../src/core/store/keys';
import { T0, rejectsWith, usePrivateEngine } from '../helpers/engine';
import { uniqueName } from '../helpers/stack';

const WINDOW_MS = 300_000;
const env = usePrivateEngine();

async function queue(): Promise<string> {
  const q = uniqueName('keep');
  await env.engine.putQueue(q, { endpoint: 'http://127.0.0.1:9/jobs' }); // keepCompleted 0: the default
  return q;
}

/** Enqueues, leases and completes a job as the dispatcher does (its spot known). */
async function run(q: string, job: Record<string, unknown>): Promise<LeasedJob> {
  await env.engine.enqueue(q, job);
  const { jobs } = await env.engine.reserve(q, 1);
  const leased = jobs[0]!;
  await env.engine.settle(q, [{ kind: 'complete', id: leased.id, lease: leased.lease.token, result: { ok: leased.id }, spot: spotOf(leased) }], 0);
  return leased;
}

describe('keepResult', () => {
  it('a completed job keeps its end and result for the window, outside the kept jobs and counts', async () => {
    env.clock.set(T0);
    const q = await queue();
    await run(q, { id: 'a', group: 'g', keepResult: true });
    expect(await env.engine.getJob(q, 'a')).toMatchObject({ state: 'completed', result: { ok: 'a' }, finishedAt: T0 });
    expect((await env.engine.listJobs(q, { state: 'completed' })).jobs).toEqual([]);
    expect((await env.engine.getQueue(q)).counts).toMatchObject({ waiting: 0, completed: 0, active: 0 });
    await run(q, { id: 'b', group: 'g' });
    await rejectsWith(env.engine.getJob(q, 'b'), 'JOB_NOT_FOUND'); // not asked for: gone as before

    env.clock.advance(WINDOW_MS + 1);
    await run(q, { id: 'c', group: 'g', keepResult: true }); // trims the expired one
    await rejectsWith(env.engine.getJob(q, 'a'), 'JOB_NOT_FOUND');
    expect(await env.engine.getJob(q, 'c')).toMatchObject({ state: 'completed', result: { ok: 'c' } });
    expect(await env.admin.call(['ZCARD', queueKeys(q).results])).toBe(1);

    await env.engine.deleteQueue(q);
    expect(await env.admin.call(['EXISTS', queueKeys(q).results])).toBe(0);
  });

  it('a queue that keeps completed jobs keeps it as one of them', async () => {
    const q = uniqueName('keep');
    await env.engine.putQueue(q, { endpoint: 'http://127.0.0.1:9/jobs', keepCompleted: 10 });
    await run(q, { id: 'a', group: 'g', keepResult: true });
    expect((await env.engine.listJobs(q, { state: 'completed' })).jobs.map((job) => job.id)).toEqual(['a']);
    expect(await env.admin.call(['EXISTS', queueKeys(q).results])).toBe(0);
  });

  it('costs, per job asked for: its record read and written, a ZADD and a look for expired ones', async () => {
    env.clock.set(T0 + 86_400_000);
    const q = await queue();
    const measure = async (keepResult: boolean) => {
      await env.engine.enqueue(q, { group: 'g', keepResult });
      const { jobs } = await env.engine.reserve(q, 1);
      const before = await commandStats(env.admin);
      await env.engine.settle(q, [{ kind: 'complete', id: jobs[0]!.id, lease: jobs[0]!.lease.token, spot: spotOf(jobs[0]!) }], 0);
      return diffCounts(before, await commandStats(env.admin));
    };
    const plain = await measure(false);
    const kept = await measure(true);
    const extra = Object.fromEntries(Object.entries(kept).map(([name, n]) => [name, n - (plain[name] ?? 0)]).filter(([, n]) => n !== 0));
    // The record: ZMSCORE of the lease and HMGET of the record (instead of one ZREM's fast path),
    // HSET of its end (instead of HDEL); ZRANGEBYSCORE for expired ends, ZADD to `results`.
    expect(extra).toEqual({ zmscore: 1, hmget: 1, hset: 1, zrangebyscore: 1, zadd: 1, hdel: -1 }); // 4 more in all
  });
});
