// Backpressure from the endpoint through the Worker (docs/flow-control.md#backpressure-the-endpoints-429): a 429 holds the job
// ("job"), its group ("group") or the queue's dispatch ("queue") until its Retry-After, or the
// backoff when it has none, and never uses up an attempt; 100 429s in a row fail the job with
// `throttled`. A hold begins when the Worker has read the 429, after the endpoint answered it,
// so the next delivery may not arrive before the answer's instant + Retry-After.
import { describe, expect, it } from 'vitest';
import type { FlowDelivery } from '../helpers/flow-checker';
import { type FlowAnswer, flowQueue, settledCounts, until } from '../helpers/flow-endpoint';
import { getJob, jobInState, useWorker } from '../delivery/support';

const BACKOFF_MS = 300;
/** workerd's clock against this process's (both the machine's; workerd's never runs ahead). */
const SLACK_MS = 5;

const throttle = (retryAfter?: string): FlowAnswer => ({ status: 429, headers: retryAfter === undefined ? {} : { 'retry-after': retryAfter } });

describe('backpressure: an endpoint answering 429', () => {
  const env = useWorker();

  /** Jobs fail at their first failed attempt, and a 429 without Retry-After waits BACKOFF_MS. */
  const setup = (config: Record<string, unknown>, answer: (d: FlowDelivery) => FlowAnswer) =>
    flowQueue(env.worker, { maxAttempts: 1, backoff: { type: 'fixed', delayMs: BACKOFF_MS, jitter: false }, ...config }, answer);

  const others = Array.from({ length: 12 }, (_, i) => ({ id: `o${i}`, group: `o${i % 3}` }));

  for (const mode of ['job', 'group'] as const) {
    it(`"${mode}": the job waits for Retry-After (else the backoff), uses no attempt, keeps its group's head; other groups flow`, async () => {
      // t1 is throttled twice (Retry-After: 1, then none) and then done. t2 runs beside it and
      // holds the group's other place until t1's last delivery, so that t3 could only start in
      // the place t1 left while it waits, which the group must keep for it.
      const { checker, queue, ticking, enqueue } = await setup({ backpressure: mode, concurrency: 4, groupConcurrency: 2 }, (d) => {
        const n = checker.of(d.id).length;
        if (d.id === 't1' && n === 1) return throttle('1');
        if (d.id === 't1' && n === 2) return throttle();
        if (d.id === 't2') return { until: until(() => checker.of('t1').length === 3, "t1's third delivery") };
        return { delayMs: 20 };
      });
      await enqueue([{ id: 't1', group: 't' }, { id: 't2', group: 't' }, { id: 't3', group: 't' }]);
      await until(() => checker.of('t1')[0]?.answered !== undefined, 't1 answered 429');
      // Other groups arrive while t1 is held: they must not wait for it.
      await enqueue(others);
      const total = 3 + others.length;
      await until(() => checker.completions.size === total && checker.inFlight() === 0, `${total} jobs completed`);
      await ticking.stop();
      await settledCounts(env.worker, queue, total);

      const [first, second, third] = checker.of('t1');
      expect(checker.of('t1')).toHaveLength(3);
      // A 429 uses no attempt: t1 had maxAttempts 1, and every delivery was its attempt 1.
      expect(checker.of('t1').map((d) => [d.attempt, d.status])).toEqual([[1, 429], [1, 429], [1, 200]]);
      expect(second!.arrivedWall).toBeGreaterThanOrEqual(first!.answeredWall! + 1000 - SLACK_MS);
      expect(third!.arrivedWall).toBeGreaterThanOrEqual(second!.answeredWall! + BACKOFF_MS - SLACK_MS);
      // t1 kept its place at the head: t3 did not take the place t1 left while it waited.
      expect(checker.of('t3')[0]!.arrived).toBeGreaterThan(third!.arrived);
      expect(checker.startOrder().violations).toEqual([]);
      expect(checker.groupConcurrency(2)).toEqual([]);
      // Other groups ran meanwhile: they were leased after t1's first 429 and reached the
      // endpoint before t1 came back.
      const duringHold = checker.deliveries.filter((d) => d.group !== 't' && d.arrived > first!.answered! && d.arrived < second!.arrived);
      expect(duringHold.length).toBeGreaterThan(0);
      expect(checker.completedOnce()).toEqual([]);
    });
  }

  it('"group": every job of the group waits for Retry-After, even one ahead of the throttled job', async () => {
    // t1 and t2 run side by side. t2 is throttled; once that is taken, t1 fails and would be
    // retried at once (backoff 0) but its group waits as long as t2 does.
    const { checker, queue, ticking, enqueue } = await setup(
      { backpressure: 'group', concurrency: 4, groupConcurrency: 2, maxAttempts: 2, backoff: { type: 'fixed', delayMs: 0, jitter: false } },
      (d) => {
        if (d.id === 't2' && checker.of('t2').length === 1) return throttle('1');
        if (d.id === 't1' && d.attempt === 1) return { status: 500, until: jobInState(env.worker, queue, 't2', 'waiting') };
        return { delayMs: 20 };
      },
    );
    await enqueue([{ id: 't1', group: 't' }, { id: 't2', group: 't' }]);
    await until(() => checker.of('t2')[0]?.answered !== undefined, 't2 answered 429');
    await enqueue(others);
    const total = 2 + others.length;
    await until(() => checker.completions.size === total && checker.inFlight() === 0, `${total} jobs completed`);
    await ticking.stop();
    await settledCounts(env.worker, queue, total);

    const [throttled] = checker.of('t2');
    expect(checker.of('t1').map((d) => [d.attempt, d.status])).toEqual([[1, 500], [2, 200]]);
    expect(checker.of('t2').map((d) => [d.attempt, d.status])).toEqual([[1, 429], [1, 200]]);
    for (const d of [checker.of('t1')[1]!, checker.of('t2')[1]!]) {
      expect(d.arrivedWall, `${d.id}#${d.attempt} after the 429`).toBeGreaterThanOrEqual(throttled!.answeredWall! + 1000 - SLACK_MS);
    }
    const duringHold = checker.deliveries.filter((d) => d.group !== 't' && d.arrived > throttled!.answered! && d.arrived < checker.of('t1')[1]!.arrived);
    expect(duringHold.length).toBeGreaterThan(0);
    expect(checker.completedOnce()).toEqual([]);
  });

  it('"queue": after a 429 nothing of the queue starts until its Retry-After has passed', async () => {
    // Concurrency 1: when t1 is answered 429 nothing else is in flight, so any start before the
    // hold ends would be one the engine made after it took the 429.
    const { checker, queue, ticking, enqueue } = await setup({ backpressure: 'queue', concurrency: 1 }, (d) =>
      d.id === 't1' && checker.of(d.id).length === 1 ? throttle('1') : {},
    );
    await enqueue([{ id: 't1', group: 't' }, ...others]);
    const total = 1 + others.length;
    await until(() => checker.completions.size === total && checker.inFlight() === 0, `${total} jobs completed`);
    await ticking.stop();
    await settledCounts(env.worker, queue, total);

    expect(checker.deliveries[0]).toMatchObject({ id: 't1', status: 429 });
    const answeredAt = checker.deliveries[0]!.answeredWall!;
    const next = checker.deliveries[1]!;
    expect(next.arrivedWall, `${next.id} arrived ${next.arrivedWall - answeredAt} ms after the 429`).toBeGreaterThanOrEqual(answeredAt + 1000 - SLACK_MS);
    expect(checker.of('t1').map((d) => [d.attempt, d.status])).toEqual([[1, 429], [1, 200]]);
    expect(checker.completedOnce()).toEqual([]);
  });

  it('a job answered 429 100 times in a row fails with `throttled`; its group goes on', async () => {
    const { checker, queue, ticking, enqueue } = await setup({ backpressure: 'job' }, (d) => (d.id === 'x' ? throttle('0') : {}));
    await enqueue([{ id: 'x', group: 'g' }, { id: 'y', group: 'g' }]);
    const failed = await jobInState(env.worker, queue, 'x', 'failed', { what: 'x failed', timeoutMs: 30_000 });
    expect(failed.error).toMatch(/throttled/);
    await until(() => checker.completions.get('y') === 1, 'y completed');
    await ticking.stop();

    expect(checker.of('x')).toHaveLength(100);
    expect(checker.of('x').every((d) => d.attempt === 1 && d.status === 429)).toBe(true);
    expect(checker.of('y')).toHaveLength(1);
    expect((await getJob(env.worker, queue, 'x')).state).toBe('failed');
  });
});
