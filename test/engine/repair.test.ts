// Jobs stranded by scripts that failed half way before issue 16 (group "0".."59" met a per-minute
// counter where its flow state lives) come back: the tick gives back a leaked `active` slot, and
// repair (POST /v1/queues/{q}/repair) re-indexes records found in no index. Each test writes
// the stranded state the old layout left, straight to Redis, then checks the jobs run again.
import { afterAll, describe, expect, it } from 'vitest';
import { queueKeys } from '../../src/core/store/keys';
import { setupQueue } from '../helpers/engine';
import { adminClient } from '../helpers/stack';

const admin = adminClient();
afterAll(() => admin.close());

async function get(...args: string[]): Promise<string | null> {
  const reply = await admin.call(args);
  return reply === null ? null : String(reply);
}

/** The group whose name the old layout's per-minute counters of `now` collided with, and the
 * counter it held after one job failed for good: field 'f:<minute % 60>', minute * 1e8 + 1. */
function collision(now: number): { group: string; field: string; value: string } {
  const minute = Math.floor(now / 60_000);
  return { group: String(minute % 60), field: `f:${minute % 60}`, value: String(minute * 1e8 + 1) };
}

describe('repair of stranded jobs', () => {
  it("a record an enqueue wrote before failing (in no index) answered 'duplicate, waiting' and never ran; repair runs it", async () => {
    const { clock, engine, q } = await setupQueue();
    const k = queueKeys(q);
    const { group, field, value } = collision(clock.now());
    await admin.call(['HSET', k.meta, field, value]);
    // What the failed enqueue left: the record (HSETNX came first), nothing else, not even seq.
    const seq = Number((await get('HGET', k.meta, 'seq')) ?? 0) + 1;
    const state = { g: group, s: seq, o: clock.now(), i: 1 };
    await admin.call(['HSET', k.jobs, 'welcome-42', `${JSON.stringify(state)}\n{"n":1}`]);

    expect(await engine.enqueue(q, { id: 'welcome-42', group, data: { n: 2 } })).toEqual({ id: 'welcome-42', state: 'waiting', duplicate: true });
    expect((await engine.reserve(q, 5)).jobs).toEqual([]);

    expect(await engine.repairQueue(q)).toEqual({ reindexed: 1, offered: 1 });
    const [job, ...rest] = (await engine.reserve(q, 5)).jobs;
    expect(rest).toEqual([]);
    expect(job).toMatchObject({ id: 'welcome-42', group, data: { n: 1 }, attempt: 1 });
    await engine.complete(q, { id: job!.id, lease: job!.lease.token });
    // The group's count was rebuilt from its keys: done, the group is gone, and so is the counter.
    expect((await engine.getQueue(q)).counts).toMatchObject({ waiting: 0, active: 0, groups: 0 });
    expect(await get('HEXISTS', k.meta, `g:${group}`)).toBe('0');
    expect(await get('HEXISTS', k.meta, field)).toBe('0');
  });

  it('delayed jobs a failed tick took out of `delayed` run after the repair', async () => {
    const { clock, engine, q } = await setupQueue();
    const k = queueKeys(q);
    await engine.enqueueBatch(q, [
      { id: 'd1', group: 'a', delayMs: 1000 },
      { id: 'd2', group: 'b b', delayMs: 1000 },
    ]);
    await admin.call(['ZREM', k.delayed, 'd1 a', 'd2 b b']); // the tick's first write, then its error
    clock.advance(2000);
    await engine.tick(q);
    expect((await engine.reserve(q, 5)).jobs).toEqual([]);
    expect((await engine.getJob(q, 'd1')).state).toBe('delayed'); // and it would stay so for ever

    expect(await engine.repairQueue(q)).toEqual({ reindexed: 2, offered: 0 });
    expect((await engine.tick(q)).readyNow).toBe(true);
    const ids = (await engine.reserve(q, 5)).jobs.map((j) => j.id).sort();
    expect(ids).toEqual(['d1', 'd2']);
  });

  it('a group whose lease a failed settle removed (the job stays in its zset) is offered again', async () => {
    const { engine, q } = await setupQueue();
    const k = queueKeys(q);
    await engine.enqueueBatch(q, [
      { id: 'j1', group: '7' },
      { id: 'j2', group: '7' },
    ]);
    const [leased] = (await engine.reserve(q, 1)).jobs;
    expect(leased!.id).toBe('j1');
    await admin.call(['ZREM', k.active, `j1 ${leased!.lease.token}7`]); // settle's ZREM, then its error
    await engine.tick(q);
    expect((await engine.reserve(q, 5)).jobs).toEqual([]); // nothing offers group 7 any more

    expect(await engine.repairQueue(q)).toEqual({ reindexed: 0, offered: 1 });
    const again = (await engine.reserve(q, 5)).jobs;
    expect(again.map((j) => j.id)).toEqual(['j1']); // its head, one at a time as before
    await engine.complete(q, { id: 'j1', lease: again[0]!.lease.token }, 1);
    expect((await engine.getJob(q, 'j2')).state).toBe('active');
  });

  it('a solo lease a failed settle removed comes back, and its group counts it once', async () => {
    const { engine, q } = await setupQueue();
    const k = queueKeys(q);
    const { leased } = await engine.enqueueAndReserve(q, { id: 's', group: '3' }, 1);
    expect(leased[0]!.solo).toBe(true);
    await admin.call(['ZREM', k.active, `s ${leased[0]!.lease.token}3`]);

    expect(await engine.repairQueue(q)).toEqual({ reindexed: 1, offered: 1 });
    expect(await get('HGET', k.meta, 'g:3')).toBe('1');
    const [job] = (await engine.reserve(q, 5)).jobs;
    expect(job!.id).toBe('s');
    await engine.complete(q, { id: 's', lease: job!.lease.token });
    expect(await get('HEXISTS', k.meta, 'g:3')).toBe('0');
  });

  it('repair of a healthy queue changes nothing, and deletes the old per-minute counters', async () => {
    const { clock, engine, q } = await setupQueue({ keepCompleted: 10 });
    const k = queueKeys(q);
    await engine.enqueueBatch(q, [
      { id: 'w', group: 'g' },
      { id: 'x', group: 'g' },
      { id: 'd', group: 'h', delayMs: 5000 },
    ]);
    const [job] = (await engine.reserve(q, 1)).jobs;
    await engine.complete(q, { id: job!.id, lease: job!.lease.token });
    await admin.call(['HSET', k.meta, 'c:1', '1', 'r:2', '2', 'f:3', '3']);
    expect(await engine.repairQueue(q)).toEqual({ reindexed: 0, offered: 0 });
    expect(await admin.call(['HMGET', k.meta, 'c:1', 'r:2', 'f:3'])).toEqual([null, null, null]);
    expect((await engine.getQueue(q)).counts).toMatchObject({ waiting: 1, delayed: 1, completed: 1, active: 0 });
    clock.advance(1);
    expect((await engine.reserve(q, 5)).jobs.map((j) => j.id)).toEqual(['x']);
  });

  for (const how of ['on first touch', 'by the repair'] as const) {
    it(`a flow group whose state an old counter overwrote gets it back from its keys ${how}: no job starts twice`, async () => {
      const { engine, q } = await setupQueue({ groupConcurrency: 2 });
      const k = queueKeys(q);
      await engine.enqueueBatch(q, ['j1', 'j2', 'j3'].map((id) => ({ id, group: '5' })));
      const leased = (await engine.reserve(q, 5)).jobs;
      expect(leased.map((j) => j.id)).toEqual(['j1', 'j2']);
      await admin.call(['HSET', k.meta, 'f:5', String(28_333_333 * 1e8 + 1)]); // the old ring wrote over it

      if (how === 'by the repair') {
        expect(await engine.repairQueue(q)).toEqual({ reindexed: 0, offered: 0 }); // both slots are taken
        expect(JSON.parse((await get('HGET', k.meta, 'f:5'))!)).toMatchObject({ o: 0 });
      }
      await engine.complete(q, { id: 'j1', lease: leased[0]!.lease.token });
      expect((await engine.reserve(q, 5)).jobs.map((j) => j.id)).toEqual(['j3']); // not j2 again
      expect(await engine.getGroup(q, '5')).toMatchObject({ active: 2 });
    });
  }

  it('a missing queue is QUEUE_NOT_FOUND', async () => {
    const { engine } = await setupQueue();
    await expect(engine.repairQueue('no-such-queue')).rejects.toMatchObject({ code: 'QUEUE_NOT_FOUND' });
  });
  it("a batch's count of jobs out that no lease backs (a script cut short) holds its group; repair offers the group again", async () => {
    const { engine, q } = await setupQueue({ concurrency: 10, batch: { maxSize: 5 } });
    const k = queueKeys(q);
    await engine.enqueueBatch(q, [1, 2, 3].map((n) => ({ id: `j${n}`, group: 'g', data: { n } })));
    const [batch] = [(await engine.reserve(q, 1)).jobs];
    expect(batch!.map((job) => job.id)).toEqual(['j1', 'j2', 'j3']);
    await engine.settle(q, batch!.slice(0, 1).map((job) => ({ kind: 'release' as const, id: job.id, lease: job.lease.token })), 0);
    // The other two leases vanish (as if a script had failed after removing them): the count stays.
    await admin.call(['DEL', k.active]);
    await admin.call(['HSET', k.meta, 'active', '0']);
    expect(await get('HGET', k.meta, 'b:g')).toBe('2');
    expect((await engine.reserve(q, 1)).jobs).toEqual([]);

    expect(await engine.repairQueue(q)).toMatchObject({ offered: 1 });
    // No batch out: the field lists the jobs behind the head again (src/lua/includes/batch.lua).
    expect(await get('HGET', k.meta, 'b:g')).toBe('["j2","j3"]');
    const again = (await engine.reserve(q, 1)).jobs;
    expect(again.map((job) => [job.id, job.batchIndex])).toEqual([['j1', 0], ['j2', 1], ['j3', 2]]);
  });
});

describe('the tick and meta.active', () => {
  it('a leaked concurrency slot lasts one tick at most', async () => {
    const { engine, q } = await setupQueue({ concurrency: 1 });
    const k = queueKeys(q);
    await admin.call(['HINCRBY', k.meta, 'active', '1']); // a settle that removed a lease, then failed
    await engine.enqueue(q, { id: 'a', group: 'g' });
    expect((await engine.reserve(q, 1)).jobs).toEqual([]); // the queue believes it is full

    expect((await engine.tick(q)).readyNow).toBe(true);
    expect((await engine.reserve(q, 1)).jobs.map((j) => j.id)).toEqual(['a']);
    expect(await get('HGET', k.meta, 'active')).toBe('1');
  });

  it('a leaked slot with no lease and no timer left brings the tick at once (it would never come)', async () => {
    const { clock, engine, q } = await setupQueue({ concurrency: 1 });
    const k = queueKeys(q);
    await admin.call(['HSET', k.meta, 'active', '1']);
    await admin.call(['HDEL', k.meta, 'timer']);
    await admin.call(['ZREM', 'gq:due', q]);
    const { leased } = await engine.enqueueAndReserve(q, { id: 'a', group: 'g' }, 1);
    expect(leased).toEqual([]);
    expect(Number(await get('ZSCORE', 'gq:due', q))).toBe(clock.now()); // the cron comes now
    expect((await engine.tick(q)).readyNow).toBe(true);
    expect((await engine.reserve(q, 1)).jobs.map((j) => j.id)).toEqual(['a']);
  });

  it("the tick's scan sets the count of leases to 0 when there is none, at no cost", async () => {
    const { clock, engine, q } = await setupQueue();
    const k = queueKeys(q);
    // A timer that came with nothing due (the lease it was set for is gone): the scan alone runs.
    await admin.call(['HSET', k.meta, 'active', '3', 'timer', String(clock.now())]);
    expect((await engine.getQueue(q)).counts.active).toBe(3);
    expect(await engine.tick(q)).toMatchObject({ readyNow: false, nextDueAt: null });
    expect((await engine.getQueue(q)).counts.active).toBe(0);
  });
});

describe("the old layout's per-minute counters", () => {
  it('still show on the chart for the hour they cover, added to the new ring in the minute of the move', async () => {
    const { clock, engine, q } = await setupQueue();
    const k = queueKeys(q);
    const minute = Math.floor(clock.now() / 60_000);
    const at = (m: number, count: number) => String(m * 1e8 + count);
    await admin.call(['HSET', k.meta,
      `c:${minute % 60}`, at(minute, 3), `m:c:${minute % 60}`, at(minute, 2), // the minute of the move
      `r:${(minute - 1) % 60}`, at(minute - 1, 4), // the minute before: old ring only
      `f:${(minute - 2) % 60}`, '{"t":[],"o":0,"r":[1]}', // group "<n>"'s flow state, not a counter
    ]);
    const chart = await engine.getMinutes(q);
    expect(chart.at(-1)).toMatchObject({ completed: 5, failed: 0, retried: 0 });
    expect(chart.at(-2)).toMatchObject({ completed: 0, failed: 0, retried: 4 });
    expect(chart.at(-3)).toMatchObject({ completed: 0, failed: 0, retried: 0 });
  });

});
