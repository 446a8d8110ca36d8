// G1, G2, G3 and G6 end to end with three Workers at once: three workerd processes (one
// Miniflare each) on one redis-server through the REST bridge, as Cloudflare runs many isolates
// against one Upstash database. Producers spread 3,000 jobs over 50 groups across the three
// (singles and batches, explicit orderMs with late arrivals and ties, re-sent ids); each
// Worker's cron fires every few hundred ms meanwhile. The endpoint answers after random
// latencies, sometimes 500 (retried, or failed at once with groupq-retry: false), sometimes never
// (the pushing Worker gives up at the job's timeoutMs), sometimes 202 and later a heartbeat and a
// complete/fail callback sent to a random Worker, sometimes 202 and then silence (the lease
// expires and some Worker's tick retries the job). Everything the endpoint sees goes into the
// delivery checker (test/helpers/endpoint-checker.ts), which then judges the run with the final
// states the API lists: one attempt of a group in flight at a time (G1), jobs started in
// (orderMs, enqueue order) with a retried job kept at its group's head (G2), every job completed
// or failed with attempts 1, 2, ... each ending as its outcome calls for (G3), re-sent ids
// answered as duplicates (G4), never more than the queue's concurrency in flight (G6).
// The same run goes again over a pool of three databases with the queue in 8 partitions
// (docs/scaling-out.md): each group in its partition, the partitions spread over the databases,
// every command of the three Workers routed by placement, the cron over three due indexes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GroupqClient, type JobInput, type QueueClient } from '../../src/client';
import type { Delivery, JobSpec } from '../helpers/checker';
import { type Endpoint, type Received, type Reply, startEndpoint } from '../helpers/endpoint';
import { EndpointChecker } from '../helpers/endpoint-checker';
import { createRespClient } from '../../scripts/resp.mjs';
import { placePartitions, rendezvous } from '../../src/core/store/pool';
import { hash, prng } from '../helpers/random';
import { ADMIN_TOKEN, type PrivateStack, type RunningWorker, startPrivateStack, startWorkers } from '../helpers/worker';
import { callback, sleep } from '../delivery/support';

const SEED = 20_260_427;
const WORKERS = 3;
const JOBS = 3000;
const GROUPS = 50;
const PRODUCERS = 6;
const CONCURRENCY = 20;
/** The queue's: long against the endpoint's latencies (< 100 ms) and a loaded machine's stalls. */
const TIMEOUT_MS = 10_000;
/** Pushes the endpoint never answers: a share of all attempts. */
const HANG = 0.01;
/** A job that meets such a push has this timeout of its own, so that waiting it out costs little. */
const HANG_TIMEOUT_MS = 1500;
/** Gives up well within the test's limit, so that a stuck run says which jobs are stuck. */
const RUN_LIMIT_MS = 100_000;
const TEST_LIMIT_MS = 150_000;

/** The endpoint's draws for one attempt: fixed per (seed, job, attempt) whatever the interleaving. */
const drawsFor = (id: string, attempt: number) => prng(hash(`${SEED}/${id}/${attempt}`) * 2 ** 32);
/** Whether one of the job's attempts will be a push the endpoint never answers. */
const meetsHang = (id: string, maxAttempts: number) => Array.from({ length: maxAttempts }, (_, a) => drawsFor(id, a + 1)() < HANG).includes(true);

interface Tally {
  enqueues: number[];
  callbacks: number[];
  cronPasses: number[];
  pushes: Map<string, number>;
  /** Pushes whose caller hung up before an answer: the Worker's timeout (hangs, late answers). */
  hungUp: number;
  answers: Record<'ok' | 'error500' | 'failNow' | 'hang' | 'async' | 'asyncFail' | 'abandoned' | 'heartbeat', number>;
}

interface Run {
  workers: RunningWorker[];
  /** The queue through each Worker. */
  queues: QueueClient[];
  checker: EndpointChecker;
  tally: Tally;
  /** Callback answers and cron runs that were not what the protocol promises. */
  problems: string[];
  /** Async jobs being worked on after their 202. */
  tasks: Promise<void>[];
  /** Attempts taken with 202 and left to expire, as `${id}#${attempt}`. */
  abandoned: Set<string>;
  /** Producers and crons stop when set (the run is over, or a producer failed). */
  stopped: boolean;
}

function newRun(workers: RunningWorker[], queues: QueueClient[]): Run {
  const tally: Tally = {
    enqueues: workers.map(() => 0),
    callbacks: workers.map(() => 0),
    cronPasses: workers.map(() => 0),
    pushes: new Map(),
    hungUp: 0,
    answers: { ok: 0, error500: 0, failNow: 0, hang: 0, async: 0, asyncFail: 0, abandoned: 0, heartbeat: 0 },
  };
  return { workers, queues, checker: new EndpointChecker(), tally, problems: [], tasks: [], abandoned: new Set(), stopped: false };
}

/** The Worker that pushed a job: each one's callback URLs lead back to it. */
function pusherOf(run: Run, r: Received): string {
  const k = run.workers.findIndex((w) => w.url === new URL(r.job.callbacks.complete).origin);
  return k < 0 ? 'unknown' : `w${k}`;
}

/** A lease callback sent to a Worker picked at random, whichever one pushed the job. */
async function call(run: Run, r: Received, kind: 'heartbeat' | 'complete' | 'fail', body: Record<string, unknown>, rand: () => number) {
  const k = Math.floor(rand() * run.workers.length);
  run.tally.callbacks[k]!++;
  const answer = await callback(`${run.workers[k]!.url}${new URL(r.job.callbacks[kind]).pathname}`, { lease: r.job.lease.token, ...body });
  if (answer.status !== 200) run.problems.push(`${kind} of ${r.job.id}#${r.job.attempt} at w${k}: ${answer.status} ${JSON.stringify(answer.json)}`);
  return answer;
}

/** After a 202: heartbeat now and then, then complete or fail, or fall silent. */
async function finishLater(run: Run, r: Received, d: Delivery, rand: () => number) {
  const { checker, tally } = run;
  await sleep(Math.floor(rand() * 40));
  // The Worker hung up before the 202 reached it: its timeout failed the attempt.
  if (checker.ended(d)) return;
  const roll = rand();
  if (roll < 0.05) {
    // A heartbeat brings the deadline near (now + 1 s), then nothing: the lease must expire.
    tally.answers.abandoned++;
    tally.answers.heartbeat++;
    run.abandoned.add(`${r.job.id}#${r.job.attempt}`);
    const beat = await call(run, r, 'heartbeat', { extendMs: 1000 }, rand);
    checker.abandoned(d, beat.status === 200 ? (beat.json.expiresAt as number) : r.job.lease.expiresAt);
    return;
  }
  if (roll < 0.35) {
    tally.answers.heartbeat++;
    await call(run, r, 'heartbeat', { extendMs: 10_000 }, rand);
    await sleep(Math.floor(rand() * 40));
  }
  let answer;
  if (roll < 0.18) {
    tally.answers.asyncFail++;
    const retry = roll >= 0.15;
    checker.finish(d, retry ? 'retry' : 'fail');
    answer = await call(run, r, 'fail', { error: 'async failure', retry }, rand);
  } else {
    checker.finish(d, 'complete');
    answer = await call(run, r, 'complete', { result: { async: r.job.id } }, rand);
  }
  if (answer.status === 200) checker.settledAs(d, answer.json.state as string);
}

/** The endpoint: every push is recorded; its answer is fixed per (seed, job, attempt). */
async function respond(run: Run, r: Received): Promise<Reply> {
  const { checker, tally } = run;
  const d = checker.received(r.job, pusherOf(run, r));
  tally.pushes.set(d.reserver, (tally.pushes.get(d.reserver) ?? 0) + 1);
  // The Worker hung up before an answer: its timeout failed the attempt.
  r.signal.addEventListener('abort', () => {
    tally.hungUp++;
    if (!checker.ended(d)) checker.timedOut(d);
  });
  const rand = drawsFor(r.job.id, r.job.attempt);
  const roll = rand();
  if (roll < HANG) {
    tally.answers.hang++;
    checker.timedOut(d);
    return { hang: true };
  }
  if (roll < 0.21) {
    tally.answers.async++;
    run.tasks.push(finishLater(run, r, d, rand));
    return { status: 202 };
  }
  await sleep(Math.floor(rand() * 30));
  if (checker.ended(d)) return { hang: true }; // too late: the Worker gave up meanwhile
  if (roll < 0.26) {
    tally.answers.error500++;
    checker.finish(d, 'retry');
    return { status: 500, body: 'flaky' };
  }
  if (roll < 0.27) {
    tally.answers.failNow++;
    checker.finish(d, 'fail');
    return { status: 500, headers: { 'groupq-retry': 'false' }, body: 'poison' };
  }
  tally.answers.ok++;
  checker.finish(d, 'complete');
  return { status: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ by: d.reserver }) };
}

/** One producer: singles and batches, each to a Worker picked at random. */
async function produce(run: Run, p: number, count: number) {
  const rand = prng(SEED + p);
  const sent: JobSpec[] = [];
  let made = 0;
  while (made < count && !run.stopped) {
    const size = Math.min(count - made, rand() < 0.4 ? 1 : 2 + Math.floor(rand() * 39));
    const tie = Date.now() - Math.floor(rand() * 2000); // some jobs of a batch share it
    const specs: JobSpec[] = Array.from({ length: size }, () => {
      const late = rand() < 0.05 ? Math.floor(rand() * 5000) : 0; // sorts before jobs already queued
      const orderMs = size > 1 && rand() < 0.3 ? tie : Date.now() - late;
      return { id: `p${p}-${made++}`, group: `g${Math.floor(rand() * GROUPS)}`, orderMs, maxAttempts: 1 + Math.floor(rand() * 4) };
    });
    // A job sent again (a producer unsure its enqueue went through) must come back a duplicate.
    if (size > 1 && sent.length > 0 && rand() < 0.1) specs.push(sent[Math.floor(rand() * sent.length)]!);
    const inputs: JobInput[] = specs.map(({ id, group, orderMs, maxAttempts }) => ({
      ...{ id, group, orderMs, maxAttempts, data: { p, id } },
      ...(meetsHang(id, maxAttempts) ? { timeoutMs: HANG_TIMEOUT_MS } : {}),
    }));
    const k = Math.floor(rand() * run.workers.length);
    run.tally.enqueues[k]!++;
    const q = run.queues[k]!;
    await run.checker.enqueue(specs, async () => (inputs.length === 1 ? [await q.add(inputs[0]!)] : q.addBatch(inputs)));
    sent.push(...specs);
  }
}

/** A Worker's cron trigger, fired every 150-350 ms until the run stops; at most two runs at once. */
async function cron(run: Run, k: number) {
  const rand = prng(SEED * 7 + k);
  const open = new Set<Promise<void>>();
  while (!run.stopped) {
    if (open.size < 2) {
      const pass: Promise<void> = run.workers[k]!
        .scheduled()
        .then(
          () => void run.tally.cronPasses[k]!++,
          (error: unknown) => void run.problems.push(`cron of w${k}: ${String(error)}`),
        )
        .finally(() => open.delete(pass));
      open.add(pass);
    }
    await sleep(150 + Math.floor(rand() * 200));
  }
  await Promise.all(open);
}

/** Looks at the counts, asking each Worker in turn, until every job is completed or failed. */
async function untilAllEnded(run: Run, producing: () => boolean, started: number) {
  let counts = await run.queues[0]!.counts();
  for (let look = 0; producing() || counts.completed + counts.failed < JOBS || counts.active > 0; look++) {
    if (run.stopped || Date.now() - started > RUN_LIMIT_MS) return;
    await sleep(250);
    counts = await run.queues[look % run.workers.length]!.counts();
  }
}

/** Every job the API lists as completed or failed, with that state. */
async function finalStates(queue: QueueClient): Promise<Map<string, string>> {
  const states = new Map<string, string>();
  for (const state of ['completed', 'failed'] as const) {
    for await (const job of queue.listJobs({ state, limit: 1000 })) states.set(job.id, job.state);
  }
  return states;
}

const SETUPS = [
  { databases: 1, partitions: 1, title: 'one Redis' },
  { databases: 3, partitions: 8, title: 'a pool of three databases, the queue in 8 partitions' },
];

for (const { databases, partitions, title } of SETUPS) describe(`three Workers on ${title} at once (G1 G2 G3 G4 G6)`, () => {
  let stacks: PrivateStack[];
  let workers: RunningWorker[];
  let queues: QueueClient[];
  let endpoint: Endpoint;
  let name: string;
  beforeAll(async () => {
    stacks = [];
    for (let i = 0; i < databases; i++) stacks.push(await startPrivateStack());
    const pool = stacks.slice(1).map(({ restUrl, restToken }) => ({ url: restUrl, token: restToken }));
    workers = await startWorkers(stacks[0]!, WORKERS, databases === 1 ? {} : { GROUPQ_REDIS_POOL: JSON.stringify(pool) });
    name = databases === 1 ? 'multi' : 'multi-pool';
    queues = workers.map((w) => new GroupqClient({ url: w.url, token: ADMIN_TOKEN, retries: 0 }).queue(name));
    endpoint = await startEndpoint();
  });
  afterAll(async () => {
    await endpoint?.close();
    for (const w of workers ?? []) await w.dispose();
    for (const stack of stacks ?? []) await stack.close();
  });

  it(`${JOBS} jobs over ${GROUPS} groups through ${WORKERS} Workers, with retries, hangs, expiries and async callbacks`, async () => {
    const run = newRun(workers, queues);
    const { checker, tally } = run;
    endpoint.handle((r) => respond(run, r));
    const started = Date.now();
    await queues[0]!.configure({
      endpoint: endpoint.url,
      concurrency: CONCURRENCY,
      timeoutMs: TIMEOUT_MS,
      backoff: { type: 'exponential', delayMs: 50, maxDelayMs: 400, jitter: true },
      keepCompleted: 10_000,
      keepFailed: 10_000,
      partitions,
    });
    const crons = workers.map((_, k) => cron(run, k));
    let producing = true;
    const producers = Promise.all(Array.from({ length: PRODUCERS }, (_, p) => produce(run, p, JOBS / PRODUCERS))).finally(() => {
      producing = false;
    });
    producers.catch(() => (run.stopped = true));
    await untilAllEnded(run, () => producing, started);
    const elapsedMs = Date.now() - started;
    run.stopped = true;
    await producers;
    await Promise.all(crons);
    await Promise.all(run.tasks);

    checker.conclude(await finalStates(queues[1]!));
    const violations = checker.violations({ concurrency: CONCURRENCY });
    const totals = checker.totals();
    const summary = { ...totals, maxInFlight: checker.maxInFlight(), orderDecided: checker.decided.groupOrder, ...tally, pushes: Object.fromEntries(tally.pushes) };
    console.log(`multi-worker: ${elapsedMs} ms; ${JSON.stringify(summary)}`);

    expect({ violations, problems: run.problems }).toEqual({ violations: [], problems: [] });
    expect(checker.accepted()).toHaveLength(JOBS);
    expect(totals.completed + totals.failed).toBe(JOBS);
    expect(await queues[2]!.counts()).toEqual({ waiting: 0, delayed: 0, active: 0, groups: 0, completed: totals.completed, failed: totals.failed, cancelled: 0, expired: 0 });

    // The run did what it claims: every Worker took enqueues, callbacks and cron passes and
    // pushed jobs; groups ran side by side; the order check decided many pairs; each kind of
    // answer happened; an expired lease was retried through another Worker than the one that
    // had pushed it.
    for (const k of workers.keys()) {
      expect(tally.enqueues[k]).toBeGreaterThan(0);
      expect(tally.callbacks[k]).toBeGreaterThan(0);
      expect(tally.cronPasses[k]).toBeGreaterThan(0);
      expect(tally.pushes.get(`w${k}`)).toBeGreaterThan(0);
    }
    expect(checker.maxInFlight()).toBeGreaterThan(1);
    expect(checker.decided.groupOrder).toBeGreaterThan(JOBS);
    for (const count of Object.values(tally.answers)) expect(count).toBeGreaterThan(0);
    expect(totals.retried).toBeGreaterThan(0);
    expect(totals.failed).toBeGreaterThan(0);
    const elsewhere = checker.accepted().filter((j) => {
      const ds = checker.deliveriesOf(j.id);
      return ds.some((d, i) => run.abandoned.has(`${j.id}#${d.job.attempt}`) && ds[i + 1] !== undefined && ds[i + 1]!.reserver !== d.reserver);
    });
    expect(elsewhere.length).toBeGreaterThan(0);
    // Each partition's keys are on the database placement chose for it, and only there (the
    // root, its config, where the queue's name scores highest).
    const tags = partitions === 1 ? [name] : [name, ...Array.from({ length: partitions }, (_, p) => `${name}:${p}`)];
    const homes = partitions === 1 ? [0] : [rendezvous(name, databases), ...placePartitions(name, partitions, databases)];
    if (partitions > 1) expect(new Set(homes.slice(1)).size).toBe(databases);
    for (const [i, stack] of stacks.entries()) {
      const redis = createRespClient({ port: stack.redisPort });
      for (const [t, tag] of tags.entries()) expect(Number(await redis.call(['EXISTS', `gq:{${tag}}:meta`])), tag).toBe(homes[t] === i ? 1 : 0);
      redis.close();
    }
  }, TEST_LIMIT_MS);
});
