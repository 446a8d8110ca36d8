// Rate limits through the Worker (docs/flow-control.md#rate-limits): starts counted in every sliding window
// (t - periodMs, t], each start placed between its lease start and its arrival at the endpoint.
// A queue-wide limit over 200 jobs holds in every window and is reached; a group limit alongside
// a queue limit holds both, each reached. How long a run takes is the benchmark's business
// (`npm run bench`), not a test's: a loaded machine only slows the starts, it never adds any.
import { describe, expect, it } from 'vitest';
import type { FlowDelivery } from '../helpers/flow-checker';
import { flowQueue, settledCounts, until } from '../helpers/flow-endpoint';
import { hash } from '../helpers/random';
import { useWorker } from '../delivery/support';

/** `perGroup` jobs for each of `groups` groups, one round over the groups after another. */
function jobsOf(groups: number, perGroup: number) {
  return Array.from({ length: groups * perGroup }, (_, i) => ({ id: `j${i}`, group: `g${i % groups}` }));
}

/** The endpoint works 0-9 ms on each job. */
const briefly = (d: FlowDelivery) => ({ delayMs: Math.floor(hash(d.id) * 10) });

describe('rate limits', () => {
  const env = useWorker();

  it('rateLimit 10 per second over 200 jobs: never more than 10 starts in any second, and 10 in some', async () => {
    const rateLimit = { max: 10, periodMs: 1000 };
    const { checker, queue, ticking, enqueue } = await flowQueue(env.worker, { concurrency: 20, rateLimit }, briefly);
    const jobs = jobsOf(50, 4);
    await enqueue(jobs.slice(0, 100));
    await enqueue(jobs.slice(100));
    await until(() => checker.completions.size === 200 && checker.inFlight() === 0, '200 jobs completed', 50_000);
    await ticking.stop();
    await settledCounts(env.worker, queue, 200);

    const windows = checker.startsPerWindow(rateLimit.max, rateLimit.periodMs);
    expect(windows.violations).toEqual([]);
    expect(windows.peak).toBe(rateLimit.max);
    expect(checker.completedOnce()).toEqual([]);
    expect(checker.deliveries).toHaveLength(200);
  }, 60_000);

  it('groupRateLimit 2 per second alongside rateLimit 10 per second: neither is ever exceeded', async () => {
    const rateLimit = { max: 10, periodMs: 1000 };
    const groupRateLimit = { max: 2, periodMs: 1000 };
    const { checker, queue, ticking, enqueue } = await flowQueue(env.worker, { concurrency: 20, rateLimit, groupRateLimit }, briefly);
    // 8 groups at 2 per second could start 16 per second: the queue's 10 binds as well.
    const jobs = jobsOf(8, 6);
    await enqueue(jobs);
    await until(() => checker.completions.size === jobs.length && checker.inFlight() === 0, `${jobs.length} jobs completed`, 30_000);
    await ticking.stop();
    await settledCounts(env.worker, queue, jobs.length);

    const queueWindows = checker.startsPerWindow(rateLimit.max, rateLimit.periodMs);
    expect(queueWindows.violations).toEqual([]);
    expect(queueWindows.peak).toBe(rateLimit.max);
    const groupWindows = checker.groupStartsPerWindow(groupRateLimit.max, groupRateLimit.periodMs);
    expect(groupWindows.violations).toEqual([]);
    expect(groupWindows.peak).toBe(groupRateLimit.max);
    expect(checker.startOrder().violations).toEqual([]);
    expect(checker.completedOnce()).toEqual([]);
    expect(checker.deliveries).toHaveLength(jobs.length);
  }, 60_000);
});
