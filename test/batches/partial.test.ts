// Partial answers to batches (docs/batches.md#the-answer) under real concurrency, over many
// seeds: the endpoint answers {"completed": k, ...} at a random k from 0 to past the batch's
// end, retried or with "retry": false, or 500 (job 0 retried), or 500 with groupq-retry: false,
// or 429 (job 0 held, no attempt used), or never (the Worker's timeout fails job 0), or 202 and then completes jobs through their
// callbacks up to a random one that it fails; other batches complete whole (results, an empty
// body, a body that is no JSON). The batch checker (test/helpers/batch-checker.ts) finds every
// job ended exactly once, in group order, as the endpoint said; attempts count only for the job
// that failed (jobs left behind a failure come back with the same attempt number, and the
// API's attempts agree); jobs that used up their attempts end failed and their group goes on.
import { describe, expect, it } from 'vitest';
import type { BatchDelivery, JobEnd } from '../helpers/batch-checker';
import { type Run, drawsFor, endByCallbacks, runBatches } from '../helpers/batch-run';
import { type Reply, useEndpoints } from '../helpers/endpoint';
import { queueName, sleep, useWorker } from '../delivery/support';

/** A job that meets a push never answered has this timeout of its own: waiting it out costs little. */
const HANG_TIMEOUT_MS = 1500;
/** The share of jobs whose first attempt, if it heads a batch, is a push the endpoint never answers. */
const HANG = 0.015;

const json = (body: unknown): Reply => ({ status: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

interface Tally {
  partial: number;
  beyond: number;
  noRetry: number;
  error500: number;
  poison: number;
  throttle: number;
  hang: number;
  async: number;
  whole: number;
}

const hangs = (seed: number, id: string) => drawsFor(`${seed}/hang/${id}`)() < HANG;

function responder(tally: Tally) {
  return async (run: Run, d: BatchDelivery, rand: () => number): Promise<Reply> => {
    const { checker } = run;
    const jobs = d.body.jobs;
    const n = jobs.length;
    if (hangs(run.seed, jobs[0]!.id) && jobs[0]!.attempt === 1) {
      tally.hang++;
      checker.timedOut(d);
      return { hang: true };
    }
    await sleep(Math.floor(rand() * 10));
    if (checker.ended(d)) return { hang: true }; // the Worker gave up meanwhile
    const roll = rand();
    if (roll < 0.45) {
      // k from 0 to n + 1: k >= n completes them all.
      const k = Math.floor(rand() * (n + 2));
      const retry = rand() < 0.7;
      if (k >= n) tally.beyond++;
      else tally.partial++;
      if (k < n && !retry) tally.noRetry++;
      checker.partial(d, k, retry);
      const results = jobs.slice(0, k).map((job) => ({ done: job.id }));
      return json({ completed: k, results, error: `stopped at ${k}`, ...(retry ? {} : { retry: false }) });
    }
    if (roll < 0.55) {
      tally.error500++;
      checker.failFirst(d);
      return { status: 500, body: 'flaky' };
    }
    if (roll < 0.6) {
      tally.poison++;
      checker.failFirst(d, false);
      return { status: 500, headers: { 'groupq-retry': 'false' }, body: 'poison' };
    }
    if (roll < 0.64) {
      // No Retry-After: the backoff by throttles in a row holds the group; no attempt is used.
      tally.throttle++;
      checker.throttled(d);
      return { status: 429, body: 'slow down' };
    }
    if (roll < 0.74) {
      // 202, then complete up to a random job through the callbacks and fail that one.
      tally.async++;
      const k = Math.floor(rand() * (n + 1));
      const plan: JobEnd[] = jobs.map((_, i) => (i < k ? 'complete' : rand() < 0.7 ? 'fail' : 'failNow')).slice(0, k + 1);
      run.tasks.push(endByCallbacks(run, d, plan, rand));
      return { status: 202 };
    }
    tally.whole++;
    checker.completeAll(d);
    const kind = rand();
    if (kind < 0.4) return json({ results: jobs.map((job) => ({ done: job.id })) });
    if (kind < 0.6) return { status: 200 };
    if (kind < 0.8) return { status: 204 };
    return { status: 200, headers: { 'content-type': 'text/plain' }, body: 'ok' };
  };
}

const CASES = [
  { maxSize: 4, backoff: { type: 'fixed', delayMs: 0, jitter: false } },
  { maxSize: 10, backoff: { type: 'fixed', delayMs: 20, jitter: false } },
];
const SEEDS = [101, 102, 103, 104];

describe('partial answers over many seeds: every job ends once, in order, attempts only for the failed job', () => {
  const env = useWorker({ GROUPQ_LOG_LEVEL: 'error' });
  const endpoints = useEndpoints({ batches: () => ({}) });

  for (const { maxSize, backoff } of CASES) {
    describe(`maxSize ${maxSize}, backoff ${backoff.delayMs} ms`, () => {
      const tally: Tally = { partial: 0, beyond: 0, noRetry: 0, error500: 0, poison: 0, throttle: 0, hang: 0, async: 0, whole: 0 };
      const seen = { failed: 0, left: 0, retried: 0 };
      for (const seed of SEEDS) {
        it(`seed ${seed}`, async () => {
          const { violations, stats, counts, total } = await runBatches({
            workers: [env.worker],
            endpoint: endpoints.batches,
            queue: queueName(`bpartial-${maxSize}`),
            config: { concurrency: 20, timeoutMs: 10_000, backoff, keepCompleted: 10_000, keepFailed: 10_000, batch: { maxSize, maxWaitMs: 0 } },
            seed,
            groups: 8,
            jobs: 160,
            producers: 2,
            maxAttempts: 3,
            extras: (id) => (hangs(seed, id) ? { timeoutMs: HANG_TIMEOUT_MS } : {}),
            respond: responder(tally),
          });
          expect(violations).toEqual([]);
          expect(counts).toMatchObject({ waiting: 0, delayed: 0, active: 0, groups: 0 });
          expect(counts.completed + counts.failed).toBe(total);
          seen.failed += counts.failed;
          seen.left += stats.ends.left;
          seen.retried += stats.retried;
        });
      }
      // The seeds met what they claim to cover: every kind of answer, jobs failed for good,
      // jobs left behind a failure that came back untouched.
      it('the seeds met every kind of answer', () => {
        for (const [kind, count] of Object.entries(tally)) expect(count, kind).toBeGreaterThan(0);
        expect(seen.failed).toBeGreaterThan(0);
        expect(seen.left).toBeGreaterThan(0);
        expect(seen.retried).toBeGreaterThan(0);
      });
    });
  }
});
