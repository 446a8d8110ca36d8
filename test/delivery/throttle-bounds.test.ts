// maxThrottleMs bounds what an endpoint's 429s can hold (docs/flow-control.md#backpressure-the-endpoints-429):
// each 429's wait is cut to what is left of the job's maxThrottleMs, whatever Retry-After asks,
// and a job that has spent it all fails for good as `throttled`; a group's or the queue's hold is
// cut the same way. Through the Worker, against an endpoint on loopback that answers 429 with a
// Retry-After of a day; the cron runs meanwhile. A hold begins when the Worker has read the 429,
// so the next delivery may not arrive before the answer's instant + the cut wait.
import { describe, expect, it } from 'vitest';
import type { FlowDelivery } from '../helpers/flow-checker';
import { type FlowAnswer, flowQueue, settledCounts, until } from '../helpers/flow-endpoint';
import { jobInState, useWorker } from './support';

const MAX_THROTTLE_MS = 1000;
const DAY_S = '86400';
/** workerd's clock against this process's (both the machine's; workerd's never runs ahead). */
const SLACK_MS = 5;

const throttle: FlowAnswer = { status: 429, headers: { 'retry-after': DAY_S } };

describe('maxThrottleMs: the most an endpoint\'s 429s can hold', () => {
  const env = useWorker();

  const setup = (config: Record<string, unknown>, answer: (d: FlowDelivery) => FlowAnswer) =>
    flowQueue(env.worker, { maxThrottleMs: MAX_THROTTLE_MS, concurrency: 4, ...config }, answer);

  it('a job answered 429 (Retry-After: a day) waits maxThrottleMs in all, then fails for good as `throttled`; its group goes on', async () => {
    const { checker, queue, ticking, enqueue } = await setup({ backpressure: 'job', maxAttempts: 5 }, (d) => (d.id === 'x' ? throttle : {}));
    await enqueue([{ id: 'x', group: 'g' }, { id: 'y', group: 'g' }]);
    const failed = await jobInState(env.worker, queue, 'x', 'failed', { what: 'x failed' });
    await until(() => checker.completions.get('y') === 1, 'y completed');
    await ticking.stop();

    expect(failed.error).toMatch(/^throttled: held 1000 ms by answers 429, the queue's maxThrottleMs \(HTTP 429/);
    // The first 429 held it maxThrottleMs (not a day); the second found nothing left and failed it,
    // without spending the other attempts.
    const [first, second] = checker.of('x');
    expect(checker.of('x').map((d) => [d.attempt, d.status])).toEqual([[1, 429], [1, 429]]);
    expect(second!.arrivedWall).toBeGreaterThanOrEqual(first!.answeredWall! + MAX_THROTTLE_MS - SLACK_MS);
    expect(checker.of('y')).toHaveLength(1);
    expect(checker.of('y')[0]!.arrived).toBeGreaterThan(second!.answered!);
  });

  it('429s spread over attempts add up: the total, not each wait, is bounded', async () => {
    // x: 429, 500, 429, ...: the 500 uses an attempt, the throttled time carries over it.
    const { checker, queue, ticking, enqueue } = await setup(
      { backpressure: 'job', maxThrottleMs: 1500, maxAttempts: 5, backoff: { type: 'fixed', delayMs: 0, jitter: false } },
      (d) => {
        const n = checker.of(d.id).length;
        if (n === 2) return { status: 500 };
        return { status: 429, headers: { 'retry-after': '1' } };
      },
    );
    await enqueue([{ id: 'x', group: 'g' }]);
    const failed = await jobInState(env.worker, queue, 'x', 'failed', { what: 'x failed' });
    await ticking.stop();
    // 1000 ms, a 500, then the 500 ms left, then nothing left.
    expect(checker.of('x').map((d) => [d.attempt, d.status])).toEqual([[1, 429], [1, 500], [2, 429], [2, 429]]);
    expect(failed.error).toMatch(/^throttled: held 1500 ms by answers 429/);
    const [, second, third, fourth] = checker.of('x');
    expect(fourth!.arrivedWall).toBeGreaterThanOrEqual(third!.answeredWall! + 500 - SLACK_MS);
    expect(second!.status).toBe(500);
  });

  for (const mode of ['group', 'queue'] as const) {
    it(`"${mode}": a 429 asking for a day holds the ${mode} maxThrottleMs at most; the job then runs`, async () => {
      // t1 is throttled once, then done; t2 (its group) and the other groups wait with it when
      // the mode says so, and all of them finish well within the test's time.
      const { checker, queue, ticking, enqueue } = await setup({ backpressure: mode, concurrency: 1 }, (d) =>
        d.id === 't1' && checker.of('t1').length === 1 ? throttle : {},
      );
      const others = Array.from({ length: 4 }, (_, i) => ({ id: `o${i}`, group: `o${i}` }));
      await enqueue([{ id: 't1', group: 't' }, { id: 't2', group: 't' }, ...others]);
      const total = 2 + others.length;
      await until(() => checker.completions.size === total && checker.inFlight() === 0, `${total} jobs completed`);
      await ticking.stop();
      await settledCounts(env.worker, queue, total);

      const [first, second] = checker.of('t1');
      expect(checker.of('t1').map((d) => [d.attempt, d.status])).toEqual([[1, 429], [1, 200]]);
      expect(second!.arrivedWall).toBeGreaterThanOrEqual(first!.answeredWall! + MAX_THROTTLE_MS - SLACK_MS);
      expect(checker.of('t2')[0]!.arrived).toBeGreaterThan(second!.arrived);
      if (mode === 'queue') {
        // Nothing of the queue started during the hold: the next start after the 429 is t1's.
        const next = checker.deliveries.find((d) => d.arrived > first!.answered!);
        expect(next).toBe(second);
      }
      expect(checker.completedOnce()).toEqual([]);
    });
  }
});
