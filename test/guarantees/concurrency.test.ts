// Many reservers and producers against one queue at once, each with its own engine (its own
// @upstash/redis client through the REST bridge), as parallel Worker invocations would be.
// Every lease and enqueue is recorded; the checker then proves G1-G6 on the record. Each
// scenario runs several rounds with different seeds and shapes; two of them again over a pool of
// three databases with the queue in 8 partitions (docs/scaling-out.md), each engine with
// placements and partition counts of its own as an isolate has (G5 within each partition).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Engine, createEngine } from '../../src/core/engine';
import { partitionOf as groupPartition } from '../../src/core/store/partitions';
import { Placements, placePartitions, poolRunner } from '../../src/core/store/pool';
import { createRedis } from '../../src/core/store/redis';
import { QueueError } from '../../src/protocol/errors';
import type { LeasedJob, Settlement } from '../../src/core/engine/leases';
import { type Action, type Delivery, DeliveryChecker, type JobSpec } from '../helpers/checker';
import { T0, type TestClock, createQueue, testClock, testEngine } from '../helpers/engine';
import { hash, prng } from '../helpers/random';
import { adminClient, stack } from '../helpers/stack';
import { type PrivateStack, startPrivateStack } from '../helpers/worker';

interface Scenario {
  seed: number;
  jobs: number;
  groups: number;
  producers: number;
  reservers: number;
  /** Jobs a reserver asks for at once: 1..reserveMax, or exactly this with `fixedReserve`. */
  reserveMax: number;
  fixedReserve?: boolean;
  concurrency: number;
  keepCompleted: number;
  /** Jobs enqueued before the reservers start (the rest arrive while they run). */
  preload: number;
  /** explicit: increasing orderMs with some late arrivals that sort earlier; now: all equal. */
  orderMs: 'explicit' | 'now';
  /** moving: retries use the real backoff and a cron loop moves the clock and ticks. */
  clock: 'fixed' | 'moving';
  /** The queue's partitions (docs/scaling-out.md#partitioned-queues). @default 1 */
  partitions?: number;
}

/** Lets other reservers run while a job is "being processed", so real overlaps would show. */
async function turns(n: number): Promise<void> {
  for (let i = 0; i < n; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}

/** The endpoint's answer, fixed per (seed, job, attempt) whatever the interleaving. */
function decide(s: Scenario, job: Pick<LeasedJob, 'id' | 'attempt'>): { action: Action; retryAfterMs?: number } {
  const r = hash(`${s.seed}/${job.id}/${job.attempt}`);
  if (r < 0.7) return { action: 'complete' };
  if (r < 0.9) {
    // A fixed clock never releases a backoff: retry at once. A moving clock uses the backoff.
    if (s.clock === 'fixed') return { action: 'retry', retryAfterMs: 0 };
    return r < 0.85 ? { action: 'retry' } : { action: 'retry', retryAfterMs: Math.floor(r * 1000) };
  }
  return { action: 'fail' };
}

function outcomeOf(d: Delivery): Exclude<Settlement, { kind: 'release' }> {
  const { id, lease } = d.job;
  if (d.action === 'complete') return { kind: 'complete', id, lease: lease.token, result: { ok: id } };
  const retry = d.action === 'retry';
  return { kind: 'fail', id, lease: lease.token, error: 'endpoint said no', retry, retryAfterMs: retry ? d.retryAfterMs : undefined };
}

interface Run {
  s: Scenario;
  /** A new engine, as another invocation gets it (testEngine: the shared stack). */
  newEngine: (clock: TestClock) => Engine;
  queue: string;
  clock: TestClock;
  checker: DeliveryChecker;
  producing: number;
  /** Set when a loop failed or the run stalled: every loop stops. */
  stopped: boolean;
  stalled: boolean;
  staleRefused: number;
  activeSamples: number[];
}

const done = (run: Run) => run.stopped || (run.producing === 0 && run.checker.pending() === 0);

/** The jobs of a round, in the order their (single) producer enqueues them. */
function planJobs(s: Scenario): JobSpec[][] {
  const rand = prng(s.seed);
  const perProducer: JobSpec[][] = Array.from({ length: s.producers }, () => []);
  for (let i = 0; i < s.jobs; i++) {
    const g = Math.floor(rand() * s.groups);
    // 5% arrive late: they sort before up to ~30 jobs of their group, often before the one
    // in flight (a new head for a leased group must wait for it, not start beside it).
    const late = rand() < 0.05 ? 1 + Math.floor(rand() * 300 * s.groups) : 0;
    const orderMs = s.orderMs === 'now' ? T0 : T0 - 10 * s.jobs + 10 * i - late;
    const maxAttempts = 1 + Math.floor(rand() * 3);
    perProducer[g % s.producers]!.push({ id: `j${i}`, group: `grp-${g}`, orderMs, maxAttempts });
  }
  return perProducer;
}

/** One producer: the groups it owns, in single enqueues and batches of varying size. */
async function produce(run: Run, engine: Engine, jobs: JobSpec[], seed: number, from: number, to: number) {
  const rand = prng(seed);
  const toInput = (j: JobSpec) => ({
    id: j.id,
    group: j.group,
    data: { id: j.id },
    maxAttempts: j.maxAttempts,
    ...(run.s.orderMs === 'explicit' ? { orderMs: j.orderMs } : {}),
  });
  let i = from;
  while (i < to) {
    let chunk = rand() < 0.3 ? jobs.slice(i, i + 1) : jobs.slice(i, i + 2 + Math.floor(rand() * 150));
    chunk = chunk.slice(0, to - i);
    i += chunk.length;
    // With completed jobs kept, an id is never forgotten: re-sending one must be a duplicate (G4).
    if (run.s.keepCompleted > 0 && rand() < 0.1) chunk = [...chunk, jobs[Math.floor(rand() * i)]!];
    const inputs = chunk.map(toInput);
    if (chunk.length === 1) await run.checker.enqueue(chunk, async () => [await engine.enqueue(run.queue, inputs[0])]);
    else await run.checker.enqueue(chunk, () => engine.enqueueBatch(run.queue, inputs));
    await turns(Math.floor(rand() * 3));
  }
}

/** One reserver: a drain (`batch`: settle outcomes + reserve) or per-job callbacks (`single`). */
async function reserve(run: Run, name: string, mode: 'batch' | 'single', seed: number) {
  const engine = run.newEngine(run.clock);
  const rand = prng(seed);
  const k = run.s.fixedReserve ? run.s.reserveMax : 1 + Math.floor(rand() * run.s.reserveMax);
  const spent: Settlement[] = []; // outcomes already sent: replaying one must be refused (fencing)
  let held: Delivery[] = [];
  while (!done(run)) {
    if (held.length === 0) {
      held = (await run.checker.exchange(name, [], async () => ({ results: [], ...(await engine.reserve(run.queue, k)) }))).deliveries;
      if (held.length === 0) await turns(1);
      continue;
    }
    await turns(Math.floor(rand() * 4));
    const ending = mode === 'batch' ? held : held.slice(0, 1);
    for (const d of ending) {
      const { action, retryAfterMs } = decide(run.s, d.job);
      run.checker.finish(d, action, retryAfterMs);
    }
    const outcomes = ending.map(outcomeOf);
    const stale = mode === 'batch' && spent.length > 0 && rand() < 0.1 ? [spent[Math.floor(rand() * spent.length)]!] : [];
    const { deliveries, answer } = await run.checker.exchange(name, ending, async () => {
      if (mode === 'batch') return engine.settle(run.queue, [...outcomes, ...stale], k);
      const o = outcomes[0]!;
      try {
        const r = o.kind === 'complete' ? await engine.complete(run.queue, o, 1) : await engine.fail(run.queue, o, 1);
        return { results: [{ id: o.id, state: r.state }], jobs: r.next };
      } catch (error) {
        if (!(error instanceof QueueError && error.code === 'LEASE_LOST')) throw error;
        return { results: [{ id: o.id, state: 'LEASE_LOST' }], jobs: [] };
      }
    });
    // No lease can expire here: a live lease refused means two holders. Stop; the checker names them.
    if (answer.results.slice(0, ending.length).some((r) => r.state === 'LEASE_LOST')) run.stopped = true;
    for (const r of answer.results.slice(ending.length)) {
      expect(r.state, `replayed outcome for ${r.id}`).toBe('LEASE_LOST');
      run.staleRefused++;
    }
    spent.push(...outcomes);
    held = mode === 'batch' ? deliveries : [...held.slice(1), ...deliveries];
  }
}

/** The cron and a dashboard: ticks, reads counts (G6 in Redis) and, if asked, moves the clock. */
async function watch(run: Run) {
  const engine = run.newEngine(run.clock);
  let quiet = 0;
  let lastPending = -1;
  while (!done(run)) {
    if (run.s.clock === 'moving') run.clock.advance(25);
    await engine.tick(run.queue);
    run.activeSamples.push((await engine.getQueue(run.queue)).counts.active);
    // No job has ended in a long while with nothing left to enqueue: stop and let the checker
    // name the stuck jobs instead of hanging until the test times out.
    const pending = run.checker.pending();
    quiet = pending === lastPending && run.producing === 0 ? quiet + 1 : 0;
    lastPending = pending;
    if (quiet > 2000) run.stopped = run.stalled = true;
    await turns(1);
  }
}

/**
 * @param newEngine how each producer, reserver and watcher gets its engine
 * @param name the queue's name (a new unique one when omitted)
 */
async function runScenario(s: Scenario, newEngine: (clock: TestClock) => Engine = testEngine, name?: string) {
  const clock = testClock();
  const admin = newEngine(clock);
  const config = {
    concurrency: s.concurrency,
    keepCompleted: s.keepCompleted,
    keepFailed: 100_000,
    // Leases never expire here (G3 under expiry is a regression test); the clock moves < 1 day.
    timeoutMs: 86_400_000,
    backoff: { type: 'exponential', delayMs: 200, maxDelayMs: 1000, jitter: true },
    partitions: s.partitions ?? 1,
  } as const;
  const queue = name ?? (await createQueue(admin, config));
  if (name) await admin.putQueue(name, { endpoint: 'http://127.0.0.1:9/jobs', ...config });
  const run: Run = { s, newEngine, queue, clock, checker: new DeliveryChecker(), producing: 0, stopped: false, stalled: false, staleRefused: 0, activeSamples: [] };
  const plans = planJobs(s);
  const producers = plans.map((jobs, p) => ({ engine: newEngine(clock), jobs, cut: Math.floor((jobs.length * s.preload) / s.jobs), p }));
  run.producing = producers.length;

  await Promise.all(producers.map(({ engine, jobs, cut, p }) => produce(run, engine, jobs, s.seed * 100 + p, 0, cut)));
  const rest = producers.map(async ({ engine, jobs, cut, p }) => {
    await produce(run, engine, jobs, s.seed * 100 + 50 + p, cut, jobs.length);
    run.producing--;
  });
  const reservers = Array.from({ length: s.reservers }, (_, r) => reserve(run, `r${r}`, r % 2 === 0 ? 'batch' : 'single', s.seed * 1000 + r));
  // One loop failing stops the others, so none keeps running after the test has failed.
  const stopOnError = (p: Promise<unknown>) =>
    p.catch((error: unknown) => {
      run.stopped = true;
      throw error;
    });
  await Promise.all([...rest, ...reservers, watch(run)].map(stopOnError));

  const checker = run.checker;
  expect(run.stalled, `stalled with ${checker.pending()} jobs unfinished`).toBe(false);
  // G5 holds within each partition (a partitioned queue's partitions are served side by side).
  const partitionOf = (group: string) => groupPartition(group, s.partitions ?? 1);
  expect(checker.violations({ concurrency: s.concurrency, oldestFirst: true, partitionOf })).toEqual([]);
  // The order checks decided many comparisons: they did not pass by skipping every race.
  expect(checker.decided.groupOrder).toBeGreaterThan(0);
  expect(checker.decided.oldestFirst).toBeGreaterThan(0);
  expect(Math.max(...run.activeSamples)).toBeLessThanOrEqual(s.concurrency);
  expect(checker.accepted()).toHaveLength(s.jobs);

  const { completed, failed } = checker.totals();
  expect(completed + failed).toBe(s.jobs);
  const { counts } = await admin.getQueue(queue);
  expect(counts).toEqual({ waiting: 0, delayed: 0, active: 0, groups: 0, failed, cancelled: 0, expired: 0, completed: s.keepCompleted > 0 ? completed : 0 });
  await admin.deleteQueue(queue);
  return run;
}

const base = { producers: 4, preload: 0, keepCompleted: 0, orderMs: 'explicit', clock: 'fixed' } as const;

describe('many reservers and producers at once (G1 G2 G3 G4 G5 G6)', () => {
  const rounds: Scenario[] = [
    { ...base, seed: 1, jobs: 3000, groups: 50, reservers: 12, reserveMax: 4, concurrency: 32, preload: 1000 },
    { ...base, seed: 2, jobs: 3000, groups: 200, reservers: 16, reserveMax: 8, concurrency: 100, keepCompleted: 100_000, orderMs: 'now' },
    { ...base, seed: 3, jobs: 2000, groups: 100, reservers: 8, reserveMax: 5, concurrency: 16, producers: 2, clock: 'moving' },
    { ...base, seed: 4, jobs: 3000, groups: 120, reservers: 16, reserveMax: 3, concurrency: 1000, producers: 6, preload: 500 },
  ];

  it.each(rounds)('round $seed: $jobs jobs over $groups groups, $reservers reservers, concurrency $concurrency, clock $clock', async (s) => {
    const run = await runScenario(s);
    // The round did what it claims: retries, terminal failures and refused replays happened.
    expect(run.checker.totals().retried).toBeGreaterThan(0);
    expect(run.checker.totals().failed).toBeGreaterThan(0);
    expect(run.staleRefused).toBeGreaterThan(0);
  });
});

describe('capacity: concurrency 3 with 16 reservers (G6)', () => {
  const rounds: Scenario[] = [
    { ...base, seed: 11, jobs: 600, groups: 60, reservers: 16, reserveMax: 3, fixedReserve: true, concurrency: 3, preload: 300 },
    { ...base, seed: 12, jobs: 600, groups: 20, reservers: 16, reserveMax: 3, fixedReserve: true, concurrency: 3, preload: 300, orderMs: 'now' },
    { ...base, seed: 13, jobs: 600, groups: 200, reservers: 16, reserveMax: 3, fixedReserve: true, concurrency: 3, preload: 300 },
  ];

  it.each(rounds)('round $seed: never more than 3 in flight ($jobs jobs over $groups groups)', async (s) => {
    const run = await runScenario(s);
    // The cap was reached (the first reservation takes 3 of the preloaded heads) and held.
    expect(run.checker.maxInFlight()).toBe(3);
    expect(Math.max(...run.activeSamples)).toBeLessThanOrEqual(3);
  });
});

describe('over a pool of three databases, the queue in 8 partitions (G1 G2 G3 G4 G5 G6)', () => {
  let extra: PrivateStack[] = [];
  beforeAll(async () => {
    extra = [await startPrivateStack(), await startPrivateStack()];
  });
  afterAll(async () => {
    for (const database of extra) await database.close();
  });
  // Database 0 is the shared stack; every engine routes by its own placements, as isolates do.
  const poolEngine = (clock: TestClock) => {
    const { restUrl, restToken } = stack();
    const databases = [{ url: restUrl, token: restToken }, ...extra.map((database) => ({ url: database.restUrl, token: database.restToken }))].map(createRedis);
    return createEngine({ redis: poolRunner(databases, new Placements(3), true), now: clock.now, allowHttpLoopback: true });
  };
  const rounds: Scenario[] = [
    { ...base, seed: 21, jobs: 2000, groups: 100, reservers: 12, reserveMax: 4, concurrency: 32, preload: 500, partitions: 8 },
    { ...base, seed: 22, jobs: 600, groups: 60, reservers: 16, reserveMax: 3, fixedReserve: true, concurrency: 8, preload: 300, partitions: 8 },
  ];

  it.each(rounds)('round $seed: $jobs jobs over $groups groups, concurrency $concurrency, 8 partitions', async (s) => {
    const name = `pool-round-${s.seed}-${process.pid}`;
    const run = await runScenario(s, poolEngine, name);
    // Each partition recorded where placement put it: the 8 spread over the 3 databases.
    const control = adminClient();
    const recorded = await Promise.all(Array.from({ length: 8 }, async (_, p) => Number(await control.call(['HGET', 'gq:placement', `${name}:${p}`]))));
    control.close();
    expect(recorded).toEqual(placePartitions(name, 8, 3));
    expect(new Set(recorded).size).toBe(3);
    expect(run.checker.totals().retried).toBeGreaterThan(0);
    expect(Math.max(...run.activeSamples)).toBeLessThanOrEqual(s.concurrency);
    // The extra databases' bridges run in this process, beside the reservers: slower than the rest.
  }, 180_000);
});
