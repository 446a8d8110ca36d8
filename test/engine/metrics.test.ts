// Per-minute metrics (the dashboard's chart): which ended attempts count as completed, failed
// or retried (acks, the fail callback, expired leases through the tick), the 60-minute window
// and its ring wrapping after an hour, deletion with the queue, and the cost: a batch of
// outcomes settled in one call writes the counters once, measured with INFO commandstats on a
// Redis of this file's own (the shared one counts other files' commands too).
import { describe, expect, it } from 'vitest';
import { countsOf } from '../../bench/lib/redis-stats';
import type { RespClient } from '../../scripts/resp.mjs';
import type { Engine } from '../../src/core/engine';
import { queueKeys } from '../../src/core/store/keys';
import { type LeasedJob, spotOf } from '../../src/core/engine/leases';
import type { MinuteMetrics } from '../../src/core/engine/minutes';
import { rejectsWith, setupQueue, T0, usePrivateEngine } from '../helpers/engine';
import { adminClient, uniqueName } from '../helpers/stack';

const MINUTE = 60_000;
/** Start of the minute T0 falls in. */
const M0 = Math.floor(T0 / MINUTE) * MINUTE;
const LEASE_MS = 35_000; // default timeoutMs + 5 s grace

const ref = (job: LeasedJob) => ({ id: job.id, lease: job.lease.token });
const zero = (at: number): MinuteMetrics => ({ at, completed: 0, failed: 0, retried: 0 });

/** The 60 minutes a read at `now` must return, all zero but the ones given. */
function expected(now: number, counted: Record<number, Partial<MinuteMetrics>> = {}): MinuteMetrics[] {
  const last = Math.floor(now / MINUTE) * MINUTE;
  return Array.from({ length: 60 }, (_, i) => {
    const at = last - (59 - i) * MINUTE;
    return { ...zero(at), ...counted[at] };
  });
}

async function reserveAll(engine: Engine, q: string, n: number): Promise<LeasedJob[]> {
  const { jobs } = await engine.reserve(q, n);
  expect(jobs).toHaveLength(n);
  return jobs;
}

describe('what counts', () => {
  it('a completed ack, a retried failure and a non-retryable failure, in the current minute', async () => {
    const { engine, q } = await setupQueue();
    await engine.enqueueBatch(q, [{ id: 'a', group: 'a' }, { id: 'b', group: 'b' }, { id: 'c', group: 'c' }]);
    const [a, b, c] = await reserveAll(engine, q, 3);
    expect(await engine.getMinutes(q)).toEqual(expected(T0)); // leasing is not an outcome

    await engine.complete(q, ref(a!));
    expect((await engine.fail(q, { ...ref(b!), error: 'boom' })).state).toBe('waiting');
    expect((await engine.fail(q, { ...ref(c!), error: 'bad input', retry: false })).state).toBe('failed');
    const minutes = await engine.getMinutes(q);
    expect(minutes).toEqual(expected(T0, { [M0]: { completed: 1, failed: 1, retried: 1 } }));
    expect(minutes.at(-1)!.at).toBe(M0);
  });

  it('the last attempt failing is failed, not retried; a lost lease counts nothing', async () => {
    const { engine, q } = await setupQueue({ maxAttempts: 1 });
    await engine.enqueue(q, { id: 'j', group: 'g' });
    const [job] = await reserveAll(engine, q, 1);
    await engine.fail(q, { ...ref(job!), error: 'boom' });
    // The same lease again, and a made-up one: LEASE_LOST, nothing counted.
    await rejectsWith(engine.fail(q, { ...ref(job!), error: 'again' }), 'LEASE_LOST');
    await rejectsWith(engine.complete(q, { id: 'j', lease: 'nope' }), 'LEASE_LOST');
    expect(await engine.getMinutes(q)).toEqual(expected(T0, { [M0]: { failed: 1 } }));
  });

  it('a batched settle counts each outcome, across kinds, once', async () => {
    const { engine, q } = await setupQueue({ maxAttempts: 2 });
    await engine.enqueueBatch(q, Array.from({ length: 6 }, (_, i) => ({ id: `j${i}`, group: `g${i}` })));
    const jobs = await reserveAll(engine, q, 6);
    const settled = await engine.settle(q, [
      { kind: 'complete', ...ref(jobs[0]!) },
      { kind: 'complete', ...ref(jobs[1]!) },
      { kind: 'complete', ...ref(jobs[2]!) },
      { kind: 'fail', ...ref(jobs[3]!), error: 'x' },
      { kind: 'fail', ...ref(jobs[4]!), error: 'x', retry: false },
      { kind: 'complete', ...ref(jobs[3]!) }, // the same lease again: lost
    ], 0);
    expect(settled.results.map((r) => r.state)).toEqual(['completed', 'completed', 'completed', 'waiting', 'failed', 'LEASE_LOST']);
    expect(await engine.getMinutes(q)).toEqual(expected(T0, { [M0]: { completed: 3, failed: 1, retried: 1 } }));
  });

  it('an expired lease counts as retried through the tick, and as failed on the last attempt', async () => {
    const { clock, engine, q } = await setupQueue({ maxAttempts: 2, backoff: { type: 'fixed', delayMs: 0, jitter: false } });
    await engine.enqueue(q, { id: 'j', group: 'g' });
    await reserveAll(engine, q, 1);
    clock.advance(LEASE_MS + 1); // still T0's minute + 35 s, maybe the next one: read where it lands
    const first = clock.now();
    await engine.tick(q);
    expect((await engine.getJob(q, 'j')).state).toBe('waiting');

    clock.advance(2 * MINUTE); // two minutes later, so the failure lands in a minute of its own
    await reserveAll(engine, q, 1);
    clock.advance(LEASE_MS + 1);
    await engine.tick(q);
    expect((await engine.getJob(q, 'j')).state).toBe('failed');
    const minuteOf = (t: number) => Math.floor(t / MINUTE) * MINUTE;
    expect(await engine.getMinutes(q)).toEqual(
      expected(clock.now(), { [minuteOf(first)]: { retried: 1 }, [minuteOf(clock.now())]: { failed: 1 } }),
    );
  });
});

describe('the last hour', () => {
  /** Completes one job (its own group) at the clock's current time. */
  async function completeOne(engine: Engine, q: string, id: string) {
    await engine.enqueue(q, { id, group: id });
    const [job] = await reserveAll(engine, q, 1);
    expect((await engine.complete(q, ref(job!))).state).toBe('completed');
  }

  it('counts land in their minute; 60 minutes on, the oldest is gone and its slot starts again at 0', async () => {
    const { clock, engine, q } = await setupQueue();
    await completeOne(engine, q, 'a');
    await completeOne(engine, q, 'b');
    clock.set(M0 + 5 * MINUTE + 30_000);
    await completeOne(engine, q, 'c');
    expect(await engine.getMinutes(q)).toEqual(
      expected(clock.now(), { [M0]: { completed: 2 }, [M0 + 5 * MINUTE]: { completed: 1 } }),
    );

    // 59 minutes on: M0 is still the oldest entry.
    clock.set(M0 + 59 * MINUTE);
    const at59 = await engine.getMinutes(q);
    expect(at59[0]).toEqual({ ...zero(M0), completed: 2 });

    // 60 minutes on: the current minute reuses M0's slot. Nothing is read from that slot's old
    // minute, and a new count starts from 0, not from M0's 2.
    clock.set(M0 + 60 * MINUTE);
    expect(await engine.getMinutes(q)).toEqual(expected(clock.now(), { [M0 + 5 * MINUTE]: { completed: 1 } }));
    await completeOne(engine, q, 'd');
    expect(await engine.getMinutes(q)).toEqual(
      expected(clock.now(), { [M0 + 5 * MINUTE]: { completed: 1 }, [M0 + 60 * MINUTE]: { completed: 1 } }),
    );

    // Hours later every old minute is gone; the ring never holds more than 60 minutes' fields.
    clock.set(M0 + 300 * MINUTE);
    expect(await engine.getMinutes(q)).toEqual(expected(clock.now()));
    const admin = adminClient();
    try {
      expect(await counterFields(admin, q)).toBeLessThanOrEqual(180);
    } finally {
      admin.close();
    }
  });

  it('a stale slot met by a batch of mixed outcomes starts again at 0 too', async () => {
    const { clock, engine, q } = await setupQueue({ maxAttempts: 5 });
    await engine.enqueueBatch(q, [{ id: 'a', group: 'a' }, { id: 'b', group: 'b' }]);
    const [a, b] = await reserveAll(engine, q, 2);
    await engine.settle(q, [{ kind: 'complete', ...ref(a!) }, { kind: 'fail', ...ref(b!), error: 'x', retryAfterMs: 0 }], 0);
    clock.set(M0 + 120 * MINUTE); // the same slot, two hours on
    await engine.enqueue(q, { id: 'c', group: 'c' });
    const [bAgain, c] = await reserveAll(engine, q, 2);
    expect([bAgain!.id, c!.id]).toEqual(['b', 'c']);
    await engine.settle(q, [{ kind: 'complete', ...ref(c!) }, { kind: 'fail', ...ref(bAgain!), error: 'x', retry: false }], 0);
    expect(await engine.getMinutes(q)).toEqual(expected(clock.now(), { [M0 + 120 * MINUTE]: { completed: 1, failed: 1 } }));
  });
});

/** The per-minute counter fields in the queue's meta hash. */
async function counterFields(admin: RespClient, q: string): Promise<number> {
  const fields = ((await admin.call(['HKEYS', queueKeys(q).meta])) as Buffer[]).map(String);
  return fields.filter((field) => /^m:[cfr]:\d+$/.test(field)).length;
}

describe('the queue', () => {
  it('deleting the queue deletes its metrics; a new queue of that name starts at zero', async () => {
    const { engine, q } = await setupQueue();
    await engine.enqueue(q, { id: 'j', group: 'g' });
    const [job] = await reserveAll(engine, q, 1);
    await engine.complete(q, ref(job!));
    const admin = adminClient();
    try {
      expect(await counterFields(admin, q)).toBeGreaterThan(0);
      await engine.deleteQueue(q);
      expect(await admin.call(['EXISTS', queueKeys(q).meta])).toBe(0);
      await rejectsWith(engine.getMinutes(q), 'QUEUE_NOT_FOUND');
      await engine.putQueue(q, { endpoint: 'http://127.0.0.1:9/jobs' });
      expect(await engine.getMinutes(q)).toEqual(expected(T0));
    } finally {
      admin.close();
    }
  });

  it('an unknown queue is QUEUE_NOT_FOUND, a bad name VALIDATION_FAILED; neither writes a key', async () => {
    const { engine } = await setupQueue();
    const unknown = uniqueName('q');
    await rejectsWith(engine.getMinutes(unknown), 'QUEUE_NOT_FOUND');
    await rejectsWith(engine.getMinutes('bad name!'), 'VALIDATION_FAILED');
    const admin = adminClient();
    try {
      expect(await admin.call(['EXISTS', queueKeys(unknown).meta])).toBe(0);
    } finally {
      admin.close();
    }
  });
});

describe('cost: the counters ride on the one write of meta each script call makes', () => {
  const env = usePrivateEngine();

  /** Redis commands `run` causes, by name (this Redis serves this file alone). */
  const commandsOf = (run: () => Promise<unknown>) => countsOf(env.admin, run);

  /** A queue whose finished jobs are not kept: ending an attempt writes no job record. */
  async function queueWithLeases(n: number, config: Record<string, unknown> = {}) {
    const q = uniqueName('cost');
    await env.engine.putQueue(q, { endpoint: 'http://127.0.0.1:9/jobs', keepCompleted: 0, keepFailed: 0, concurrency: 1000, ...config });
    await env.engine.enqueueBatch(q, Array.from({ length: n }, (_, i) => ({ id: `j${i}`, group: `g${i}` })));
    return { q, jobs: await reserveAll(env.engine, q, n) };
  }

  it('one kind: no command of their own, whatever the batch', async () => {
    env.clock.set(T0);
    const { q, jobs } = await queueWithLeases(41);
    const complete = (batch: LeasedJob[]) =>
      env.engine.settle(q, batch.map((job) => ({ kind: 'complete' as const, ...ref(job), spot: spotOf(job) })), 0);

    const first = await commandsOf(() => complete(jobs.slice(0, 1))); // the minute's first write
    expect(first).toMatchObject({ hmget: 1, hset: 1 }); // meta, read and written once
    expect(first.hincrby).toBeUndefined();
    const batch = await commandsOf(() => complete(jobs.slice(1, 41))); // 40 outcomes, one call
    expect(batch).toMatchObject({ hmget: 1, hset: 1 }); // records not kept are not read
    expect(batch.hincrby).toBeUndefined();

    const reserveOnly = await commandsOf(() => env.engine.settle(q, [], 10));
    expect(reserveOnly.hset ?? 0).toBe(0);
    expect(await env.engine.getMinutes(q)).toEqual(expected(T0, { [M0]: { completed: 41 } }));
  });

  it('several kinds: still no command of their own', async () => {
    env.clock.set(T0 + 10 * MINUTE);
    const { q, jobs } = await queueWithLeases(40);
    const outcomes = jobs.map((job, i) =>
      i % 2 === 0 ? { kind: 'complete' as const, ...ref(job) } : { kind: 'fail' as const, ...ref(job), error: 'x', retry: false },
    );
    const counts = await commandsOf(() => env.engine.settle(q, outcomes.map((o, i) => ({ ...o, spot: spotOf(jobs[i]!) })), 0));
    // Failed jobs are not kept (keepFailed 0): the one HSET is meta's. HMGETs: meta, and the
    // records of the failed jobs.
    expect(counts).toMatchObject({ hmget: 2, hset: 1 });
    expect(counts.hincrby).toBeUndefined();
    expect((await env.engine.getMinutes(q)).at(-1)).toEqual({ ...zero(M0 + 10 * MINUTE), completed: 20, failed: 20 });
  });

  it('a tick expiring many leases writes the counters once', async () => {
    env.clock.set(T0 + 20 * MINUTE);
    const { q } = await queueWithLeases(30, { maxAttempts: 1 });
    env.clock.advance(LEASE_MS + 1);
    const counts = await commandsOf(() => env.engine.tick(q));
    expect(counts).toMatchObject({ hset: 1 }); // meta's: failed for good, not kept, no record writes
    expect(counts.hincrby).toBeUndefined();
    const minutes = await env.engine.getMinutes(q);
    expect(minutes.reduce((sum, m) => sum + m.failed, 0)).toBe(30);
  });

  it('an idle tick and an attempt-free settle touch no counter', async () => {
    env.clock.set(T0 + 30 * MINUTE);
    const { q } = await queueWithLeases(1);
    const counts = await commandsOf(async () => {
      await env.engine.tick(q);
      await env.engine.settle(q, [{ kind: 'complete', id: 'j0', lease: 'not-the-lease' }], 5);
    });
    expect(counts.hincrby ?? 0).toBe(0);
    expect(counts.hset ?? 0).toBeLessThanOrEqual(1); // the tick's write of the queue's timer
    expect(await counterFields(env.admin, q)).toBe(0);
  });
});
