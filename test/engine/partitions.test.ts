// Partitioned queues on one database (docs/scaling-out.md#partitioned-queues): a queue's groups
// spread over its partitions by fnv1a32(group) % partitions, each partition its own hash tag,
// and everything that reads the queue sees all of them. An engine that has never seen the queue
// (another isolate) learns its count from the first refusal; one that believes a count of a queue
// deleted and created again with another is corrected before it writes.
import { describe, expect, it, onTestFinished } from 'vitest';
import type { Engine } from '../../src/core/engine';
import { fnv1a32, partitionOf } from '../../src/core/store/partitions';
import { T0, rejectsWith, testClock, testEngine } from '../helpers/engine';
import { adminClient, uniqueName } from '../helpers/stack';

const ENDPOINT = 'http://127.0.0.1:9/jobs';

async function partitioned(partitions: number, config: Record<string, unknown> = {}) {
  const clock = testClock();
  const engine = testEngine(clock);
  const q = uniqueName('part');
  await engine.putQueue(q, { endpoint: ENDPOINT, partitions, concurrency: 1000, keepCompleted: 1000, ...config });
  onTestFinished(() => engine.deleteQueue(q).catch(() => undefined));
  return { clock, engine, q };
}

/** The keys Redis holds for hash tag `{tag}`. */
async function keysOf(tag: string): Promise<string[]> {
  const admin = adminClient();
  try {
    return ((await admin.call(['KEYS', `gq:{${tag}}:*`])) as unknown[]).map(String).sort();
  } finally {
    admin.close();
  }
}

const groupsOf = (n: number) => Array.from({ length: n }, (_, g) => `tenant-${g}`);

async function drainAll(engine: Engine, q: string): Promise<string[]> {
  const order: string[] = [];
  for (;;) {
    const { jobs } = await engine.reserve(q, 50);
    if (jobs.length === 0) return order;
    for (const job of jobs) {
      order.push(job.id);
      await engine.complete(q, { id: job.id, lease: job.lease.token });
    }
  }
}

describe('partitioned queues', () => {
  it('matches the documented hash: fnv1a32 test vectors, and the partition of a group', () => {
    expect(fnv1a32('')).toBe(0x811c9dc5);
    expect(fnv1a32('a')).toBe(0xe40c292c);
    expect(fnv1a32('foobar')).toBe(0xbf9cf968);
    expect(partitionOf('tenant-1', 8)).toBe(fnv1a32('tenant-1') % 8);
    expect(partitionOf('anything', 1)).toBe(0);
  });

  it('spreads groups over their partitions: each group in fnv1a32(group) % P, the root holding only the config', async () => {
    const { engine, q } = await partitioned(4);
    const groups = groupsOf(40);
    const jobs = groups.flatMap((group) => [0, 1, 2].map((n) => ({ id: `${group}-${n}`, group, data: n })));
    const results = await engine.enqueueBatch(q, jobs);
    expect(results.map((r) => r.id)).toEqual(jobs.map((job) => job.id));
    expect(results.every((r) => r.state === 'waiting')).toBe(true);

    for (let p = 0; p < 4; p++) {
      const keys = await keysOf(`${q}:${p}`);
      const mine = groups.filter((group) => fnv1a32(group) % 4 === p);
      expect(keys.filter((key) => key.includes(':g:'))).toEqual(mine.map((group) => `gq:{${q}:${p}}:g:${group}`).sort());
    }
    expect(await keysOf(q)).toEqual([`gq:{${q}}:meta`]);
    const info = await engine.getQueue(q);
    expect(info.config).toMatchObject({ partitions: 4, concurrency: 1000, keepCompleted: 1000 });
    expect(info.counts).toMatchObject({ waiting: 120, groups: 40, active: 0 });
  });

  it('keeps each group in order and ends every job once, through reserve and complete across partitions', async () => {
    const { engine, q } = await partitioned(8);
    const groups = groupsOf(30);
    const jobs = groups.flatMap((group) => [0, 1, 2, 3].map((n) => ({ id: `${group}-${n}`, group, data: n, orderMs: T0 - 10 + n })));
    await engine.enqueueBatch(q, jobs);
    const order = await drainAll(engine, q);
    expect([...order].sort()).toEqual(jobs.map((job) => job.id).sort());
    for (const group of groups) expect(order.filter((id) => id.startsWith(`${group}-`))).toEqual([0, 1, 2, 3].map((n) => `${group}-${n}`));
    expect((await engine.getQueue(q)).counts).toMatchObject({ waiting: 0, active: 0, completed: 120 });
  });

  it('finds a job by id in any partition, from an engine that never saw the queue; ids it makes hash to their partition', async () => {
    const { engine, q } = await partitioned(8);
    const [made] = await engine.enqueueBatch(q, [{ group: 'g1', data: 1 }]);
    expect(fnv1a32(made!.id) % 8).toBe(partitionOf('g1', 8));
    await engine.enqueue(q, { id: 'mine', group: 'g2', data: 2 });
    const stranger = testEngine();
    expect(await stranger.getJob(q, made!.id)).toMatchObject({ id: made!.id, queue: q, group: 'g1', state: 'waiting' });
    expect(await stranger.getJob(q, 'mine')).toMatchObject({ id: 'mine', queue: q, group: 'g2' });
    await rejectsWith(stranger.getJob(q, 'nobody'), 'JOB_NOT_FOUND');
    // Writes by id too: a cancel reaches the partition that holds the job.
    expect(await testEngine().cancelJob(q, 'mine')).toMatchObject({ id: 'mine', state: 'cancelled' });
    expect((await engine.getJob(q, 'mine')).state).toBe('cancelled');
  });

  it('lists every job and every group across partitions, page by page, each once', async () => {
    const { engine, q } = await partitioned(4);
    const jobs = groupsOf(23).flatMap((group) => [0, 1].map((n) => ({ id: `${group}-${n}`, group, data: n })));
    await engine.enqueueBatch(q, jobs);
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await testEngine().listJobs(q, { state: 'waiting', limit: 7, ...(cursor ? { cursor } : {}) });
      expect(page.jobs.length).toBeLessThanOrEqual(7);
      seen.push(...page.jobs.map((job) => job.id));
      cursor = page.cursor ?? undefined;
    } while (cursor);
    expect(seen.sort()).toEqual(jobs.map((job) => job.id).sort());

    const groups: string[] = [];
    cursor = undefined;
    do {
      const page = await engine.listGroups(q, { limit: 5, ...(cursor ? { cursor } : {}) });
      groups.push(...page.groups.map((group) => group.group));
      cursor = page.cursor ?? undefined;
    } while (cursor);
    expect(groups.sort()).toEqual(groupsOf(23).sort());
    // One group's listing reads its partition only, with a plain cursor.
    const inGroup = await engine.listJobs(q, { state: 'waiting', group: 'tenant-3' });
    expect(inGroup.jobs.map((job) => job.id)).toEqual(['tenant-3-0', 'tenant-3-1']);
    await rejectsWith(engine.listJobs(q, { cursor: 'bm90IGEgY3Vyc29y' }), 'VALIDATION_FAILED');
  });

  it('splits concurrency over partitions: never more in flight than the queue allows, every partition served', async () => {
    const { engine, q } = await partitioned(4, { concurrency: 6 });
    await engine.enqueueBatch(q, groupsOf(40).map((group) => ({ id: group, group, data: 0 })));
    const { jobs } = await engine.reserve(q, 100);
    expect(jobs).toHaveLength(6); // shares 2, 2, 1, 1
    expect(new Set(jobs.map((job) => job.tag)).size).toBe(4);
    expect((await engine.reserve(q, 10)).jobs).toHaveLength(0);
    expect(jobs.every((job) => job.lease.token.startsWith(`${job.tag.split(':')[1]}.`))).toBe(true);
  });

  it('refuses a config whose limits cannot be shared, and a change of partitions, writing nothing', async () => {
    const engine = testEngine();
    const q = uniqueName('part');
    await expect(engine.putQueue(q, { endpoint: ENDPOINT, partitions: 8, concurrency: 4 })).rejects.toMatchObject({
      code: 'VALIDATION_FAILED',
      details: [expect.objectContaining({ path: 'concurrency' })],
    });
    await rejectsWith(engine.getQueue(q), 'QUEUE_NOT_FOUND');
    await engine.putQueue(q, { endpoint: ENDPOINT, partitions: 4 });
    onTestFinished(() => engine.deleteQueue(q).catch(() => undefined));
    await expect(engine.putQueue(q, { endpoint: ENDPOINT, partitions: 2 })).rejects.toMatchObject({
      code: 'VALIDATION_FAILED',
      message: expect.stringContaining('fixed when the queue was created (it has 4)'),
    });
    await expect(engine.putQueue(q, { endpoint: ENDPOINT })).rejects.toMatchObject({ code: 'VALIDATION_FAILED' });
    expect((await engine.getQueue(q)).config.partitions).toBe(4);
  });

  it('corrects an engine that believes the count of a queue deleted and created again with another', async () => {
    const { engine, q } = await partitioned(8);
    const believer = testEngine();
    await believer.enqueue(q, { id: 'a', group: 'g', data: 1 });
    await engine.deleteQueue(q);
    await engine.putQueue(q, { endpoint: ENDPOINT, partitions: 3 });
    // The believer still thinks 8: its enqueue is refused before any write, then routed by 3.
    await believer.enqueueBatch(q, groupsOf(12).map((group) => ({ id: group, group, data: 0 })));
    for (const group of groupsOf(12)) {
      const job = await engine.getJob(q, group);
      expect(job.group).toBe(group);
      expect(await keysOf(`${q}:${partitionOf(group, 3)}`)).toContain(`gq:{${q}:${partitionOf(group, 3)}}:g:${group}`);
    }
    await engine.deleteQueue(q);
    await engine.putQueue(q, { endpoint: ENDPOINT });
    // Believing 3 of a queue of one: its partitions are gone, so it learns 1.
    await believer.enqueue(q, { id: 'b', group: 'g', data: 1 });
    expect((await engine.getQueue(q)).counts.waiting).toBe(1);
  });

  it('deletes every partition with the queue', async () => {
    const { engine, q } = await partitioned(4);
    await engine.enqueueBatch(q, groupsOf(10).map((group) => ({ group, data: 0 })));
    await engine.deleteQueue(q);
    for (const tag of [q, `${q}:0`, `${q}:1`, `${q}:2`, `${q}:3`]) expect(await keysOf(tag)).toEqual([]);
  });

  it('sums metrics, counts and bulk actions over partitions', async () => {
    const { engine, q } = await partitioned(4, { maxAttempts: 1, keepFailed: 100 });
    await engine.enqueueBatch(q, groupsOf(12).map((group) => ({ id: group, group, data: 0 })));
    for (;;) {
      const { jobs } = await engine.reserve(q, 20);
      if (jobs.length === 0) break;
      for (const job of jobs) await engine.fail(q, { id: job.id, lease: job.lease.token, error: 'no' });
    }
    expect((await engine.getQueue(q)).counts.failed).toBe(12);
    const minute = (await engine.getMinutes(q)).at(-1)!;
    expect(minute.failed).toBe(12);
    expect(await engine.retryJobs(q, { state: 'failed' })).toEqual({ count: 12, done: true });
    expect((await engine.getQueue(q)).counts).toMatchObject({ waiting: 12, failed: 0 });
  });

  it('keeps repeats, pause and group limits working per partition', async () => {
    const { clock, engine, q } = await partitioned(4);
    await engine.putRepeat(q, 'r', { group: 'tenant-1', every: 1000 });
    await engine.putRepeat(q, 'r', { group: 'tenant-2', every: 1000 }); // moved: one repeat per key
    expect((await engine.listRepeats(q)).map((r) => [r.key, r.group])).toEqual([['r', 'tenant-2']]);
    clock.set(T0 + 1000);
    await engine.tick(q);
    expect((await engine.listJobs(q, { state: 'waiting', group: 'tenant-2' })).jobs).toHaveLength(1);
    await engine.deleteRepeat(q, 'r');
    await rejectsWith(engine.deleteRepeat(q, 'r'), 'REPEAT_NOT_FOUND');

    await engine.pauseQueue(q);
    await engine.enqueue(q, { group: 'tenant-5', data: 0 });
    expect((await engine.reserve(q, 10)).jobs).toHaveLength(0);
    expect((await engine.getQueue(q)).paused).toBe(true);
    await engine.resumeQueue(q);
    await engine.pauseGroup(q, 'tenant-2');
    expect((await engine.reserve(q, 10)).jobs.map((job) => job.group)).toEqual(['tenant-5']);
    expect((await engine.getGroup(q, 'tenant-2')).state).toBe('paused');
    expect(await engine.setGroupLimits(q, 'tenant-9', { concurrency: 3 })).toEqual({ group: 'tenant-9', limits: { concurrency: 3 } });
  });

  it("records outcome callbacks in the job's partition, for the queue by its name", async () => {
    const { engine, q } = await partitioned(4, { callbackUrl: 'https://producer.example/outcomes' });
    await engine.enqueue(q, { id: 'o', group: 'tenant-7', data: 1 });
    const [job] = (await engine.reserve(q, 1)).jobs;
    const done = await engine.complete(q, { id: 'o', lease: job!.lease.token, result: { ok: true } });
    expect(done.tag).toBe(`${q}:${partitionOf('tenant-7', 4)}`);
    expect(done.outcomes).toEqual([expect.objectContaining({ queue: q, tag: done.tag, id: 'o', record: expect.objectContaining({ s: 'completed', g: 'tenant-7' }) })]);
    await engine.settleOutcomes(done.tag, [{ outcome: done.outcomes[0]!, error: '' }]);
    expect((await engine.getJob(q, 'o')).outcome).toMatchObject({ state: 'delivered', attempts: 1 });
  });

  it('keeps names that look like fields or tags apart: each group in its partition, each id found', async () => {
    const { engine, q } = await partitioned(4);
    const names = ['config', 'partitions', 'move', 'g:x', 'l:x', 'f:x', '0', '59', 'a:b:c', '{x}', 'x y', `gq:{${q}:1}:meta`, `${q}:1`, 'at 1', 'to 1'];
    await engine.enqueueBatch(q, names.map((name) => ({ id: name.replace(/ /g, '_'), group: name, data: name })));
    for (const name of names) {
      const job = await testEngine().getJob(q, name.replace(/ /g, '_'));
      expect(job).toMatchObject({ group: name, data: name, state: 'waiting' });
      expect(await keysOf(`${q}:${partitionOf(name, 4)}`)).toContain(`gq:{${q}:${partitionOf(name, 4)}}:g:${name}`);
    }
    expect((await engine.getQueue(q)).counts).toMatchObject({ waiting: names.length, groups: names.length });
    expect((await engine.listPartitions(q)).map((p) => p.partition)).toEqual([0, 1, 2, 3]);
  });
});
