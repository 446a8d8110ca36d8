// Cursors are positions by key: a page of listJobs or listGroups starts after the last item of
// the page before, so retrying, removing or pausing what was listed, while paging, skips
// nothing. Sorted sets page exactly, ties included; hashes (waiting jobs without a group,
// groups) are walked with HSCAN, which returns every item at least once. 1,000 items each.
import { describe, expect, it } from 'vitest';
import type { Engine } from '../../src/core/engine';
import { rejectsWith, setupQueue } from '../helpers/engine';
import { byBytes, delayMany, finishMany, groupsMany } from '../helpers/listings';

const MANY = 1000;

/** Every page of listJobs, acting on each job before the next page; the ids in the order listed. */
async function walkJobs(engine: Engine, q: string, query: Record<string, unknown>, act: (id: string) => Promise<unknown>) {
  const ids: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await engine.listJobs(q, { ...query, cursor });
    expect(page.jobs.length).toBeLessThanOrEqual(Number(query.limit));
    for (const job of page.jobs) {
      ids.push(job.id);
      await act(job.id);
    }
    cursor = page.cursor ?? undefined;
  } while (cursor !== undefined);
  return ids;
}

const nothing = async () => undefined;

describe('sorted-set listings page by key', () => {
  it('failed, newest first: retrying each job while paging reaches all 1,000 once, ties by id', async () => {
    const { clock, engine, q } = await setupQueue({ concurrency: MANY, maxAttempts: 1, keepFailed: MANY });
    const expected = await finishMany(engine, clock.advance, q, { count: MANY, tie: 250, how: 'fail' });
    expect(await walkJobs(engine, q, { state: 'failed', limit: 37 }, nothing)).toEqual(expected);
    expect(await walkJobs(engine, q, { state: 'failed', limit: 37 }, (id) => engine.retryJob(q, id))).toEqual(expected);
    expect((await engine.getQueue(q)).counts).toMatchObject({ failed: 0, waiting: MANY });
  });

  it('completed, all 1,000 finished at one instant: removing each while paging reaches all once', async () => {
    const { clock, engine, q } = await setupQueue({ concurrency: MANY, keepCompleted: MANY });
    const expected = await finishMany(engine, clock.advance, q, { count: MANY, tie: MANY, how: 'complete' });
    expect(await walkJobs(engine, q, { state: 'completed', limit: 50 }, nothing)).toEqual(expected);
    expect(await walkJobs(engine, q, { state: 'completed', limit: 50 }, (id) => engine.removeJob(q, id))).toEqual(expected);
    expect((await engine.getQueue(q)).counts.completed).toBe(0);
  });

  it('delayed, by runAt then id: removing or promoting each while paging reaches all 1,000 once', async () => {
    const { engine, q } = await setupQueue();
    await engine.pauseQueue(q);
    const expected = await delayMany(engine, q, MANY);
    let n = 0;
    const removeOrPromote = (id: string) => (n++ % 2 === 0 ? engine.removeJob(q, id) : engine.promoteJob(q, id));
    expect(await walkJobs(engine, q, { state: 'delayed', limit: 41 }, removeOrPromote)).toEqual(expected);
    expect((await engine.getQueue(q)).counts).toMatchObject({ delayed: 0, waiting: MANY / 2 });
  });

  it('active, 1,000 leases with one deadline: completing each while paging reaches all once, by id', async () => {
    const { engine, q } = await setupQueue({ concurrency: MANY });
    await engine.enqueueBatch(q, Array.from({ length: MANY }, (_, i) => ({ group: `g${i}` })));
    const { jobs } = await engine.reserve(q, MANY);
    const tokens = new Map(jobs.map((job) => [job.id, job.lease.token]));
    const expected = [...tokens.keys()].sort(byBytes);
    const complete = (id: string) => engine.complete(q, { id, lease: tokens.get(id)! });
    expect(await walkJobs(engine, q, { state: 'active', limit: 30 }, complete)).toEqual(expected);
    expect((await engine.getQueue(q)).counts.active).toBe(0);
  });

  it("waiting in a group, 1,000 with one orderMs: removing each while paging reaches all once, in run order", async () => {
    const { engine, q } = await setupQueue();
    await engine.pauseQueue(q);
    const jobs = Array.from({ length: MANY }, (_, i) => ({ id: `j${i}`, group: 'g', orderMs: 5 }));
    await engine.enqueueBatch(q, jobs);
    const expected = jobs.map((job) => job.id);
    expect(await walkJobs(engine, q, { group: 'g', limit: 29 }, (id) => engine.removeJob(q, id))).toEqual(expected);
  });

  it('a page starts strictly after the last job listed, also when that job is gone and others tie with it', async () => {
    const { clock, engine, q } = await setupQueue({ concurrency: 10, keepCompleted: 10 });
    const completeNow = async (ids: string[]) => {
      await engine.enqueueBatch(q, ids.map((id) => ({ id, group: id })));
      const { jobs } = await engine.reserve(q, ids.length);
      await engine.settle(q, jobs.map((job) => ({ kind: 'complete' as const, id: job.id, lease: job.lease.token })), 0);
    };
    await completeNow(['a', 'b', 'c', 'd', 'e']);
    const first = await engine.listJobs(q, { state: 'completed', limit: 2 });
    expect(first.jobs.map((job) => job.id)).toEqual(['e', 'd']);
    // 'd' goes; 'da' (before 'd' newest first) and 'cz' (after it) finish at the same instant.
    await engine.removeJob(q, 'd');
    await completeNow(['da', 'cz']);
    const second = await engine.listJobs(q, { state: 'completed', limit: 2, cursor: first.cursor! });
    expect(second.jobs.map((job) => job.id)).toEqual(['cz', 'c']);
    clock.advance(1);
    // Ascending too: delayed jobs tied at one runAt, the cursor's job promoted meanwhile.
    await engine.enqueueBatch(q, ['k', 'm', 'p'].map((id) => ({ id, group: 'x', delayMs: 1000 })));
    const soon = await engine.listJobs(q, { state: 'delayed', limit: 2 });
    expect(soon.jobs.map((job) => job.id)).toEqual(['k', 'm']);
    await engine.promoteJob(q, 'm');
    await engine.enqueueBatch(q, ['l', 'n'].map((id) => ({ id, group: 'x', delayMs: 1000 })));
    const rest = await engine.listJobs(q, { state: 'delayed', limit: 5, cursor: soon.cursor! });
    expect(rest).toMatchObject({ cursor: null, jobs: [{ id: 'n' }, { id: 'p' }] });
  });
});

describe('hash listings walk with HSCAN', () => {
  it('waiting without a group: removing each job while paging reaches all 1,000', async () => {
    const { engine, q } = await setupQueue();
    await engine.pauseQueue(q);
    await engine.enqueueBatch(q, Array.from({ length: MANY }, (_, i) => ({ id: `j${i}`, group: `g${i % 100}` })));
    const ids = await walkJobs(engine, q, { limit: 50 }, (id) => engine.removeJob(q, id));
    expect(ids.sort()).toEqual(Array.from({ length: MANY }, (_, i) => `j${i}`).sort());
  });

  it('groups: pausing each group while paging reaches all 1,000', async () => {
    const { engine, q } = await setupQueue();
    const expected = await groupsMany(engine, q, MANY);
    const seen = new Set<string>();
    let cursor: string | undefined;
    do {
      const page = await engine.listGroups(q, { limit: 50, cursor });
      expect(page.groups.length).toBeLessThanOrEqual(50);
      for (const { group } of page.groups) {
        seen.add(group);
        await engine.pauseGroup(q, group);
      }
      cursor = page.cursor ?? undefined;
    } while (cursor !== undefined);
    expect([...seen].sort()).toEqual(expected.sort());
  });

  it('jobs that come and go while paging never hide one that stays (seeded random walk)', async () => {
    const { engine, q } = await setupQueue();
    await engine.pauseQueue(q);
    let seed = 7;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    let made = 0;
    const add = async (count: number) => {
      const jobs = Array.from({ length: count }, () => ({ id: `j${made++}`, group: `g${made % 37}` }));
      await engine.enqueueBatch(q, jobs);
    };
    for (let i = 0; i < 3; i++) await add(500);
    const live = new Set(Array.from({ length: made }, (_, i) => `j${i}`));
    const stays = new Set(live);
    const seen = new Set<string>();
    let cursor: string | undefined;
    do {
      // Limits change between pages, so pages are cut at other places than HSCAN's batches end.
      const page = await engine.listJobs(q, { limit: 1 + Math.floor(random() * 80), cursor });
      for (const job of page.jobs) seen.add(job.id);
      cursor = page.cursor ?? undefined;
      for (let op = Math.floor(random() * 12); op > 0; op--) {
        if (random() < 0.5) await add(1 + Math.floor(random() * 4));
        else {
          const gone = [...live][Math.floor(random() * live.size)]!;
          await engine.removeJob(q, gone);
          live.delete(gone);
          stays.delete(gone);
        }
      }
    } while (cursor !== undefined);
    expect([...stays].filter((id) => !seen.has(id))).toEqual([]);
  });
});

describe('cursors are validated', () => {
  const b64 = (value: unknown) => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');

  it('a malformed cursor, or one of another listing, is VALIDATION_FAILED', async () => {
    const { clock, engine, q } = await setupQueue({ concurrency: 5, maxAttempts: 1, keepFailed: 5 });
    await finishMany(engine, clock.advance, q, { count: 5, tie: 5, how: 'fail' });
    const failed = await engine.listJobs(q, { state: 'failed', limit: 2 });
    expect(failed.cursor).toMatch(/^[A-Za-z0-9_-]+$/);
    const bad = ['nope!', b64('not json'), b64(['failed', '12', 'x']), b64(['failed', 12]), b64(['waiting', 'x1']), b64(['groups', '1', '2'])];
    for (const cursor of [...bad, b64(['groups', '5'])]) {
      await rejectsWith(engine.listJobs(q, { state: 'failed', cursor }), 'VALIDATION_FAILED');
    }
    await rejectsWith(engine.listJobs(q, { state: 'completed', cursor: failed.cursor! }), 'VALIDATION_FAILED');
    await rejectsWith(engine.listGroups(q, { cursor: failed.cursor! }), 'VALIDATION_FAILED');
    await rejectsWith(engine.listGroups(q, { cursor: 'x'.repeat(4097) }), 'VALIDATION_FAILED');
    expect((await engine.listJobs(q, { state: 'failed', limit: 5, cursor: failed.cursor! })).jobs).toHaveLength(3);
  });
});
