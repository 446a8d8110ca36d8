// The lifetime totals and histograms behind GET /metrics (src/lua/includes/totals.lua,
// src/core/engine/scrape.ts), on a Redis of this file's own (a scrape reads every queue of the
// registry): what each way a job moves counts, the wait and run buckets an injected clock puts
// them in, partitions, the bounded scrape and its copy, and the cost: counting takes no command.
import { describe, expect, it } from 'vitest';
import { countsOf, totalCalls } from '../../bench/lib/redis-stats';
import { type LeasedJob, spotOf } from '../../src/core/engine/leases';
import { HISTOGRAM_BOUNDS_MS, type PartFigures } from '../../src/core/engine/scrape';
import { createRedis } from '../../src/core/store/redis';
import { callScript } from '../../src/core/store/scripts';
import { scripts } from '../../src/lua/scripts.generated';
import { T0, usePrivateEngine } from '../helpers/engine';
import { uniqueName } from '../helpers/stack';

const ALL = { maxReads: 1000, freshMs: 0 };
const CALLBACK = 'http://127.0.0.1:9/outcomes';

const env = usePrivateEngine();

const ref = (job: LeasedJob) => ({ id: job.id, lease: job.lease.token });

async function newQueue(config: Record<string, unknown> = {}): Promise<string> {
  const q = uniqueName('tot');
  await env.engine.putQueue(q, { endpoint: 'http://127.0.0.1:9/jobs', concurrency: 100, ...config });
  return q;
}

async function figuresOf(q: string, options = ALL): Promise<PartFigures[]> {
  return (await env.engine.scrape(options)).filter((part) => part.queue === q);
}

/** The bucket of HISTOGRAM_BOUNDS_MS (or +Inf, the last) a value in ms falls in. */
const bucketOf = (ms: number) => {
  const at = HISTOGRAM_BOUNDS_MS.findIndex((bound) => ms <= bound);
  return at === -1 ? HISTOGRAM_BOUNDS_MS.length : at;
};
const onlyIn = (bucket: number, count: number) => HISTOGRAM_BOUNDS_MS.map((_, i) => (i === bucket ? count : 0)).concat(bucket === HISTOGRAM_BOUNDS_MS.length ? count : 0);

describe('what counts', () => {
  it('completed, failed, throttled and cancelled jobs, each wait and run in its bucket', async () => {
    env.clock.set(T0);
    const q = await newQueue();
    await env.engine.enqueueBatch(q, ['a', 'b', 'c', 'd'].map((id) => ({ id, group: id })));
    env.clock.advance(250);
    const { jobs } = await env.engine.reserve(q, 4);
    const [a, b, c, d] = jobs;
    env.clock.advance(40);
    await env.engine.settle(q, [{ kind: 'complete', ...ref(a!), spot: spotOf(a!) }], 0); // the lone path: its start told
    await env.engine.complete(q, ref(b!)); // a lease callback: settle reads the lease's deadline
    await env.engine.fail(q, { ...ref(c!), error: 'bad input', retry: false });
    await env.engine.settle(q, [{ kind: 'fail', ...ref(d!), error: 'slow down', status: 429, spot: spotOf(d!) }], 0);
    await env.engine.enqueue(q, { id: 'e', group: 'e', delayMs: 60_000 });
    await env.engine.cancelJob(q, 'e');
    expect((await env.engine.enqueue(q, { id: 'a', group: 'a' })).duplicate).toBe(true); // adds no job

    const [part] = await figuresOf(q);
    expect(part).toMatchObject({
      queue: q,
      partition: null,
      totals: { added: 5, completed: 2, failed: 1, retried: 0, cancelled: 1, throttled: 1, callbacksDelivered: 0, callbackAttemptsFailed: 0, callbacksAbandoned: 0 },
      live: 1, // d, held back by its 429
      active: 0,
      delayed: 0,
      groups: 1,
    });
    expect(part!.wait).toEqual({ counts: onlyIn(bucketOf(250), 4), sumMs: 1000 });
    expect(part!.run).toEqual({ counts: onlyIn(bucketOf(40), 4), sumMs: 160 });
  });

  it('a retry after a lease ran out: retried, its run up to the expiry, its wait from its runAt', async () => {
    env.clock.set(T0);
    const q = await newQueue({ maxAttempts: 2, backoff: { type: 'fixed', delayMs: 1000, jitter: false } });
    await env.engine.enqueue(q, { id: 'j', group: 'g' });
    await env.engine.reserve(q, 1); // waited 0 ms
    env.clock.advance(35_000); // timeoutMs 30 s + 5 s grace: the lease runs out
    await env.engine.tick(q);
    env.clock.advance(1000 + 3000); // the backoff, then 3 s more before the next lease
    await env.engine.tick(q);
    const { jobs } = await env.engine.reserve(q, 1);
    env.clock.advance(700);
    await env.engine.fail(q, { ...ref(jobs[0]!), error: 'boom' }); // the last attempt: failed for good

    const [part] = await figuresOf(q);
    expect(part!.totals).toMatchObject({ added: 1, retried: 1, failed: 1, completed: 0 });
    const wait = onlyIn(bucketOf(0), 1);
    wait[bucketOf(3000)]! += 1;
    expect(part!.wait).toEqual({ counts: wait, sumMs: 3000 });
    const run = onlyIn(bucketOf(35_000), 1);
    run[bucketOf(700)]! += 1;
    expect(part!.run).toEqual({ counts: run, sumMs: 35_700 });
  });

  it('outcome callbacks: delivered, failed attempts, abandoned after the last', async () => {
    env.clock.set(T0);
    const q = await newQueue({ callbackUrl: CALLBACK, keepCompleted: 10 });
    await env.engine.enqueueBatch(q, [{ id: 'ok', group: 'a' }, { id: 'lost', group: 'b' }]);
    const { jobs } = await env.engine.reserve(q, 2);
    const { outcomes } = await env.engine.settle(q, jobs.map((job) => ({ kind: 'complete' as const, ...ref(job) })), 0);
    const byId = new Map(outcomes.map((outcome) => [outcome.id, outcome]));
    await env.engine.settleOutcomes(q, [{ outcome: byId.get('ok')!, error: 'HTTP 503' }]);
    let lost = byId.get('lost')!;
    for (let n = 1; n <= 6; n++) {
      await env.engine.settleOutcomes(q, [{ outcome: lost, error: `HTTP 500: ${n}` }]);
      if (n === 6) break;
      env.clock.advance(3_600_000);
      const { outcomes: next } = await env.engine.tick(q);
      const again = next.find((outcome) => outcome.id === 'lost');
      if (again) lost = again;
      const ok = next.find((outcome) => outcome.id === 'ok');
      if (ok) await env.engine.settleOutcomes(q, [{ outcome: ok, error: '' }]);
    }
    const [part] = await figuresOf(q);
    expect(part!.totals).toMatchObject({ completed: 2, callbacksDelivered: 1, callbackAttemptsFailed: 7, callbacksAbandoned: 1 });
  });

  it("groups and ids named like the totals' fields count as any other: no name reaches a total", async () => {
    env.clock.set(T0);
    const q = await newQueue();
    const names = ['n:a', 'n:c', 'n:f', 'n:x', 'h:w', 'h:r', 'g:n:c', 'm:c:0'];
    await env.engine.enqueueBatch(q, names.map((name) => ({ id: name, group: name })));
    env.clock.advance(10);
    const { jobs } = await env.engine.reserve(q, names.length);
    env.clock.advance(20);
    await env.engine.settle(q, jobs.map((job, i) => (i % 2 === 0 ? { kind: 'complete' as const, ...ref(job) } : { kind: 'fail' as const, ...ref(job), error: 'x', retry: false })), 0);
    const [part] = await figuresOf(q);
    expect(part!.totals).toMatchObject({ added: 8, completed: 4, failed: 4, retried: 0, cancelled: 0 });
    expect(part!.wait).toEqual({ counts: onlyIn(bucketOf(10), 8), sumMs: 80 });
    expect(part!.run).toEqual({ counts: onlyIn(bucketOf(20), 8), sumMs: 160 });
    expect(part).toMatchObject({ live: 0, active: 0, groups: 0 });
  });

  it('a partitioned queue: figures per partition, each job counted in its own', async () => {
    env.clock.set(T0);
    const q = await newQueue({ partitions: 4 });
    await env.engine.enqueueBatch(q, Array.from({ length: 40 }, (_, i) => ({ id: `j${i}`, group: `g${i}` })));
    const { jobs } = await env.engine.reserve(q, 40);
    await env.engine.settle(q, jobs.map((job) => ({ kind: 'complete' as const, ...ref(job), spot: spotOf(job) })), 0);
    const parts = await figuresOf(q);
    expect(parts.map((part) => part.partition)).toEqual([0, 1, 2, 3]);
    expect(parts.reduce((sum, part) => sum + part.totals.completed, 0)).toBe(40);
    expect(parts.reduce((sum, part) => sum + part.totals.added, 0)).toBe(40);
    for (const part of parts) expect(part.totals.completed).toBeGreaterThan(0); // 40 groups spread over 4
  });
});

describe('the scrape', () => {
  /** Redis commands `run` causes (this Redis serves this file alone). */
  const commandsOf = async (run: () => Promise<unknown>) => totalCalls(await countsOf(env.admin, run));

  it('reads at most maxReads queues, those read longest ago first; the rest come from its copy', async () => {
    env.clock.set(T0 + 86_400_000);
    const queues = await Promise.all(Array.from({ length: 9 }, () => newQueue()));
    for (const q of queues) await env.engine.enqueue(q, { id: 'j', group: 'g' });
    const options = { maxReads: 4, freshMs: 10_000 };
    const seen = new Set<string>();
    let quiet = false;
    for (let round = 0; round < 20 && !quiet; round++) {
      env.clock.advance(1);
      const commands = await commandsOf(async () => {
        for (const part of await env.engine.scrape(options)) if (queues.includes(part.queue)) seen.add(part.queue);
      });
      // Read the copy (3), at most 4 queues (4 each), write the copy (3).
      expect(commands).toBeLessThanOrEqual(3 + 4 * 4 + 3);
      quiet = commands <= 3; // every queue read within freshMs: only the copy is read
    }
    expect(quiet).toBe(true);
    expect(seen.size).toBe(queues.length);
  });

  it("a counter never goes back: an older read stored after a newer one is not kept", async () => {
    env.clock.set(T0 + 2 * 86_400_000);
    const q = await newQueue();
    await env.engine.enqueue(q, { id: 'j', group: 'g' });
    const [before] = await figuresOf(q);
    const { jobs } = await env.engine.reserve(q, 1);
    await env.engine.complete(q, ref(jobs[0]!));
    env.clock.advance(1);
    const [after] = await figuresOf(q);
    expect(after!.totals.completed).toBe(1);
    // The first read, stored late (a slower scrape that overlapped): the copy keeps the newer.
    const redis = createRedis({ url: env.stack.restUrl, token: env.stack.restToken });
    await callScript({ redis, keyLocking: false }, scripts.totalsCache, {}, ['write', q, before!.v, before!.at + 5, JSON.stringify(before)]);
    const [kept] = await figuresOf(q, { maxReads: 0, freshMs: 0 });
    expect(kept!.totals.completed).toBe(1);
  });

  it('a deleted queue leaves the scrape and its copy', async () => {
    const q = await newQueue();
    expect(await figuresOf(q)).toHaveLength(1);
    await env.engine.deleteQueue(q);
    expect(await figuresOf(q)).toHaveLength(0);
    expect(await env.admin.call(['HEXISTS', 'gq:metrics', q])).toBe(0);
  });
});

describe('cost: counting rides on the one read and write of meta each call makes', () => {
  it('a lone job leased and completed by the dispatcher: the same commands as before the totals', async () => {
    env.clock.set(T0);
    const q = await newQueue({ keepCompleted: 0 });
    await env.engine.enqueue(q, { group: 'g' }); // an id of groupq's: its end is not remembered
    const { jobs } = await env.engine.reserve(q, 1);
    const counts = await countsOf(env.admin, () => env.engine.settle(q, [{ kind: 'complete', ...ref(jobs[0]!), spot: spotOf(jobs[0]!) }], 0));
    // EVALSHA; meta's HMGET, HSET and HDEL (the group's count); ZREMs of the lease and of the job
    // in its group; HDEL of the record. No read of the lease's deadline: the dispatcher told its start.
    expect(counts).toEqual({ evalsha: 1, hmget: 1, hset: 1, hdel: 2, zrem: 2 });
  });
});
