// Reading groups: listGroups (state and job counts per group, cursor paging) and getGroup (one
// group's jobs in run order). Every test runs on its own queue against the real Redis.
import { describe, expect, it } from 'vitest';
import type { GroupSummary } from '../../src/core/engine/reads';
import type { Engine } from '../../src/core/engine';
import { rejectsWith, setupQueue, T0, testEngine } from '../helpers/engine';
import { uniqueName } from '../helpers/stack';

/** Every group of the queue, page by page until the cursor is null, sorted by name. */
async function allGroups(engine: Engine, q: string, limit = 50) {
  const groups: GroupSummary[] = [];
  const sizes: number[] = [];
  let cursor: string | undefined;
  do {
    const page = await engine.listGroups(q, { limit, cursor });
    groups.push(...page.groups);
    sizes.push(page.groups.length);
    cursor = page.cursor ?? undefined;
  } while (cursor !== undefined);
  return { groups: groups.sort((a, b) => (a.group < b.group ? -1 : 1)), sizes };
}

/** Leases a job of each of `groups` (their heads must be the oldest ready) and fails them with retry. */
async function holdGroups(engine: Engine, q: string, count: number) {
  const jobs = (await engine.reserve(q, count)).jobs;
  await engine.settle(q, jobs.map((job) => ({ kind: 'fail' as const, id: job.id, lease: job.lease.token, error: 'retry' })), 0);
  return jobs.map((job) => job.group);
}

describe('listGroups', () => {
  it('shows each group with its waiting and active jobs and its state', async () => {
    const { engine, q } = await setupQueue({ backoff: { delayMs: 60_000 } });
    await engine.enqueueBatch(q, [
      { group: 'active', data: 1 },
      { group: 'held', data: 2 },
      { group: 'active', data: 3 },
      { group: 'ready', data: 4 },
      { group: 'ready', data: 5 },
      { group: 'paused', data: 6 },
      { group: 'delayed-only', data: 7, delayMs: 1000 },
    ]);
    const [, held] = (await engine.reserve(q, 2)).jobs;
    await engine.fail(q, { id: held!.id, lease: held!.lease.token, error: 'boom' });
    await engine.pauseGroup(q, 'paused');
    const expected = [
      { group: 'active', waiting: 1, active: 1, state: 'active', concurrency: 1 },
      { group: 'held', waiting: 1, active: 0, state: 'held', concurrency: 1 },
      { group: 'paused', waiting: 1, active: 0, state: 'paused', concurrency: 1 },
      { group: 'ready', waiting: 2, active: 0, state: 'ready', concurrency: 1 },
    ];
    expect((await allGroups(engine, q)).groups).toEqual(expected);
    // A group's state is its own: pausing the queue does not change it.
    await engine.pauseQueue(q);
    expect((await allGroups(engine, q)).groups).toEqual(expected);
    // A group paused while its job is active says paused, and still counts the active job.
    await engine.pauseGroup(q, 'active');
    expect((await allGroups(engine, q)).groups[0]).toEqual({ group: 'active', waiting: 1, active: 1, state: 'paused', concurrency: 1 });
  });

  it('a group whose head is inside the ordering window is held, then ready', async () => {
    const { clock, engine, q } = await setupQueue({ orderingWindowMs: 2000 });
    await engine.enqueue(q, { group: 'g', data: null });
    expect((await engine.listGroups(q)).groups).toEqual([{ group: 'g', waiting: 1, active: 0, state: 'held', concurrency: 1 }]);
    clock.set(T0 + 2000);
    expect((await engine.listGroups(q)).groups).toEqual([{ group: 'g', waiting: 1, active: 0, state: 'ready', concurrency: 1 }]);
  });

  it('pages over many groups with a cursor: every group exactly once', async () => {
    const { engine, q } = await setupQueue({ concurrency: 40, backoff: { delayMs: 60_000 } });
    await engine.enqueueBatch(q, Array.from({ length: 90 }, (_, i) => ({ group: `g${String(i).padStart(2, '0')}`, data: i })));
    const held = await holdGroups(engine, q, 15); // g00..g14 held
    await engine.reserve(q, 20); // g15..g34 active
    const { groups, sizes } = await allGroups(engine, q, 7);
    expect(groups.map((group) => group.group)).toEqual(Array.from({ length: 90 }, (_, i) => `g${String(i).padStart(2, '0')}`));
    expect(sizes.every((size) => size <= 7)).toBe(true);
    const states = groups.map((group) => group.state);
    expect(states.filter((state) => state === 'held')).toHaveLength(held.length);
    expect(states.filter((state) => state === 'active')).toHaveLength(20);
    expect(states.filter((state) => state === 'ready')).toHaveLength(55);
  });

  it('an empty queue has no groups; bad paging and an unknown queue are rejected', async () => {
    const { engine, q } = await setupQueue();
    expect(await engine.listGroups(q)).toEqual({ groups: [], cursor: null });
    await rejectsWith(engine.listGroups(q, { limit: 0 }), 'VALIDATION_FAILED');
    await rejectsWith(engine.listGroups(q, { limit: 1001 }), 'VALIDATION_FAILED');
    await rejectsWith(engine.listGroups(uniqueName('q')), 'QUEUE_NOT_FOUND');
  });
});

describe('getGroup', () => {
  it('lists the jobs in the order they run, the leased one first', async () => {
    const { engine, q } = await setupQueue();
    await engine.enqueueBatch(q, [
      { id: 'first', group: 'g', orderMs: T0 - 100 },
      { id: 'late', group: 'g', orderMs: T0 + 100 },
      { id: 'same-a', group: 'g', orderMs: T0 },
      { id: 'same-b', group: 'g', orderMs: T0 },
      { id: 'elsewhere', group: 'h' },
      { id: 'not-yet', group: 'g', delayMs: 1000 },
    ]);
    await engine.reserve(q, 1);
    const view = await engine.getGroup(q, 'g');
    expect(view.group).toBe('g');
    expect(view.state).toBe('active');
    expect(view.jobs.map((job) => [job.id, job.state])).toEqual([
      ['first', 'active'],
      ['same-a', 'waiting'],
      ['same-b', 'waiting'],
      ['late', 'waiting'],
    ]);
    expect(view.jobs[1]).toEqual(await engine.getJob(q, 'same-a'));
  });

  it('shows the state of a ready, held and paused group', async () => {
    const { engine, q } = await setupQueue({ backoff: { delayMs: 60_000 } });
    await engine.enqueueBatch(q, [{ group: 'held' }, { group: 'ready' }, { group: 'paused' }]);
    await holdGroups(engine, q, 1);
    await engine.pauseGroup(q, 'paused');
    expect((await engine.getGroup(q, 'held')).state).toBe('held');
    expect((await engine.getGroup(q, 'ready')).state).toBe('ready');
    expect((await engine.getGroup(q, 'paused')).state).toBe('paused');
  });

  it('a group without jobs, or never seen, is GROUP_NOT_FOUND', async () => {
    const { engine, q } = await setupQueue({ keepCompleted: 10 });
    await engine.enqueue(q, { group: 'done' });
    const [job] = (await engine.reserve(q, 1)).jobs;
    await engine.complete(q, { id: job!.id, lease: job!.lease.token });
    await rejectsWith(engine.getGroup(q, 'done'), 'GROUP_NOT_FOUND');
    await rejectsWith(engine.getGroup(q, 'never'), 'GROUP_NOT_FOUND');
  });

  it('rejects a bad group name and an unknown queue', async () => {
    const { engine, q } = await setupQueue();
    await rejectsWith(engine.getGroup(q, ''), 'VALIDATION_FAILED');
    await rejectsWith(engine.getGroup(q, 'x'.repeat(257)), 'VALIDATION_FAILED');
    await rejectsWith(testEngine().getGroup(uniqueName('q'), 'g'), 'QUEUE_NOT_FOUND');
  });
});
