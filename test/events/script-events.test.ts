// Job events in script replies (src/lua/includes/events.lua, src/core/store/events.ts), on a test
// clock and a Redis of this file's own: while a queue's meta says events are wanted (want-events),
// each call that changes a job answers the events it caused, in order, with every field of the
// model (src/protocol/events.ts, checked with its schemas); without the flag, or past it, no call
// answers any, and both ways every call runs the same Redis commands (INFO commandstats).
import { describe, expect, it } from 'vitest';
import { countsOf, type CommandCounts } from '../../bench/lib/redis-stats';
import { type LeasedJob, spotOf } from '../../src/core/engine/leases';
import type { ScriptEvent } from '../../src/core/store/events';
import { eventDataSchemas } from '../../src/protocol/events';
import { T0, usePrivateEngine } from '../helpers/engine';
import { uniqueName } from '../helpers/stack';

const env = usePrivateEngine();
const HOUR = 3_600_000;
const TTL = 10_000;
const BACKOFF = 1_000;
const TIMEOUT = 2_000;
/** A lease lapses this long after it started: the job's timeout and the lease's grace (job.lua). */
const LEASE_MS = TIMEOUT + 5_000;

async function newQueue(config: Record<string, unknown> = {}): Promise<string> {
  env.clock.set(T0);
  const q = uniqueName('events');
  await env.engine.putQueue(q, {
    endpoint: 'http://127.0.0.1:9/jobs', maxAttempts: 2, timeoutMs: TIMEOUT, keepFailed: 100,
    backoff: { type: 'fixed', delayMs: BACKOFF, jitter: false }, ...config,
  });
  return q;
}

/** A queue whose scripts answer events for the next hour. */
async function listenedQueue(config: Record<string, unknown> = {}): Promise<string> {
  const q = await newQueue(config);
  expect(await env.engine.wantEvents(q, T0 + HOUR)).toEqual({ until: T0 + HOUR });
  return q;
}

/** The events a call answered, each checked against its schema in the event model. */
function eventsOf(done: { events?: ScriptEvent[] }): ScriptEvent[] {
  expect(done.events).toBeDefined();
  for (const { event, data } of done.events!) expect(eventDataSchemas[event].strict().parse(data)).toEqual(data);
  return done.events!;
}

const ref = (job: LeasedJob) => ({ id: job.id, lease: job.lease.token });

describe('while events are wanted, each call answers the events it caused', () => {
  it('a job through enqueue, lease, progress, a failed attempt, a lease again and its completion', async () => {
    const q = await listenedQueue();
    const base = { id: 'j', queue: q, group: 'g' };
    const added = await env.engine.enqueueAndReserve(q, { id: 'j', group: 'g', data: { n: 1 } }, 0);
    expect(eventsOf(added)).toEqual([{ event: 'added', data: { ...base, state: 'waiting', attempt: 0, at: T0 } }]);

    env.clock.advance(10);
    const first = await env.engine.reserve(q, 1);
    expect(eventsOf(first)).toEqual([{ event: 'active', data: { ...base, state: 'active', attempt: 1, at: T0 + 10 } }]);
    const lease = first.jobs[0]!;

    env.clock.advance(10);
    const progress = await env.engine.recordProgress(q, { ...ref(lease), progress: { step: 'half', pct: 50 } });
    expect(eventsOf(progress)).toEqual([
      { event: 'progress', data: { ...base, state: 'active', attempt: 1, at: T0 + 20, progress: { step: 'half', pct: 50 } } },
    ]);

    env.clock.advance(10);
    const failed = await env.engine.fail(q, { ...ref(lease), error: 'boom' });
    expect(failed.state).toBe('waiting');
    expect(eventsOf(failed)).toEqual([
      { event: 'retrying', data: { ...base, state: 'waiting', attempt: 1, at: T0 + 30, error: 'boom', retryAt: T0 + 30 + BACKOFF } },
    ]);

    // The backoff's end releases the group: no job changes state, so no event.
    env.clock.advance(BACKOFF);
    const released = await env.engine.tick(q);
    expect(released.readyNow).toBe(true);
    expect(eventsOf(released)).toEqual([]);

    const second = await env.engine.reserve(q, 1);
    expect(eventsOf(second)).toEqual([{ event: 'active', data: { ...base, state: 'active', attempt: 2, at: T0 + 30 + BACKOFF } }]);

    // A lease callback's completion (its spot read by job-group, which tells the attempt).
    env.clock.advance(5);
    const done = await env.engine.complete(q, { ...ref(second.jobs[0]!), result: { ok: true } });
    expect(eventsOf(done)).toEqual([
      { event: 'completed', data: { ...base, state: 'completed', attempt: 2, at: T0 + 35 + BACKOFF, result: { ok: true } } },
    ]);
  });

  it('a lone job leased by its enqueue; a drain ends it and leases the next in one call', async () => {
    const q = await listenedQueue();
    const solo = await env.engine.enqueueAndReserve(q, { id: 'a', group: 'g' }, 1);
    expect(eventsOf(solo).map(({ event, data }) => [event, data.id, data.state, data.attempt])).toEqual([
      ['added', 'a', 'waiting', 0],
      ['active', 'a', 'active', 1],
    ]);
    const batch = await env.engine.enqueueBatchAndReserve(q, { jobs: [{ id: 'b', group: 'g' }, { id: 'c', group: 'h', delayMs: 500 }] }, 1);
    expect(eventsOf(batch)).toEqual([
      { event: 'added', data: { id: 'b', queue: q, group: 'g', state: 'waiting', attempt: 0, at: T0 } },
      { event: 'added', data: { id: 'c', queue: q, group: 'h', state: 'delayed', attempt: 0, at: T0, runAt: T0 + 500 } },
    ]);
    // The drain's settle (its spot known, so the record is not read): a's completion, truncated
    // result and all, then b's lease.
    const lease = solo.leased[0]!;
    const settled = await env.engine.settle(q, [{ kind: 'complete', ...ref(lease), result: 'cut', resultTruncated: true, spot: spotOf(lease) }], 1);
    expect(eventsOf(settled)).toEqual([
      { event: 'completed', data: { id: 'a', queue: q, group: 'g', state: 'completed', attempt: 1, at: T0, result: 'cut', resultTruncated: true } },
      { event: 'active', data: { id: 'b', queue: q, group: 'g', state: 'active', attempt: 1, at: T0 } },
    ]);
  });

  it('a failure for good, a lapsed lease retried and then failed by the tick, a cancel of each kind', async () => {
    const q = await listenedQueue({ maxAttempts: 1 });
    await env.engine.enqueueAndReserve(q, { id: 'f', group: 'g' }, 0);
    const [lease] = (await env.engine.reserve(q, 1)).jobs;
    const failed = await env.engine.fail(q, { ...ref(lease!), error: 'no' });
    expect(eventsOf(failed)).toEqual([{ event: 'failed', data: { id: 'f', queue: q, group: 'g', state: 'failed', attempt: 1, at: T0, error: 'no' } }]);

    const r = await listenedQueue({ maxAttempts: 2 });
    await env.engine.enqueueAndReserve(r, { id: 'l', group: 'g' }, 1);
    env.clock.advance(LEASE_MS);
    const lapsed = await env.engine.tick(r);
    const error = `lease expired: no answer within ${LEASE_MS} ms`;
    expect(eventsOf(lapsed)).toEqual([
      { event: 'retrying', data: { id: 'l', queue: r, group: 'g', state: 'waiting', attempt: 1, at: T0 + LEASE_MS, error, retryAt: T0 + LEASE_MS + BACKOFF } },
    ]);
    env.clock.advance(BACKOFF);
    await env.engine.tick(r);
    const again = await env.engine.reserve(r, 1);
    expect(eventsOf(again).map(({ event, data }) => [event, data.attempt])).toEqual([['active', 2]]);
    env.clock.advance(LEASE_MS);
    const last = await env.engine.tick(r);
    expect(eventsOf(last)).toEqual([
      { event: 'failed', data: { id: 'l', queue: r, group: 'g', state: 'failed', attempt: 2, at: env.clock.now(), error } },
    ]);

    // Cancels: a delayed job, a waiting one, an active one (its attempt counted).
    await env.engine.enqueueAndReserve(r, { id: 'd', group: 'x', delayMs: 60_000 }, 0);
    await env.engine.enqueueAndReserve(r, { id: 'w', group: 'y' }, 0);
    await env.engine.enqueueAndReserve(r, { id: 'z', group: 'y' }, 0);
    const [active] = (await env.engine.reserve(r, 1)).jobs;
    expect(active!.id).toBe('w');
    const at = env.clock.now();
    for (const [id, group, attempt] of [['d', 'x', 0], ['z', 'y', 0], ['w', 'y', 1]] as const) {
      expect(eventsOf(await env.engine.cancelJob(r, id))).toEqual([{ event: 'cancelled', data: { id, queue: r, group, state: 'cancelled', attempt, at } }]);
    }
  });

  it('a TTL expiry and the promotions of delayed jobs, by hand and by the tick; retries by hand', async () => {
    const q = await listenedQueue({ timeoutMs: HOUR }); // `busy` keeps its lease throughout
    await env.engine.enqueueAndReserve(q, { id: 'busy', group: 'g' }, 1); // holds g: `late` waits
    const late = await env.engine.enqueueAndReserve(q, { id: 'late', group: 'g', ttlMs: TTL }, 0);
    expect(eventsOf(late).map(({ event, data }) => [event, data.state])).toEqual([['added', 'waiting']]);
    await env.engine.enqueueAndReserve(q, { id: 'soon', group: 'h', delayMs: TTL }, 0);
    const byHand = await env.engine.enqueueAndReserve(q, { id: 'later', group: 'k', delayMs: HOUR / 2 }, 0);
    expect(eventsOf(byHand)).toEqual([{ event: 'added', data: { id: 'later', queue: q, group: 'k', state: 'delayed', attempt: 0, at: T0, runAt: T0 + HOUR / 2 } }]);

    env.clock.advance(5);
    const promoted = await env.engine.promoteJob(q, 'later');
    expect(promoted.state).toBe('waiting');
    expect(eventsOf(promoted)).toEqual([{ event: 'added', data: { id: 'later', queue: q, group: 'k', state: 'waiting', attempt: 0, at: T0 + 5 } }]);

    env.clock.set(T0 + TTL);
    const tick = await env.engine.tick(q);
    expect(eventsOf(tick)).toEqual([
      { event: 'expired', data: { id: 'late', queue: q, group: 'g', state: 'expired', attempt: 0, at: T0 + TTL, expiresAt: T0 + TTL } },
      { event: 'added', data: { id: 'soon', queue: q, group: 'h', state: 'waiting', attempt: 0, at: T0 + TTL } },
    ]);

    // A failed job retried by hand, and every failed job retried in bulk.
    const r = await listenedQueue({ maxAttempts: 1 });
    for (const id of ['x', 'y']) {
      await env.engine.enqueueAndReserve(r, { id, group: id }, 0);
      const [lease] = (await env.engine.reserve(r, 1)).jobs;
      await env.engine.fail(r, { ...ref(lease!), error: 'no' });
    }
    const retried = await env.engine.retryJob(r, 'x');
    expect(eventsOf(retried)).toEqual([{ event: 'added', data: { id: 'x', queue: r, group: 'x', state: 'waiting', attempt: 0, at: T0 } }]);
    const bulk = await env.engine.retryJobs(r, { state: 'failed' });
    expect(bulk).toMatchObject({ count: 1, done: true });
    expect(eventsOf(bulk).map(({ event, data }) => [event, data.id, data.state])).toEqual([['added', 'y', 'waiting']]);
  });

  it("a 429 (no attempt counted), a change of a job's start, a repeat's run", async () => {
    const q = await listenedQueue();
    const [lease] = (await env.engine.enqueueAndReserve(q, { id: 't', group: 'g' }, 1)).leased;
    const throttled = await env.engine.settle(q, [{ kind: 'fail', ...ref(lease!), error: 'slow down', status: 429, retryAfterMs: 2_000, spot: spotOf(lease!) }], 0);
    expect(eventsOf(throttled)).toEqual([
      { event: 'retrying', data: { id: 't', queue: q, group: 'g', state: 'waiting', attempt: 0, at: T0, error: 'slow down', retryAt: T0 + 2_000 } },
    ]);

    await env.engine.enqueueAndReserve(q, { id: 'u', group: 'h' }, 0);
    const delayed = await env.engine.updateJob(q, 'u', { delayMs: 5_000 });
    expect(eventsOf(delayed)).toEqual([{ event: 'added', data: { id: 'u', queue: q, group: 'h', state: 'delayed', attempt: 0, at: T0, runAt: T0 + 5_000 } }]);
    expect(eventsOf(await env.engine.updateJob(q, 'u', { data: { new: 1 } }))).toEqual([]); // no change of state
    const due = await env.engine.updateJob(q, 'u', { delayMs: 0 });
    expect(eventsOf(due)).toEqual([{ event: 'added', data: { id: 'u', queue: q, group: 'h', state: 'waiting', attempt: 0, at: T0 } }]);

    await env.engine.putRepeat(q, 'r', { group: 'r', every: 60_000 });
    env.clock.advance(60_000);
    const tick = await env.engine.tick(q);
    expect(tick.repeatsCreated).toBe(1);
    const runs = eventsOf(tick).filter(({ data }) => data.group === 'r');
    expect(runs).toEqual([{ event: 'added', data: { id: `repeat:r:${T0 + 60_000}`, queue: q, group: 'r', state: 'waiting', attempt: 0, at: T0 + 60_000 } }]);
  });

  it("a completion whose attempt its caller does not know: its record is read for the event's attempt", async () => {
    const q = await listenedQueue();
    const [lease] = (await env.engine.enqueueAndReserve(q, { id: 'a', group: 'g' }, 1)).leased;
    const spot = { ...spotOf(lease!), attempt: undefined };
    let settled: { events?: ScriptEvent[] } = {};
    const counts = await countsOf(env.admin, async () => (settled = await env.engine.settle(q, [{ kind: 'complete', ...ref(lease!), spot }], 0)));
    expect(eventsOf(settled).map(({ event, data }) => [event, data.attempt])).toEqual([['completed', 1]]);
    // The record's read (HMGET) and the lease's score (ZMSCORE) that a known attempt spares.
    expect(counts).toMatchObject({ zmscore: 1, hmget: 2 });
  });

  it('a partitioned queue: every partition is asked, and the events name the queue', async () => {
    const q = await newQueue({ partitions: 2 });
    await env.engine.wantEvents(q, T0 + HOUR);
    const groups = Array.from({ length: 8 }, (_, i) => `g${i}`);
    const added = await env.engine.enqueueBatchAndReserve(q, { jobs: groups.map((group) => ({ id: `j-${group}`, group })) }, 0);
    expect(new Set(added.parts.map((part) => part.tag)).size).toBe(2);
    expect(eventsOf(added).map(({ event, data }) => [event, data.queue, data.id]).sort()).toEqual(groups.map((g) => ['added', q, `j-${g}`]).sort());
    const leased = await env.engine.reserve(q, 8);
    expect(leased.jobs.length).toBeGreaterThan(0);
    expect(eventsOf(leased).map(({ data }) => data.id)).toEqual(leased.jobs.map((job) => job.id));
  });
});

describe('without the flag, or past it', () => {
  /** Every call of one job's life on queue `q`, with the commands each ran and what each answered. */
  async function lifeOf(q: string) {
    const counts: Record<string, CommandCounts> = {};
    const answers: Record<string, { events?: ScriptEvent[] }> = {};
    const step = async <T extends object>(name: string, run: () => Promise<T>): Promise<T> => {
      let done: T | undefined;
      counts[name] = await countsOf(env.admin, async () => (done = await run()));
      answers[name] = done!;
      return done!;
    };
    const solo = await step('enqueue solo', () => env.engine.enqueueAndReserve(q, { id: 'a', group: 'g' }, 1));
    const later = [{ id: 'c', group: 'h', delayMs: 500 }, { id: 'e', group: 'm', delayMs: HOUR }];
    await step('enqueue batch', () => env.engine.enqueueBatchAndReserve(q, { jobs: [{ id: 'b', group: 'g' }, ...later, { id: 'd', group: 'k' }] }, 0));
    await step('settle', () => env.engine.settle(q, [{ kind: 'complete', ...ref(solo.leased[0]!), spot: spotOf(solo.leased[0]!) }], 1));
    const [leased] = (await step('reserve', () => env.engine.reserve(q, 1))).jobs;
    await step('progress', () => env.engine.recordProgress(q, { ...ref(leased!), progress: 10 }));
    await step('fail', () => env.engine.fail(q, { ...ref(leased!), error: 'boom' }));
    env.clock.advance(BACKOFF);
    await step('tick', () => env.engine.tick(q)); // c's promotion, the retried job's group released
    const [again] = (await step('reserve again', () => env.engine.reserve(q, 1))).jobs;
    await step('complete', () => env.engine.complete(q, { ...ref(again!), result: 1 }));
    await step('promote', () => env.engine.promoteJob(q, 'e'));
    await step('cancel', () => env.engine.cancelJob(q, 'e'));
    await step('enqueue ttl', () => env.engine.enqueueAndReserve(q, { id: 't', group: 'g', ttlMs: TTL, delayMs: 2 * TTL }, 0));
    env.clock.advance(TTL);
    await step('tick ttl', () => env.engine.tick(q));
    return { counts, answers };
  }

  it('no call answers events; with the flag, every call runs the same commands but a completion, which keeps its job at most one command per event', async () => {
    const plain = await lifeOf(await newQueue());
    const past = await newQueue();
    await env.engine.wantEvents(past, T0 - 1);
    const lapsed = await lifeOf(past);
    const listened = await lifeOf(await listenedQueue());
    for (const life of [plain, lapsed]) {
      for (const [name, answer] of Object.entries(life.answers)) expect({ name, events: 'events' in answer }).toEqual({ name, events: false });
    }
    for (const [name, answer] of Object.entries(listened.answers)) expect({ name, events: (answer.events ?? []).length > 0 }).toEqual({ name, events: true });
    expect(lapsed.counts).toEqual(plain.counts);
    // A completion while events are wanted keeps its job for the retention (finish.lua keepResult):
    // its record read (ZMSCORE, HMGET), its ZADD to `results` (the HSET of the record replaces its
    // HDEL), and once a minute a trim. Every other call runs exactly the same commands; over the
    // whole life, at most one command more per event.
    const total = (counts: CommandCounts) => Object.values(counts).reduce((sum, n) => sum + n, 0);
    let extra = 0;
    let events = 0;
    for (const [name, counts] of Object.entries(listened.counts)) {
      events += listened.answers[name]!.events?.length ?? 0;
      if (name === 'settle' || name === 'complete') extra += total(counts) - total(plain.counts[name]!);
      else expect({ name, counts }).toEqual({ name, counts: plain.counts[name] });
    }
    expect(extra).toBeGreaterThan(0);
    expect(extra).toBeLessThanOrEqual(events);
  });

  it('a job completed while events are wanted is kept for the retention on a queue that keeps none', async () => {
    const q = await listenedQueue();
    const { leased } = await env.engine.enqueueAndReserve(q, { id: 'kept', group: 'g', data: { n: 1 } }, 1);
    await env.engine.complete(q, { ...ref(leased[0]!), result: { ok: true } });
    expect(await env.engine.getJob(q, 'kept')).toMatchObject({ id: 'kept', state: 'completed', result: { ok: true }, data: { n: 1 } });
    const plainQueue = await newQueue();
    const plainLease = (await env.engine.enqueueAndReserve(plainQueue, { id: 'gone', group: 'g' }, 1)).leased[0]!;
    await env.engine.complete(plainQueue, { ...ref(plainLease), result: 1 });
    await expect(env.engine.getJob(plainQueue, 'gone')).rejects.toMatchObject({ code: 'JOB_NOT_FOUND' });
  });

  it('want-events costs one script call: an HMGET of meta, and an HSET only when the time moves later', async () => {
    const q = await newQueue();
    expect(await countsOf(env.admin, () => env.engine.wantEvents(q, T0 + HOUR))).toEqual({ evalsha: 1, hmget: 1, hset: 1 });
    expect(await countsOf(env.admin, () => env.engine.wantEvents(q, T0 + 1))).toEqual({ evalsha: 1, hmget: 1 });
    expect(await env.engine.wantEvents(q, T0 + 1)).toEqual({ until: T0 + HOUR });
  });
});
