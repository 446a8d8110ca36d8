// Job TTL (docs/flow-control.md#job-ttl), on a test clock and a Redis of this file's own: a job
// not started by its deadline ends `expired` through the tick, or is held back (never leased)
// when it reaches its group's head first (a flow group's too, on a partitioned queue too, and
// with reservers and ticks racing); a job that started never expires; cancel and removal take it
// out of the `expiring` index, repair puts a lost entry back, deleting the queue deletes both
// keys; a publish token's jobs get the queue's publishTtlMs and may not send ttlMs; an expired
// job is counted, listed, kept, waited for, reported by its outcome callback and remembered by
// the dedup window; and a job without a TTL costs what it did.
import { describe, expect, it } from 'vitest';
import { countsOf, totalCalls } from '../../bench/lib/redis-stats';
import { type LeasedJob, spotOf } from '../../src/core/engine/leases';
import type { PartFigures } from '../../src/core/engine/scrape';
import { outcomeBody } from '../../src/core/push/outcome-callback';
import { queueKeys } from '../../src/core/store/keys';
import { rejectsWith, T0, usePrivateEngine } from '../helpers/engine';
import { uniqueName } from '../helpers/stack';

const env = usePrivateEngine();
const TTL = 10_000;
const CALLBACK = 'https://producer.example/outcomes';

const ref = (job: LeasedJob) => ({ id: job.id, lease: job.lease.token });

async function newQueue(config: Record<string, unknown> = {}): Promise<string> {
  env.clock.set(T0);
  const q = uniqueName('ttl');
  await env.engine.putQueue(q, { endpoint: 'http://127.0.0.1:9/jobs', keepFailed: 100, ...config });
  return q;
}

const expiring = async (q: string) => ((await env.admin.call(['ZRANGE', queueKeys(q).expiring, 0, -1])) as Buffer[]).map(String);
const ids = async (q: string, state: string) => (await env.engine.listJobs(q, { state })).jobs.map((job) => job.id);

describe('a job not started by its deadline', () => {
  it('ends expired through the tick: counted, listed, kept, in the totals; never leased', async () => {
    const q = await newQueue();
    await env.engine.enqueue(q, { id: 'late', group: 'g', ttlMs: TTL });
    await env.engine.enqueue(q, { id: 'plain', group: 'h' });
    expect(await expiring(q)).toEqual(['late g']);
    env.clock.advance(TTL - 1);
    await env.engine.tick(q);
    expect(await env.engine.getJob(q, 'late')).toMatchObject({ state: 'waiting', expiresAt: T0 + TTL }); // not yet
    env.clock.advance(1);
    await env.engine.tick(q);
    expect(await env.engine.getJob(q, 'late')).toMatchObject({ state: 'expired', expiresAt: T0 + TTL, finishedAt: T0 + TTL, attempts: 0 });
    expect(await expiring(q)).toEqual([]);
    expect((await env.engine.getQueue(q)).counts).toMatchObject({ waiting: 1, expired: 1, groups: 1 });
    expect(await ids(q, 'expired')).toEqual(['late']);
    // Only the job without a TTL is ever leased.
    expect((await env.engine.reserve(q, 10)).jobs.map((job) => job.id)).toEqual(['plain']);
    const [figures] = (await env.engine.scrape({ maxReads: 1000, freshMs: 0 })).filter((part: PartFigures) => part.queue === q);
    expect(figures!.totals).toMatchObject({ expired: 1, cancelled: 0, failed: 0 });
    // Kept like failed jobs (keepFailed), and deleted in bulk like them.
    expect(await env.engine.cleanJobs(q, { state: 'expired' })).toMatchObject({ count: 1 });
    await rejectsWith(env.engine.getJob(q, 'late'), 'JOB_NOT_FOUND');
  });

  it('reaching the head of its group after its deadline, it is expired, not leased; the group goes on', async () => {
    const q = await newQueue();
    await env.engine.enqueue(q, { id: 'first', group: 'g' });
    const [first] = (await env.engine.reserve(q, 1)).jobs;
    await env.engine.enqueue(q, { id: 'late', group: 'g', ttlMs: TTL });
    await env.engine.enqueue(q, { id: 'next', group: 'g' });
    env.clock.advance(TTL + 1);
    // The first job's completion offers `late`, whose deadline has passed: nothing is leased.
    const done = await env.engine.complete(q, { ...ref(first!), result: null }, 1);
    expect(done.next ?? []).toEqual([]);
    expect((await env.engine.reserve(q, 10)).jobs).toEqual([]);
    const tick = await env.engine.tick(q);
    expect(tick.readyNow).toBe(true);
    expect((await env.engine.getJob(q, 'late')).state).toBe('expired');
    expect((await env.engine.reserve(q, 10)).jobs.map((job) => job.id)).toEqual(['next']);
  });

  it('in a flow group (groupConcurrency 2): offered heads past their deadline are not leased; the group goes on', async () => {
    const q = await newQueue({ groupConcurrency: 2 });
    await env.engine.enqueue(q, { id: 'a', group: 'g', ttlMs: TTL });
    await env.engine.enqueue(q, { id: 'b', group: 'g', ttlMs: TTL });
    await env.engine.enqueue(q, { id: 'c', group: 'g' });
    env.clock.advance(TTL);
    expect((await env.engine.reserve(q, 10)).jobs).toEqual([]);
    await env.engine.tick(q);
    expect([(await env.engine.getJob(q, 'a')).state, (await env.engine.getJob(q, 'b')).state]).toEqual(['expired', 'expired']);
    expect((await env.engine.reserve(q, 10)).jobs.map((job) => job.id)).toEqual(['c']);
  });

  it('on a partitioned queue, each partition expires its own jobs', async () => {
    const q = await newQueue({ partitions: 4 });
    const groups = Array.from({ length: 12 }, (_, i) => `g${i}`);
    await env.engine.enqueueBatch(q, groups.map((group) => ({ id: `j-${group}`, group, ttlMs: TTL })));
    env.clock.advance(TTL);
    await env.engine.tick(q);
    const states = await Promise.all(groups.map(async (group) => (await env.engine.getJob(q, `j-${group}`)).state));
    expect(new Set(states)).toEqual(new Set(['expired']));
    expect((await env.engine.getQueue(q)).counts).toMatchObject({ waiting: 0, expired: 12 });
  });

  it('a delayed job whose deadline comes before its runAt expires without starting', async () => {
    const q = await newQueue();
    await env.engine.enqueue(q, { id: 'd', group: 'g', delayMs: 2 * TTL, ttlMs: TTL });
    env.clock.advance(TTL);
    await env.engine.tick(q);
    expect((await env.engine.getJob(q, 'd')).state).toBe('expired');
    env.clock.advance(2 * TTL);
    await env.engine.tick(q);
    expect((await env.engine.getJob(q, 'd')).state).toBe('expired');
    expect((await env.engine.getQueue(q)).counts).toMatchObject({ delayed: 0, waiting: 0, expired: 1 });
  });
});

describe('under concurrent reservers and ticks', () => {
  it('no job past its deadline is ever leased; every other job is', async () => {
    const q = await newQueue({ concurrency: 1000 });
    const late = Array.from({ length: 60 }, (_, i) => ({ id: `late-${i}`, group: `g${i % 20}`, ttlMs: TTL }));
    await env.engine.enqueueBatch(q, late);
    env.clock.advance(TTL);
    const fresh = Array.from({ length: 60 }, (_, i) => ({ id: `fresh-${i}`, group: `g${i % 20}` }));
    await env.engine.enqueueBatch(q, fresh);
    const leased: string[] = [];
    // Each reserver completes what it leased and leases the next ones in the same call (a drain).
    const reserver = async () => {
      let jobs: LeasedJob[] = [];
      for (let round = 0; round < 40; round++) {
        ({ jobs } = await env.engine.settle(q, jobs.map((job) => ({ kind: 'complete' as const, ...ref(job) })), 5));
        leased.push(...jobs.map((job) => job.id));
      }
      await env.engine.settle(q, jobs.map((job) => ({ kind: 'complete' as const, ...ref(job) })), 0);
    };
    const ticker = async () => {
      for (let round = 0; round < 10; round++) await env.engine.tick(q);
    };
    await Promise.all([reserver(), reserver(), reserver(), ticker(), ticker()]);
    // Whatever the race left: ticks and drains until nothing is left to do.
    for (let round = 0; round < 20; round++) {
      await env.engine.tick(q);
      const { jobs } = await env.engine.reserve(q, 1000);
      leased.push(...jobs.map((job) => job.id));
      await env.engine.settle(q, jobs.map((job) => ({ kind: 'complete' as const, ...ref(job) })), 0);
    }
    expect(leased.filter((id) => id.startsWith('late-'))).toEqual([]);
    expect((await env.engine.getQueue(q)).counts).toMatchObject({ expired: 60, waiting: 0 });
    expect(leased.filter((id) => id.startsWith('fresh-')).sort()).toEqual(fresh.map((job) => job.id).sort());
  });
});

describe('a job that started', () => {
  it('does not expire: not while leased, nor when it waits for its retry', async () => {
    const q = await newQueue({ maxAttempts: 3, backoff: { type: 'fixed', delayMs: 1000, jitter: false } });
    await env.engine.enqueue(q, { id: 'j', group: 'g', ttlMs: TTL });
    const [job] = (await env.engine.reserve(q, 1)).jobs;
    expect(await expiring(q)).toEqual([]); // its start took it out of the index
    env.clock.advance(TTL + 1);
    await env.engine.tick(q);
    expect((await env.engine.getJob(q, 'j')).state).toBe('active');
    expect(await env.engine.getJob(q, 'j')).not.toHaveProperty('expiresAt');
    await env.engine.fail(q, { ...ref(job!), error: 'boom' });
    env.clock.advance(1000);
    await env.engine.tick(q);
    const [again] = (await env.engine.reserve(q, 1)).jobs;
    expect(again?.id).toBe('j');
  });
});

describe('leaving before the deadline', () => {
  it('cancel and removal take the job out of the index', async () => {
    const q = await newQueue();
    await env.engine.enqueue(q, { id: 'a', group: 'g', ttlMs: TTL });
    await env.engine.enqueue(q, { id: 'b', group: 'g', ttlMs: TTL });
    await env.engine.enqueue(q, { id: 'c', group: 'h', delayMs: 60_000, ttlMs: TTL });
    expect((await expiring(q)).sort()).toEqual(['a g', 'b g', 'c h']);
    await env.engine.cancelJob(q, 'a');
    await env.engine.removeJob(q, 'b');
    await env.engine.cancelJob(q, 'c');
    expect(await expiring(q)).toEqual([]);
    env.clock.advance(TTL);
    await env.engine.tick(q);
    expect((await env.engine.getQueue(q)).counts).toMatchObject({ cancelled: 2, expired: 0 });
  });
});

describe('repair', () => {
  it('brings back a lost entry of `expiring` and a kept expired job lost from `expired`', async () => {
    const q = await newQueue();
    const k = queueKeys(q);
    await env.engine.enqueue(q, { id: 'gone', group: 'g', ttlMs: TTL });
    await env.engine.enqueue(q, { id: 'lost', group: 'h', ttlMs: 2 * TTL });
    env.clock.advance(TTL);
    await env.engine.tick(q);
    await env.admin.call(['ZREM', k.expired, 'gone']);
    await env.admin.call(['ZREM', k.expiring, 'lost h']);
    expect(await env.engine.repairQueue(q)).toMatchObject({ reindexed: 2 });
    expect(await ids(q, 'expired')).toEqual(['gone']);
    expect(await expiring(q)).toEqual(['lost h']);
    env.clock.advance(TTL);
    await env.engine.tick(q);
    expect((await env.engine.getJob(q, 'lost')).state).toBe('expired');
  });
});

describe('deleting the queue', () => {
  it('deletes its `expiring` and `expired` keys with the rest', async () => {
    const q = await newQueue();
    await env.engine.enqueue(q, { id: 'a', group: 'g', ttlMs: TTL });
    await env.engine.enqueue(q, { id: 'b', group: 'h', ttlMs: 2 * TTL });
    env.clock.advance(TTL);
    await env.engine.tick(q);
    const keys = async () => ((await env.admin.call(['KEYS', `${queueKeys(q).prefix.replace(/[*?[\]\\]/g, '\\$&')}*`])) as Buffer[]).map(String);
    expect(await keys()).toEqual(expect.arrayContaining([queueKeys(q).expiring, queueKeys(q).expired]));
    await env.engine.deleteQueue(q);
    expect(await keys()).toEqual([]);
  });
});

describe('publish tokens', () => {
  it("a published job gets the queue's publishTtlMs; a publish token sending ttlMs gets 403 FIELD_NOT_ALLOWED", async () => {
    const q = await newQueue({ publishTokens: ['publish-token-ttl-0001'], publishTtlMs: TTL });
    const publisher = { config: await env.engine.getStoredConfig(q), client: 'c1' };
    await env.engine.enqueueAndReserve(q, { id: 'x', group: 'g' }, 0, undefined, publisher);
    expect(await expiring(q)).toEqual(['pub:x g']);
    await rejectsWith(env.engine.enqueueAndReserve(q, { id: 'y', group: 'g', ttlMs: 1000 }, 0, undefined, publisher), 'FIELD_NOT_ALLOWED');
    // The admin's jobs on that queue have no TTL unless they ask.
    await env.engine.enqueue(q, { id: 'mine', group: 'h' });
    env.clock.advance(TTL);
    await env.engine.tick(q);
    expect((await env.engine.getJob(q, 'pub:x')).state).toBe('expired');
    expect((await env.engine.getJob(q, 'mine')).state).toBe('waiting');
  });

  it('publishTtlMs is bounded: at most 30 days', async () => {
    const q = await newQueue();
    await rejectsWith(env.engine.patchQueue(q, { publishTtlMs: 30 * 86_400_000 + 1 }), 'VALIDATION_FAILED');
    await rejectsWith(env.engine.enqueue(q, { group: 'g', ttlMs: 0 }), 'VALIDATION_FAILED');
  });
});

describe('telling the producer', () => {
  it('the outcome callback says expired', async () => {
    const q = await newQueue({ callbackUrl: CALLBACK });
    await env.engine.enqueue(q, { id: 'j', group: 'g', ttlMs: TTL });
    env.clock.advance(TTL);
    const { outcomes } = await env.engine.tick(q);
    expect(outcomes).toHaveLength(1);
    expect(JSON.parse(outcomeBody(outcomes[0]!))).toMatchObject({ id: 'j', queue: q, group: 'g', state: 'expired', attempts: 0 });
  });

  it('a wait for the job ends when it expires', async () => {
    const q = await newQueue();
    await env.engine.enqueue(q, { id: 'j', group: 'g', ttlMs: TTL });
    const waited = env.engine.waitForJob(q, 'j', { waitMs: '20000' });
    env.clock.advance(TTL);
    await env.engine.tick(q);
    expect((await waited).state).toBe('expired');
  });

  it('an expired id the producer named is remembered as expired by the dedup window', async () => {
    const q = await newQueue({ keepFailed: 0 });
    await env.engine.enqueue(q, { id: 'named', group: 'g', ttlMs: TTL });
    env.clock.advance(TTL);
    await env.engine.tick(q);
    expect(await env.engine.enqueue(q, { id: 'named', group: 'g' })).toMatchObject({ id: 'named', state: 'expired', duplicate: true });
  });
});

describe('what a TTL costs', () => {
  /** Redis commands of `run` (scripts' own included). */
  const commandsOf = async (run: () => Promise<unknown>) => totalCalls(await countsOf(env.admin, run));

  it('a job without a TTL: the same commands on a queue that has TTL jobs as on one that never had', async () => {
    const plain = await newQueue();
    const used = await newQueue();
    // Each queue's first enqueue counts its jobs once (quota.lua): both have had one.
    await env.engine.enqueue(plain, { group: 'other', delayMs: 60_000 });
    await env.engine.enqueue(used, { group: 'other', delayMs: 60_000, ttlMs: TTL });
    const lone = async (q: string) => {
      let leased: LeasedJob | undefined;
      const enqueue = await commandsOf(async () => (leased = (await env.engine.enqueueAndReserve(q, { group: 'g' }, 1)).leased[0]));
      const settle = await commandsOf(() => env.engine.settle(q, [{ kind: 'complete', ...ref(leased!), spot: spotOf(leased!) }], 1));
      return { enqueue, settle };
    };
    // docs/cost.md's lone job: an enqueue of 5 commands, leased solo, and a completion of 6 (the
    // queue's earlier timer, the delayed job's, spares both the due index's ZADD).
    await lone(plain); // each script loaded once (a first EVALSHA of a script is NOSCRIPT, then EVAL)
    expect(await lone(plain)).toEqual({ enqueue: 5, settle: 6 });
    expect(await lone(used)).toEqual(await lone(plain));
  });

  it('a TTL job: one ZADD when enqueued, one ZREM when it starts', async () => {
    const q = await newQueue();
    await env.engine.enqueue(q, { group: 'warm' }); // the queue's first enqueue counts its jobs once
    const plain = await commandsOf(() => env.engine.enqueue(q, { group: 'a' }));
    const ttl = await commandsOf(() => env.engine.enqueue(q, { group: 'b', ttlMs: TTL }));
    expect(ttl - plain).toBe(1);
    await env.engine.reserve(q, 1); // warm (the oldest)
    const startPlain = await commandsOf(() => env.engine.reserve(q, 1));
    const startTtl = await commandsOf(() => env.engine.reserve(q, 1));
    expect(startTtl - startPlain).toBe(1);
  });
});
