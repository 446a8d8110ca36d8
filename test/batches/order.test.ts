// G1 and G2 with batches (docs/batches.md), under real concurrency through the Worker: producers
// enqueue over many groups while the queue flows, the endpoint answers each batch after a random
// delay (mostly 200 with results, some 500s that fail the first job's attempt, some 202s whose
// jobs it then completes one by one through their callbacks), and the cron fires meanwhile. The
// batch checker (test/helpers/batch-checker.ts) records every batch and every end, and finds no
// violation: no two batches of a group overlap, each batch is its group's head and the jobs right
// behind it in order, attempts count only what failed, jobs end in group order exactly once as
// the endpoint said. maxSize 5 and 10, maxWaitMs 0 and 25, several seeds each on a fresh queue,
// one Worker; then one case again through two Workers on one Redis. First, plainly: a hot group
// of 25 jobs goes as batches of 10, 10 and 5, in order.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BatchDelivery, batchOf } from '../helpers/batch-checker';
import { type Run, endByCallbacks, runBatches } from '../helpers/batch-run';
import { type Endpoint, type Reply, startEndpoint, useEndpoints } from '../helpers/endpoint';
import { type PrivateStack, type RunningWorker, startPrivateStack, startWorkers } from '../helpers/worker';
import { countsWhenNoneLeased, enqueueBatch, poll, putQueue, queueName, quickRetries, sleep, useWorker } from '../delivery/support';

const CASES = [
  { maxSize: 5, maxWaitMs: 0 },
  { maxSize: 10, maxWaitMs: 0 },
  { maxSize: 5, maxWaitMs: 25 },
  { maxSize: 10, maxWaitMs: 25 },
];
const SEEDS = [11, 12, 13, 14];

/** Mostly 200 with a result per job; some 500s (job 0 retried, the rest left); some 202s completed in order by callbacks. */
async function respond(run: Run, d: BatchDelivery, rand: () => number): Promise<Reply> {
  await sleep(Math.floor(rand() * 15));
  if (run.checker.ended(d)) return { hang: true }; // the Worker gave up meanwhile
  const roll = rand();
  if (roll < 0.15) {
    run.tasks.push(endByCallbacks(run, d, d.body.jobs.map(() => 'complete'), rand));
    return { status: 202 };
  }
  if (roll < 0.25) {
    run.checker.failFirst(d);
    return { status: 500, body: 'flaky' };
  }
  run.checker.completeAll(d);
  const results = d.body.jobs.map((job) => ({ done: job.id }));
  return { status: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ results }) };
}

/** One seed on a fresh queue: 240 jobs over 12 groups from 3 producers; asserts no violation and returns what it did. */
async function orderRun(workers: RunningWorker[], endpoint: Endpoint, queue: string, batch: { maxSize: number; maxWaitMs: number }, seed: number) {
  const config = { concurrency: 20, timeoutMs: 10_000, backoff: quickRetries, keepCompleted: 10_000, keepFailed: 10_000, batch };
  const { violations, stats, counts, total } = await runBatches({ workers, endpoint, queue, config, seed, groups: 12, jobs: 240, producers: 3, respond });
  expect(violations).toEqual([]);
  expect(counts).toMatchObject({ waiting: 0, delayed: 0, active: 0, groups: 0 });
  expect(counts.completed + counts.failed).toBe(total);
  expect(stats.multi).toBeGreaterThan(0);
  return stats;
}

describe('batches under real concurrency, one Worker (G1 G2)', () => {
  const env = useWorker({ GROUPQ_LOG_LEVEL: 'error' });
  const endpoints = useEndpoints({ batches: () => ({}), ok: () => ({ status: 200 }) });

  it('a hot group goes in batches of maxSize, in order, one after another', async () => {
    const queue = queueName('border-hot');
    await putQueue(env.worker, queue, { endpoint: endpoints.ok.url, concurrency: 50, keepCompleted: 100, backoff: quickRetries, batch: { maxSize: 10, maxWaitMs: 0 } });
    const jobs = await enqueueBatch(env.worker, queue, Array.from({ length: 25 }, (_, i) => ({ group: 'g', data: { i } })));
    await poll(async () => (endpoints.ok.received.length >= 3 ? true : undefined), { pump: env.worker });
    const batches = endpoints.ok.received.map((r) => batchOf(r).jobs.map((job) => job.id));
    expect(batches).toEqual([jobs.slice(0, 10), jobs.slice(10, 20), jobs.slice(20)].map((part) => part.map((job) => job.id)));
    const counts = await countsWhenNoneLeased(env.worker, queue);
    expect(counts).toMatchObject({ waiting: 0, active: 0, completed: 25, groups: 0 });
  });

  for (const batch of CASES) {
    describe(`maxSize ${batch.maxSize}, maxWaitMs ${batch.maxWaitMs}`, () => {
      const seen = { largest: 0, fail: 0, left: 0 };
      for (const seed of SEEDS) {
        it(`seed ${seed}: no two batches of a group overlap, each its group's next jobs in order, every job ends once`, async () => {
          const queue = queueName(`border-${batch.maxSize}-${batch.maxWaitMs}`);
          const stats = await orderRun([env.worker], endpoints.batches, queue, batch, seed);
          seen.largest = Math.max(seen.largest, stats.largest);
          seen.fail += stats.ends.fail;
          seen.left += stats.ends.left;
        });
      }
      // The seeds did what they claim: batches more than half full, and failures with jobs
      // behind them that went back untouched (retried heads, attempts kept).
      it('the seeds met full batches, retries and jobs left behind a failure', () => {
        expect(seen.largest).toBeGreaterThan(batch.maxSize / 2);
        expect(seen.fail).toBeGreaterThan(0);
        expect(seen.left).toBeGreaterThan(0);
      });
    });
  }
});

describe('batches under real concurrency, two Workers on one Redis (G1 G2)', () => {
  let stack: PrivateStack;
  let workers: RunningWorker[];
  let endpoint: Endpoint;
  beforeAll(async () => {
    stack = await startPrivateStack();
    workers = await startWorkers(stack, 2, { GROUPQ_LOG_LEVEL: 'error' });
    endpoint = await startEndpoint();
  });
  afterAll(async () => {
    await endpoint?.close();
    for (const w of workers ?? []) await w.dispose();
    await stack?.close();
  });

  // Who pushed each batch (its jobs' callback URLs lead back to the Worker that pushed it).
  const pushers = new Set<string>();
  for (const seed of [21, 22]) {
    it(`seed ${seed}: enqueues and crons through both, pushes from both, the same verdict`, async () => {
      const before = endpoint.received.length;
      await orderRun(workers, endpoint, `border-two-${seed}`, { maxSize: 5, maxWaitMs: 25 }, seed);
      for (const r of endpoint.received.slice(before)) pushers.add(new URL(batchOf(r).jobs[0]!.callbacks.complete).origin);
    });
  }
  // The runs did what they claim: both Workers pushed batches. Over the seeds together: in one run
  // a drain of one Worker may take every batch before the other's reserves.
  it('the seeds met batches pushed by both Workers', () => {
    expect(pushers).toEqual(new Set(workers.map((w) => w.url)));
  });
});
