// Queue administration: create/replace, read, list, count, delete, pause and resume (the queue
// or one group). Every test runs on its own queue against the real Redis behind the bridge.
import { afterAll, describe, expect, it, onTestFinished } from 'vitest';
import { createEngine } from '../../src/core/engine';
import { createRedis } from '../../src/core/store/redis';
import { T0, rejectsWith, setupQueue, testEngine } from '../helpers/engine';
import { adminClient, stack, uniqueName } from '../helpers/stack';
import { CONFIG_DEFAULTS } from '../helpers/config-defaults';

const ENDPOINT = 'http://127.0.0.1:9/jobs';
const DEFAULTS = { endpoint: ENDPOINT, ...CONFIG_DEFAULTS };
const NO_COUNTS = { waiting: 0, delayed: 0, active: 0, completed: 0, failed: 0, cancelled: 0, expired: 0, groups: 0 };

const admin = adminClient();
afterAll(() => admin.close());

/** Every key under the queue's hash tag, found with SCAN on the raw Redis. */
async function keysOf(q: string): Promise<string[]> {
  const keys: string[] = [];
  let cursor = '0';
  do {
    const [next, batch] = (await admin.call(['SCAN', cursor, 'MATCH', `gq:{${q}}:*`, 'COUNT', 1000])) as [Buffer, Buffer[]];
    cursor = next.toString();
    keys.push(...batch.map(String));
  } while (cursor !== '0');
  return keys;
}

describe('putQueue', () => {
  it('creates a queue with the documented defaults', async () => {
    const engine = testEngine();
    const q = uniqueName('q');
    onTestFinished(() => engine.deleteQueue(q).catch(() => undefined));
    const info = await engine.putQueue(q, { endpoint: ENDPOINT });
    expect(info).toEqual({ name: q, paused: false, config: DEFAULTS, counts: NO_COUNTS });
    expect(await engine.getQueue(q)).toEqual(info);
  });

  it('replaces the whole config: omitted fields take their defaults again, jobs stay', async () => {
    const { engine, q } = await setupQueue({
      concurrency: 3,
      keepCompleted: 5,
      backoff: { type: 'fixed', delayMs: 50 },
      allowedOrigins: ['https://app.example'],
      publishTokens: ['p'.repeat(16)],
    });
    expect((await engine.getQueue(q)).config).toMatchObject({
      concurrency: 3,
      keepCompleted: 5,
      backoff: { type: 'fixed', delayMs: 50, maxDelayMs: 3_600_000, jitter: true },
      allowedOrigins: ['https://app.example'],
      publishTokens: 1,
    });
    await engine.enqueue(q, { group: 'g', data: 1 });
    const replaced = await engine.putQueue(q, { endpoint: ENDPOINT });
    expect(replaced.config).toEqual(DEFAULTS);
    expect(replaced.counts).toMatchObject({ waiting: 1, groups: 1 });
  });

  it('shows publish tokens as a count, never their values', async () => {
    const tokens = ['secret-token-aaaaaaaaaa', 'secret-token-bbbbbbbbbb'];
    const { engine, q } = await setupQueue({ publishTokens: tokens });
    const info = await engine.getQueue(q);
    expect(info.config.publishTokens).toBe(2);
    const listed = (await engine.listQueues()).find((entry) => entry.name === q);
    for (const shown of [info, await engine.putQueue(q, { endpoint: ENDPOINT, publishTokens: tokens }), listed]) {
      expect(JSON.stringify(shown)).not.toMatch(/secret-token/);
    }
  });

  describe('endpoint', () => {
    it.each(['https://jobs.example/run', 'http://127.0.0.1:8080/jobs', 'http://localhost/jobs', 'http://[::1]:3000/'])(
      'accepts %s when http on loopback is allowed',
      async (endpoint) => {
        const { engine, q } = await setupQueue();
        expect((await engine.putQueue(q, { endpoint })).config.endpoint).toBe(endpoint);
      },
    );

    it.each(['http://jobs.example/run', 'http://127.0.0.1.nip.io/', 'ftp://127.0.0.1/jobs', 'not a url', '/jobs'])(
      'rejects %s',
      async (endpoint) => {
        const { engine, q } = await setupQueue();
        await rejectsWith(engine.putQueue(q, { endpoint }), 'VALIDATION_FAILED');
        expect((await engine.getQueue(q)).config.endpoint).toBe(ENDPOINT);
      },
    );

    it('accepts only https when the deployment does not allow http on loopback', async () => {
      const { restUrl, restToken } = stack();
      const strict = createEngine({ redis: createRedis({ url: restUrl, token: restToken }), allowHttpLoopback: false });
      const q = uniqueName('q');
      onTestFinished(() => strict.deleteQueue(q).catch(() => undefined));
      await rejectsWith(strict.putQueue(q, { endpoint: 'http://127.0.0.1:8080/jobs' }), 'VALIDATION_FAILED');
      await rejectsWith(strict.putQueue(q, { endpoint: 'http://localhost/jobs' }), 'VALIDATION_FAILED');
      await rejectsWith(strict.getQueue(q), 'QUEUE_NOT_FOUND');
      expect((await strict.putQueue(q, { endpoint: 'https://jobs.example/run' })).config.endpoint).toBe('https://jobs.example/run');
    });
  });

  // One invalid field of each kind: the put fails whole, a new queue is not created and an
  // existing one keeps its config.
  it.each<[string, unknown]>([
    ['no endpoint', { concurrency: 2 }],
    ['a non-string endpoint', { endpoint: 42 }],
    ['concurrency 0', { endpoint: ENDPOINT, concurrency: 0 }],
    ['concurrency 1001', { endpoint: ENDPOINT, concurrency: 1001 }],
    ['a fractional concurrency', { endpoint: ENDPOINT, concurrency: 2.5 }],
    ['concurrency as a string', { endpoint: ENDPOINT, concurrency: '10' }],
    ['timeoutMs below 100', { endpoint: ENDPOINT, timeoutMs: 99 }],
    ['maxAttempts 0', { endpoint: ENDPOINT, maxAttempts: 0 }],
    ['an unknown backoff type', { endpoint: ENDPOINT, backoff: { type: 'linear' } }],
    ['a negative backoff delay', { endpoint: ENDPOINT, backoff: { delayMs: -1 } }],
    ['an unknown backoff field', { endpoint: ENDPOINT, backoff: { factor: 3 } }],
    ['a negative orderingWindowMs', { endpoint: ENDPOINT, orderingWindowMs: -1 }],
    ['a negative keepCompleted', { endpoint: ENDPOINT, keepCompleted: -1 }],
    ['a fractional keepFailed', { endpoint: ENDPOINT, keepFailed: 1.5 }],
    ['maxPayloadBytes 1', { endpoint: ENDPOINT, maxPayloadBytes: 1 }],
    ['maxPayloadBytes over 1 MiB', { endpoint: ENDPOINT, maxPayloadBytes: 1_048_577 }],
    ['an origin with a path', { endpoint: ENDPOINT, allowedOrigins: ['https://app.example/'] }],
    ['a wildcard origin', { endpoint: ENDPOINT, allowedOrigins: ['*'] }],
    ['a publish token shorter than 16', { endpoint: ENDPOINT, publishTokens: ['short'] }],
    ['101 publish tokens', { endpoint: ENDPOINT, publishTokens: Array.from({ length: 101 }, (_, i) => `token-${i}`.padEnd(16, 'x')) }],
    ['an unknown field', { endpoint: ENDPOINT, priority: 1 }],
    ['a config that is not an object', 'https://jobs.example'],
  ])('rejects %s with VALIDATION_FAILED and writes nothing', async (_label, input) => {
    const engine = testEngine();
    const fresh = uniqueName('q');
    await rejectsWith(engine.putQueue(fresh, input), 'VALIDATION_FAILED');
    await rejectsWith(engine.getQueue(fresh), 'QUEUE_NOT_FOUND');
    expect(await keysOf(fresh)).toEqual([]);
    expect(await engine.listQueueNames()).not.toContain(fresh);

    const { q } = await setupQueue({ concurrency: 7 });
    await rejectsWith(engine.putQueue(q, input), 'VALIDATION_FAILED');
    expect((await engine.getQueue(q)).config).toEqual({ ...DEFAULTS, concurrency: 7 });
  });
});

describe('getQueue, listQueues, listQueueNames', () => {
  it('an unknown queue is QUEUE_NOT_FOUND', async () => {
    await rejectsWith(testEngine().getQueue(uniqueName('q')), 'QUEUE_NOT_FOUND');
  });

  it('lists created queues by name (sorted) with paused and counts, without config', async () => {
    const { engine, q: first } = await setupQueue();
    const { q: second } = await setupQueue();
    const { id } = await engine.enqueue(second, { group: 'g', data: null });
    await engine.pauseQueue(second);
    const names = await engine.listQueueNames();
    expect(names).toEqual([...names].sort());
    expect(names).toEqual(expect.arrayContaining([first, second]));
    const listed = await engine.listQueues();
    expect(listed.find((entry) => entry.name === first)).toEqual({ name: first, paused: false, counts: NO_COUNTS });
    expect(listed.find((entry) => entry.name === second)).toEqual({
      name: second,
      paused: true,
      counts: { ...NO_COUNTS, waiting: 1, groups: 1 },
      oldestReady: { id, orderMs: T0 },
    });
  });
});

describe('counts', () => {
  it('counts jobs in each state and the groups holding waiting or active jobs', async () => {
    const { engine, q } = await setupQueue({ keepCompleted: 5, maxAttempts: 1 });
    await engine.enqueueBatch(q, [
      { group: 'a', data: 'a1' },
      { group: 'b', data: 'b1' },
      { group: 'a', data: 'a2' },
      { group: 'c', data: 'c1' },
      { group: 'd', data: 'd1', delayMs: 60_000 },
    ]);
    expect((await engine.getQueue(q)).counts).toEqual({ waiting: 4, delayed: 1, active: 0, completed: 0, failed: 0, cancelled: 0, expired: 0, groups: 3 });
    const [a1, b1] = (await engine.reserve(q, 2)).jobs;
    expect([a1!.data, b1!.data]).toEqual(['a1', 'b1']);
    await engine.complete(q, { id: a1!.id, lease: a1!.lease.token });
    await engine.fail(q, { id: b1!.id, lease: b1!.lease.token, error: 'boom' });
    expect((await engine.reserve(q, 1)).jobs.map((job) => job.data)).toEqual(['a2']);
    // a: active (a2), b: empty, c: ready (c1), d: only delayed (not in its group yet).
    expect((await engine.getQueue(q)).counts).toEqual({ waiting: 1, delayed: 1, active: 1, completed: 1, failed: 1, cancelled: 0, expired: 0, groups: 2 });
  });

  it('counts held (retrying) and paused groups as groups with waiting jobs', async () => {
    const { engine, q } = await setupQueue();
    await engine.enqueueBatch(q, [{ group: 'held', data: 1 }, { group: 'paused', data: 2 }]);
    const [job] = (await engine.reserve(q, 1)).jobs;
    await engine.fail(q, { id: job!.id, lease: job!.lease.token, error: 'retry me' });
    await engine.pauseGroup(q, 'paused');
    expect((await engine.getQueue(q)).counts).toEqual({ ...NO_COUNTS, waiting: 2, groups: 2 });
  });
});

describe('deleteQueue', () => {
  it('removes every key of a queue with many groups, leases, holds, delays, repeats and kept jobs', async () => {
    const { engine, q } = await setupQueue({ keepCompleted: 100, keepFailed: 100, maxAttempts: 2, concurrency: 50 });
    // 450 groups: more than one bounded delete step (200) of each kind of group entry.
    await engine.enqueueBatch(q, Array.from({ length: 450 }, (_, i) => ({ group: `g${i}`, data: { i } })));
    await engine.enqueueBatch(q, Array.from({ length: 20 }, (_, i) => ({ group: `g${i}`, data: 'later', delayMs: 5000 + i })));
    const leased = (await engine.reserve(q, 30)).jobs;
    const outcomes = leased.map((job, i) =>
      i < 10
        ? { kind: 'complete' as const, id: job.id, lease: job.lease.token, result: i }
        : i < 20
          ? { kind: 'fail' as const, id: job.id, lease: job.lease.token, error: 'x', retry: false }
          : { kind: 'fail' as const, id: job.id, lease: job.lease.token, error: 'again' },
    );
    await engine.settle(q, outcomes.slice(0, 25), 5); // 5 retries held, 5 more leased
    await engine.pauseGroup(q, 'g449');
    await engine.putRepeat(q, 'nightly', { group: 'cron', data: null, every: 60_000 });
    await engine.cancelJob(q, leased[29]!.id); // a kept cancelled job, and a revoked lease
    const counts = (await engine.getQueue(q)).counts;
    expect(counts).toMatchObject({ delayed: 20, completed: 10, failed: 10, cancelled: 1 });
    expect(counts.active).toBeGreaterThan(0);
    expect((await keysOf(q)).length).toBeGreaterThan(400);

    await engine.deleteQueue(q);
    expect(await keysOf(q)).toEqual([]);
    await rejectsWith(engine.getQueue(q), 'QUEUE_NOT_FOUND');
    expect(await engine.listQueueNames()).not.toContain(q);
  });

  it('an unknown queue is QUEUE_NOT_FOUND', async () => {
    await rejectsWith(testEngine().deleteQueue(uniqueName('q')), 'QUEUE_NOT_FOUND');
  });

  it('frees the name: a queue created again starts empty', async () => {
    const { engine, q } = await setupQueue();
    const { id } = await engine.enqueue(q, { group: 'g', data: 1 });
    await engine.pauseQueue(q);
    await engine.deleteQueue(q);
    const again = await engine.putQueue(q, { endpoint: ENDPOINT });
    expect(again).toMatchObject({ paused: false, counts: NO_COUNTS });
    await rejectsWith(engine.getJob(q, id), 'JOB_NOT_FOUND');
  });
});

describe('pauseQueue, resumeQueue', () => {
  it('paused: enqueue works, nothing is reserved, active jobs still complete; resume reserves again', async () => {
    const { engine, q } = await setupQueue();
    await engine.enqueueBatch(q, [{ group: 'a', data: 1 }, { group: 'b', data: 2 }]);
    const [active] = (await engine.reserve(q, 1)).jobs;
    expect(await engine.pauseQueue(q)).toEqual({ name: q, paused: true });
    expect((await engine.getQueue(q)).paused).toBe(true);
    expect(await engine.enqueue(q, { group: 'c', data: 3 })).toMatchObject({ state: 'waiting' });
    expect((await engine.reserve(q, 10)).jobs).toEqual([]);
    expect((await engine.tick(q)).readyNow).toBe(false);
    const done = await engine.complete(q, { id: active!.id, lease: active!.lease.token }, 10);
    expect(done).toEqual({ state: 'completed', next: [], target: expect.objectContaining({ endpoint: expect.any(String) }), outcomes: [], tag: q });

    expect(await engine.resumeQueue(q)).toEqual({ name: q, paused: false });
    expect((await engine.getQueue(q)).paused).toBe(false);
    expect((await engine.reserve(q, 10)).jobs.map((job) => job.data)).toEqual([2, 3]);
  });

  it('an unknown queue is QUEUE_NOT_FOUND', async () => {
    const engine = testEngine();
    await rejectsWith(engine.pauseQueue(uniqueName('q')), 'QUEUE_NOT_FOUND');
    await rejectsWith(engine.resumeQueue(uniqueName('q')), 'QUEUE_NOT_FOUND');
  });
});

describe('pauseGroup, resumeGroup', () => {
  it('a paused group is never reserved while other groups are; resume makes it reservable', async () => {
    const { engine, q } = await setupQueue();
    await engine.enqueueBatch(q, [{ group: 'poison', data: 'p1' }, { group: 'ok', data: 'o1' }, { group: 'ok', data: 'o2' }]);
    expect(await engine.pauseGroup(q, 'poison')).toEqual({ group: 'poison', state: 'paused' });
    const [o1] = (await engine.reserve(q, 10)).jobs;
    expect(o1!.data).toBe('o1');
    const { next } = await engine.complete(q, { id: o1!.id, lease: o1!.lease.token }, 10);
    expect(next.map((job) => job.data)).toEqual(['o2']);
    expect(await engine.resumeGroup(q, 'poison')).toEqual({ group: 'poison', state: 'ready' });
    expect((await engine.reserve(q, 10)).jobs.map((job) => job.data)).toEqual(['p1']);
  });

  it("a paused group's next job does not take another group's place in a reservation", async () => {
    const { engine, q } = await setupQueue();
    await engine.enqueueBatch(q, [{ group: 'poison', data: 'p1' }, { group: 'poison', data: 'p2' }, { group: 'ok', data: 'o1' }]);
    const [p1] = (await engine.reserve(q, 1)).jobs;
    await engine.pauseGroup(q, 'poison'); // while its job is active
    // p2 is older than o1, but its group is paused: the one job reserved next must be o1.
    const { next } = await engine.complete(q, { id: p1!.id, lease: p1!.lease.token }, 1);
    expect(next.map((job) => job.data)).toEqual(['o1']);
  });

  it('many paused groups met at once do not hide a healthy group from a reservation', async () => {
    const { engine, q } = await setupQueue({ concurrency: 1000 });
    const paused = Array.from({ length: 150 }, (_, i) => `p${i}`);
    await engine.enqueueBatch(q, paused.flatMap((group) => [{ group, data: 1 }, { group, data: 2 }]));
    await engine.enqueue(q, { group: 'ok', data: 'o1' });
    const first = (await engine.reserve(q, 150)).jobs;
    for (const group of paused) await engine.pauseGroup(q, group); // while their jobs are active
    // Their next jobs are the 150 oldest heads now; the one job reserved must still be o1.
    const outcomes = first.map((job) => ({ kind: 'complete' as const, id: job.id, lease: job.lease.token }));
    const { jobs } = await engine.settle(q, outcomes, 1);
    expect(jobs.map((job) => job.data)).toEqual(['o1']);
    expect((await engine.listGroups(q, { limit: 1000 })).groups.filter((g) => g.state === 'paused')).toHaveLength(150);
  });

  it('a group paused before it has jobs holds the jobs that arrive', async () => {
    const { engine, q } = await setupQueue();
    expect(await engine.pauseGroup(q, 'later')).toEqual({ group: 'later', state: 'paused' });
    await engine.enqueue(q, { group: 'later', data: 1 });
    expect((await engine.reserve(q, 10)).jobs).toEqual([]);
    expect(await engine.resumeGroup(q, 'later')).toEqual({ group: 'later', state: 'ready' });
    expect((await engine.reserve(q, 10)).jobs.map((job) => job.data)).toEqual([1]);
  });

  it("restores a retrying group's hold on resume: the job waits for its backoff", async () => {
    const { clock, engine, q } = await setupQueue({ backoff: { delayMs: 10_000, jitter: false } });
    await engine.enqueue(q, { group: 'g', data: 1 });
    const [job] = (await engine.reserve(q, 1)).jobs;
    await engine.fail(q, { id: job!.id, lease: job!.lease.token, error: 'boom' });
    const runAt = clock.now() + 10_000;
    expect(await engine.pauseGroup(q, 'g')).toEqual({ group: 'g', state: 'paused' });
    clock.advance(1000);
    expect(await engine.resumeGroup(q, 'g')).toEqual({ group: 'g', state: 'held' });
    await engine.tick(q);
    expect((await engine.reserve(q, 1)).jobs).toEqual([]);
    clock.set(runAt);
    await engine.tick(q);
    expect((await engine.reserve(q, 1)).jobs.map((leased) => [leased.id, leased.attempt])).toEqual([[job!.id, 2]]);
  });

  it('a paused group stays paused past its backoff and is ready at once on resume', async () => {
    const { clock, engine, q } = await setupQueue({ backoff: { delayMs: 1000, jitter: false } });
    await engine.enqueue(q, { group: 'g', data: 1 });
    const [job] = (await engine.reserve(q, 1)).jobs;
    await engine.fail(q, { id: job!.id, lease: job!.lease.token, error: 'boom' });
    await engine.pauseGroup(q, 'g');
    clock.advance(5000);
    await engine.tick(q);
    expect((await engine.reserve(q, 1)).jobs).toEqual([]);
    expect(await engine.resumeGroup(q, 'g')).toEqual({ group: 'g', state: 'ready' });
    expect((await engine.reserve(q, 1)).jobs.map((leased) => leased.id)).toEqual([job!.id]);
  });

  it('rejects a bad group name and an unknown queue', async () => {
    const { engine, q } = await setupQueue();
    await rejectsWith(engine.pauseGroup(q, ''), 'VALIDATION_FAILED');
    await rejectsWith(engine.resumeGroup(q, 'a\u0000b'), 'VALIDATION_FAILED');
    await rejectsWith(engine.pauseGroup(uniqueName('q'), 'g'), 'QUEUE_NOT_FOUND');
  });
});

describe('queue names', () => {
  const engine = testEngine();
  const calls: [string, (name: string) => Promise<unknown>][] = [
    ['putQueue', (name) => engine.putQueue(name, { endpoint: ENDPOINT })],
    ['getQueue', (name) => engine.getQueue(name)],
    ['deleteQueue', (name) => engine.deleteQueue(name)],
    ['pauseQueue', (name) => engine.pauseQueue(name)],
    ['enqueue', (name) => engine.enqueue(name, { group: 'g', data: 1 })],
    ['listPartitions', (name) => engine.listPartitions(name)],
    ['movePartition', (name) => engine.movePartition(name, '0', { database: 0 })],
    ['getJob', (name) => engine.getJob(name, 'j')],
    ['complete', (name) => engine.complete(name, { id: 'j', lease: '0.0123456789abcdef' })],
    ['reserve', (name) => engine.reserve(name, 1)],
    ['tick', (name) => engine.tick(name)],
  ];

  it.each(['', 'has space', 'x'.repeat(65), 'a/b', 'a{b}', 'a:b', 'zażółć', 'a*'])('rejects %j everywhere', async (name) => {
    for (const [, call] of calls) await rejectsWith(call(name), 'VALIDATION_FAILED');
    expect(await engine.listQueueNames()).not.toContain(name);
  });

  // reserve and tick also take a partition's tag: the run layer drains and ticks partitions by it.
  it('refuses a partition tag ("q:0") as a queue name in every call a request can make', async () => {
    for (const [op, call] of calls.filter(([op]) => op !== 'reserve' && op !== 'tick')) {
      await expect(call('q:0'), op).rejects.toMatchObject({ code: 'VALIDATION_FAILED' });
    }
  });

  it('accepts 64 characters of letters, digits, dot, underscore and dash', async () => {
    const name = `${uniqueName('Q_1.x')}`.padEnd(64, '-');
    onTestFinished(() => engine.deleteQueue(name).catch(() => undefined));
    expect((await engine.putQueue(name, { endpoint: ENDPOINT })).name).toBe(name);
  });
});
