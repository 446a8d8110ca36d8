// The run of test/guarantees/multi-worker.test.ts and multi-server.test.ts: several groupq
// instances (Workers in workerd, or `groupq serve` processes) on one database or pool, each
// taking enqueues, lease callbacks and scheduler runs at once. Producers spread 3,000 jobs over
// 50 groups across the instances (singles and batches, explicit orderMs with late arrivals and
// ties, re-sent ids). The endpoint answers after random latencies, sometimes 500 (retried, or
// failed at once with groupq-retry: false), sometimes never (the pushing instance gives up at the
// job's timeoutMs), sometimes 202 and later a heartbeat and a complete/fail callback sent to a
// random instance, sometimes 202 and then silence (the lease expires and some instance's
// scheduler retries the job). An instance with `scheduled` has its cron fired from here every
// few hundred ms (a Worker); one without runs its own scheduler (a server). Everything the
// endpoint sees goes into the delivery checker (endpoint-checker.ts), which then judges the run
// with the final states the API lists: G1, G2, G3, G4 and G6 (see multi-worker.test.ts).
import { expect } from 'vitest';
import { GroupqClient, type JobInput, type QueueClient } from '../../src/client';
import { callback, sleep } from '../delivery/support';
import type { Delivery, JobSpec } from './checker';
import type { Endpoint, Received, Reply } from './endpoint';
import { EndpointChecker } from './endpoint-checker';
import { hash, prng } from './random';
import { ADMIN_TOKEN } from './worker';

const SEED = 20_260_427;
export const JOBS = 3000;
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
/** A test that runs runMulti gives itself this long. */
export const MULTI_TEST_LIMIT_MS = 150_000;

/** One groupq instance of the run: its origin, and its cron trigger if the run fires it. */
export interface Instance {
  url: string;
  /** Fires the cron and waits for it; absent: the instance runs its own scheduler. */
  scheduled?: () => Promise<void>;
}

/** The endpoint's draws for one attempt: fixed per (seed, job, attempt) whatever the interleaving. */
const drawsFor = (id: string, attempt: number) => prng(hash(`${SEED}/${id}/${attempt}`) * 2 ** 32);
/** Whether one of the job's attempts will be a push the endpoint never answers. */
const meetsHang = (id: string, maxAttempts: number) => Array.from({ length: maxAttempts }, (_, a) => drawsFor(id, a + 1)() < HANG).includes(true);

export interface Tally {
  enqueues: number[];
  callbacks: number[];
  /** Cron passes fired from here (instances with `scheduled`; 0 for the others). */
  cronPasses: number[];
  pushes: Map<string, number>;
  /** Pushes whose caller hung up before an answer: the instance's timeout (hangs, late answers). */
  hungUp: number;
  answers: Record<'ok' | 'error500' | 'failNow' | 'hang' | 'async' | 'asyncFail' | 'abandoned' | 'heartbeat', number>;
}

interface Run {
  instances: Instance[];
  /** The queue through each instance. */
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

/** The name the checker gives instance `k`, as the pusher of a job. */
const nameOf = (k: number) => `i${k}`;

function newRun(instances: Instance[], queue: string): Run {
  const tally: Tally = {
    enqueues: instances.map(() => 0),
    callbacks: instances.map(() => 0),
    cronPasses: instances.map(() => 0),
    pushes: new Map(),
    hungUp: 0,
    answers: { ok: 0, error500: 0, failNow: 0, hang: 0, async: 0, asyncFail: 0, abandoned: 0, heartbeat: 0 },
  };
  const queues = instances.map((w) => new GroupqClient({ url: w.url, token: ADMIN_TOKEN, retries: 0 }).queue(queue));
  return { instances, queues, checker: new EndpointChecker(), tally, problems: [], tasks: [], abandoned: new Set(), stopped: false };
}

/** The instance that pushed a job: each one's callback URLs lead back to it. */
function pusherOf(run: Run, r: Received): string {
  const k = run.instances.findIndex((w) => w.url === new URL(r.job.callbacks.complete).origin);
  return k < 0 ? 'unknown' : nameOf(k);
}

/** A lease callback sent to an instance picked at random, whichever one pushed the job. */
async function call(run: Run, r: Received, kind: 'heartbeat' | 'complete' | 'fail', body: Record<string, unknown>, rand: () => number) {
  const k = Math.floor(rand() * run.instances.length);
  run.tally.callbacks[k]!++;
  const answer = await callback(`${run.instances[k]!.url}${new URL(r.job.callbacks[kind]).pathname}`, { lease: r.job.lease.token, ...body });
  if (answer.status !== 200) run.problems.push(`${kind} of ${r.job.id}#${r.job.attempt} at ${nameOf(k)}: ${answer.status} ${JSON.stringify(answer.json)}`);
  return answer;
}

/** After a 202: heartbeat now and then, then complete or fail, or fall silent. */
async function finishLater(run: Run, r: Received, d: Delivery, rand: () => number) {
  const { checker, tally } = run;
  await sleep(Math.floor(rand() * 40));
  // The instance hung up before the 202 reached it: its timeout failed the attempt.
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
  // The instance hung up before an answer: its timeout failed the attempt.
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
  if (checker.ended(d)) return { hang: true }; // too late: the instance gave up meanwhile
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

/** One producer: singles and batches, each to an instance picked at random. */
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
    const k = Math.floor(rand() * run.instances.length);
    run.tally.enqueues[k]!++;
    const q = run.queues[k]!;
    await run.checker.enqueue(specs, async () => (inputs.length === 1 ? [await q.add(inputs[0]!)] : q.addBatch(inputs)));
    sent.push(...specs);
  }
}

/** An instance's cron trigger, fired every 150-350 ms until the run stops; at most two runs at once. */
async function cron(run: Run, k: number, scheduled: () => Promise<void>) {
  const rand = prng(SEED * 7 + k);
  const open = new Set<Promise<void>>();
  while (!run.stopped) {
    if (open.size < 2) {
      const pass: Promise<void> = scheduled()
        .then(
          () => void run.tally.cronPasses[k]!++,
          (error: unknown) => void run.problems.push(`cron of ${nameOf(k)}: ${String(error)}`),
        )
        .finally(() => open.delete(pass));
      open.add(pass);
    }
    await sleep(150 + Math.floor(rand() * 200));
  }
  await Promise.all(open);
}

/** Looks at the counts, asking each instance in turn, until every job is completed or failed. */
async function untilAllEnded(run: Run, producing: () => boolean, started: number) {
  let counts = await run.queues[0]!.counts();
  for (let look = 0; producing() || counts.completed + counts.failed < JOBS || counts.active > 0; look++) {
    if (run.stopped || Date.now() - started > RUN_LIMIT_MS) return;
    await sleep(250);
    counts = await run.queues[look % run.instances.length]!.counts();
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

export interface MultiRunOptions {
  /** Where the endpoint listens; its handler is the run's from now on. */
  endpoint: Endpoint;
  queue: string;
  /** The queue's partitions. @default 1 */
  partitions?: number;
  /** Names the run in its summary line. */
  label: string;
}

/**
 * Runs JOBS jobs through `instances` and checks what every such run must show: no violation of
 * G1, G2, G4, G6, every job completed or failed (G3), nothing left in the counts, and that the run
 * did what it claims (each instance took enqueues, callbacks and pushes; each kind of answer
 * happened; an expired lease retried through another instance than its first pusher).
 */
export async function runMulti(instances: Instance[], { endpoint, queue, partitions = 1, label }: MultiRunOptions) {
  const run = newRun(instances, queue);
  const { checker, tally, queues } = run;
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
  const crons = instances.flatMap(({ scheduled }, k) => (scheduled ? [cron(run, k, scheduled)] : []));
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

  checker.conclude(await finalStates(queues[1 % queues.length]!));
  const violations = checker.violations({ concurrency: CONCURRENCY });
  const totals = checker.totals();
  const summary = { ...totals, maxInFlight: checker.maxInFlight(), orderDecided: checker.decided.groupOrder, ...tally, pushes: Object.fromEntries(tally.pushes) };
  console.log(`${label}: ${elapsedMs} ms; ${JSON.stringify(summary)}`);

  expect({ violations, problems: run.problems }).toEqual({ violations: [], problems: [] });
  expect(checker.accepted()).toHaveLength(JOBS);
  expect(totals.completed + totals.failed).toBe(JOBS);
  expect(await queues[2 % queues.length]!.counts()).toEqual({
    waiting: 0, delayed: 0, active: 0, groups: 0, completed: totals.completed, failed: totals.failed, cancelled: 0, expired: 0,
  });

  // The run did what it claims: every instance took enqueues and callbacks and pushed jobs (and
  // ran the cron fired from here, if any); groups ran side by side; the order check decided many
  // pairs; each kind of answer happened; an expired lease was retried through another instance
  // than the one that had pushed it.
  for (const [k, { scheduled }] of instances.entries()) {
    expect(tally.enqueues[k]).toBeGreaterThan(0);
    expect(tally.callbacks[k]).toBeGreaterThan(0);
    if (scheduled) expect(tally.cronPasses[k]).toBeGreaterThan(0);
    expect(tally.pushes.get(nameOf(k))).toBeGreaterThan(0);
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
  return { totals, tally };
}
