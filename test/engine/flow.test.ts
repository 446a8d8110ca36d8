// Flow control in the engine (docs/flow-control.md): concurrency per group, priority, the queue
// and group rate limits, and 429s that use no attempt. The clock is the test's: every window is
// exact. The same features through the Worker, under real concurrency: test/flow.
import { describe, expect, it } from 'vitest';
import type { Engine } from '../../src/core/engine';
import type { LeasedJob } from '../../src/core/engine/leases';
import { DAY_MS } from '../../src/protocol/config';
import { queueKeys } from '../../src/core/store/keys';
import { setupQueue } from '../helpers/engine';
import { restRedis } from '../helpers/stack';

const HOUR_MS = 3_600_000;

const ids = (jobs: LeasedJob[]) => jobs.map((job) => job.id);

function completeAll(engine: Engine, q: string, jobs: LeasedJob[], reserve = 0) {
  return engine.settle(q, jobs.map((job) => ({ kind: 'complete' as const, id: job.id, lease: job.lease.token })), reserve);
}

function throttle(engine: Engine, q: string, job: LeasedJob, retryAfterMs?: number) {
  return engine.settle(q, [{ kind: 'fail', id: job.id, lease: job.lease.token, error: 'HTTP 429', status: 429, retryAfterMs }], 0);
}

describe('groupConcurrency', () => {
  it('starts up to N jobs of a group at once, in order, and the next as each ends', async () => {
    const { engine, q } = await setupQueue({ groupConcurrency: 3 });
    await engine.enqueueBatch(q, Array.from({ length: 6 }, (_, i) => ({ group: 'g', id: `g${i}` })));
    await engine.enqueue(q, { group: 'h', id: 'h0' });
    const first = (await engine.reserve(q, 10)).jobs;
    expect(ids(first).sort()).toEqual(['g0', 'g1', 'g2', 'h0']);
    expect((await engine.reserve(q, 10)).jobs).toEqual([]);
    const g1 = first.find((job) => job.id === 'g1')!;
    expect(ids((await completeAll(engine, q, [g1], 10)).jobs)).toEqual(['g3']);
    const listed = (await engine.listGroups(q)).groups.find((group) => group.group === 'g');
    expect(listed).toMatchObject({ active: 3, waiting: 2, concurrency: 3 });
  });

  it('a retried job keeps its place at the head: nothing later starts before it', async () => {
    const { clock, engine, q } = await setupQueue({ groupConcurrency: 2, backoff: { type: 'fixed', delayMs: 1000, jitter: false } });
    await engine.enqueueBatch(q, ['a', 'b', 'c', 'd'].map((id) => ({ group: 'g', id })));
    const [a, b] = (await engine.reserve(q, 10)).jobs;
    expect([a!.id, b!.id]).toEqual(['a', 'b']);
    await engine.settle(q, [{ kind: 'fail', id: 'a', lease: a!.lease.token, error: 'boom' }], 0);
    expect((await engine.reserve(q, 10)).jobs).toEqual([]);
    await completeAll(engine, q, [b!]);
    expect((await engine.reserve(q, 10)).jobs).toEqual([]); // still held for a's backoff
    clock.advance(1000);
    await engine.tick(q);
    expect(ids((await engine.reserve(q, 10)).jobs)).toEqual(['a', 'c']);
  });

  it('a pause during a retry backoff does not shorten it', async () => {
    const { clock, engine, q } = await setupQueue({ groupConcurrency: 2, backoff: { type: 'fixed', delayMs: 1000, jitter: false } });
    await engine.enqueueBatch(q, ['a', 'b'].map((id) => ({ group: 'g', id })));
    const [a] = (await engine.reserve(q, 1)).jobs;
    await engine.settle(q, [{ kind: 'fail', id: 'a', lease: a!.lease.token, error: 'boom' }], 0);
    await engine.pauseGroup(q, 'g');
    clock.advance(500);
    await engine.resumeGroup(q, 'g');
    expect((await engine.reserve(q, 10)).jobs).toEqual([]);
    clock.advance(500);
    await engine.tick(q);
    expect(ids((await engine.reserve(q, 10)).jobs)).toEqual(['a', 'b']);
  });
});

describe('priority', () => {
  it('starts the due head with the highest priority first, then the oldest; a group keeps its order', async () => {
    const { clock, engine, q } = await setupQueue();
    await engine.enqueue(q, { group: 'low', id: 'low', priority: -3 });
    clock.advance(1);
    await engine.enqueue(q, { group: 'plain', id: 'plain' });
    clock.advance(1);
    await engine.enqueue(q, { group: 'high', id: 'high-1', priority: 5 });
    await engine.enqueue(q, { group: 'high', id: 'high-2', priority: -10 });
    clock.advance(1);
    await engine.enqueue(q, { group: 'high-too', id: 'high-too', priority: 5 });
    const order: string[] = [];
    for (;;) {
      const [job] = (await engine.reserve(q, 1)).jobs;
      if (!job) break;
      order.push(job.id);
      await completeAll(engine, q, [job]);
    }
    // Once high-1 ended, high-2 (-10) is its group's head: the group's turn comes last.
    expect(order).toEqual(['high-1', 'high-too', 'plain', 'low', 'high-2']);
  });

  it('shows a group whose waiting head has a priority as ready', async () => {
    const { engine, q } = await setupQueue();
    await engine.enqueue(q, { group: 'g', id: 'j', priority: 7 });
    expect((await engine.listGroups(q)).groups).toEqual([{ group: 'g', waiting: 1, active: 0, state: 'ready', concurrency: 1 }]);
    expect((await engine.getGroup(q, 'g')).state).toBe('ready');
  });
});

describe('rate limits', () => {
  it('never starts more than max in any window of the queue', async () => {
    const { clock, engine, q } = await setupQueue({ rateLimit: { max: 3, periodMs: 1000 } });
    await engine.enqueueBatch(q, Array.from({ length: 8 }, (_, i) => ({ group: `g${i}` })));
    expect((await engine.reserve(q, 10)).jobs).toHaveLength(3);
    expect((await engine.reserve(q, 10)).jobs).toHaveLength(0);
    clock.advance(999);
    expect((await engine.reserve(q, 10)).jobs).toHaveLength(0);
    clock.advance(1);
    expect((await engine.reserve(q, 10)).jobs).toHaveLength(3);
  });

  it('holds a group whose own window is full, and releases it when a start leaves the window', async () => {
    const { clock, engine, q } = await setupQueue({ groupRateLimit: { max: 2, periodMs: 1000 }, groupConcurrency: 5 });
    await engine.enqueueBatch(q, Array.from({ length: 5 }, (_, i) => ({ group: 'g', id: `j${i}` })));
    const first = (await engine.reserve(q, 10)).jobs;
    expect(ids(first)).toEqual(['j0', 'j1']);
    await completeAll(engine, q, first);
    expect((await engine.reserve(q, 10)).jobs).toEqual([]);
    clock.advance(1000);
    await engine.tick(q);
    expect(ids((await engine.reserve(q, 10)).jobs)).toEqual(['j2', 'j3']);
  });
});

describe('429 backpressure', () => {
  it('retries a throttled job after Retry-After without using an attempt', async () => {
    const { clock, engine, q } = await setupQueue({ maxAttempts: 1 });
    await engine.enqueue(q, { group: 'g', id: 'j' });
    const [job] = (await engine.reserve(q, 1)).jobs;
    expect((await throttle(engine, q, job!, 500)).results[0]!.state).toBe('waiting');
    clock.advance(500);
    await engine.tick(q);
    const [again] = (await engine.reserve(q, 1)).jobs;
    expect(again).toMatchObject({ id: 'j', attempt: 1 });
    expect(again!.lease.token).not.toBe(job!.lease.token);
  });

  it('fails a job throttled 100 times in a row with `throttled`', async () => {
    const { engine, q } = await setupQueue();
    await engine.enqueue(q, { group: 'g', id: 'j' });
    for (let i = 1; i <= 100; i++) {
      const [job] = (await engine.reserve(q, 1)).jobs;
      const { results } = await throttle(engine, q, job!, 0);
      expect(results[0]!.state).toBe(i < 100 ? 'waiting' : 'failed');
    }
    expect((await engine.getJob(q, 'j')).error).toMatch(/^throttled/);
  });

  it('a config stored before maxThrottleMs holds a 429 asking for a day 1 hour (its default), then fails the job', async () => {
    const { clock, engine, q } = await setupQueue({ backpressure: 'queue' });
    const redis = restRedis();
    const meta = queueKeys(q).meta;
    const stored = JSON.parse((await redis.hget<string>(meta, 'config'))!);
    delete stored.maxThrottleMs;
    await redis.hset(meta, { config: JSON.stringify(stored) });
    await engine.enqueue(q, { group: 'g', id: 'j' });
    const [job] = (await engine.reserve(q, 1)).jobs;
    await throttle(engine, q, job!, DAY_MS);
    expect((await engine.getJob(q, 'j')).runAt).toBe(clock.now() + HOUR_MS);
    clock.advance(HOUR_MS - 1);
    await engine.tick(q);
    expect((await engine.reserve(q, 1)).jobs).toEqual([]);
    clock.advance(1);
    await engine.tick(q);
    const [again] = (await engine.reserve(q, 1)).jobs;
    expect((await throttle(engine, q, again!, DAY_MS)).results[0]!.state).toBe('failed');
    expect((await engine.getJob(q, 'j')).error).toMatch(/^throttled: held 3600000 ms by answers 429/);
  });

  it('with backpressure "queue", holds the whole queue until Retry-After', async () => {
    const { clock, engine, q } = await setupQueue({ backpressure: 'queue' });
    await engine.enqueue(q, { group: 'a', id: 'a' });
    const [a] = (await engine.reserve(q, 1)).jobs;
    await engine.enqueue(q, { group: 'b', id: 'b' });
    await throttle(engine, q, a!, 2000);
    expect((await engine.reserve(q, 10)).jobs).toEqual([]);
    clock.advance(2000);
    await engine.tick(q);
    expect(ids((await engine.reserve(q, 10)).jobs).sort()).toEqual(['a', 'b']);
  });
});
