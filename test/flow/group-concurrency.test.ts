// groupConcurrency under real concurrency, through the Worker (docs/flow-control.md#concurrency-per-group): producers
// enqueue 20 groups' jobs (singles and batches) while the queue flows, the endpoint answers after
// a random short delay, and some first attempts fail (500) to be retried after a backoff. Each
// round checks on the FlowChecker's record that no group ever had more than 3 jobs at the
// endpoint at once, nor the queue more than its concurrency; that each group's jobs started in
// their order; and that every job completed once. A scenario held at the endpoint shows that a
// retried job keeps its place at its group's head while others of the group run.
import { describe, expect, it } from 'vitest';
import type { FlowChecker } from '../helpers/flow-checker';
import { flowQueue, settledCounts, until } from '../helpers/flow-endpoint';
import { hash, prng } from '../helpers/random';
import { enqueue, enqueueBatch, useWorker } from '../delivery/support';

const GROUPS = 20;
const JOBS_PER_GROUP = 8;
const PRODUCERS = 4;
const GROUP_CONCURRENCY = 3;
const CONCURRENCY = 12;
const BACKOFF_MS = 200;
const backoff = { type: 'fixed', delayMs: BACKOFF_MS, jitter: false };
/** workerd's clock against this process's (both the machine's; workerd's never runs ahead). */
const SLACK_MS = 5;
const TOTAL = GROUPS * JOBS_PER_GROUP;

/** A draw fixed per text, whatever the interleaving. */
const draw = (text: string) => prng(Math.floor(hash(text) * 2 ** 32));

/**
 * One producer: the groups g with g % PRODUCERS === p, their jobs in order (singles and batches
 * mixing its groups), one request after another so that each group's enqueue order is its order.
 */
async function produce(env: ReturnType<typeof useWorker>, queue: string, checker: FlowChecker, round: number, p: number) {
  const rand = draw(`${round}/producer/${p}`);
  const left = new Map<string, number>();
  for (let g = p; g < GROUPS; g += PRODUCERS) left.set(`g${g}`, JOBS_PER_GROUP);
  let made = 0;
  while (left.size > 0) {
    const size = rand() < 0.4 ? 1 : 2 + Math.floor(rand() * 10);
    const jobs = [];
    for (let i = 0; i < size && left.size > 0; i++) {
      const groups = [...left.keys()];
      const group = groups[Math.floor(rand() * groups.length)]!;
      const n = left.get(group)! - 1;
      if (n === 0) left.delete(group);
      else left.set(group, n);
      const id = `r${round}-p${p}-${made++}`;
      checker.enqueued(id, group);
      jobs.push({ id, group, data: { round } });
    }
    if (jobs.length === 1) await enqueue(env.worker, queue, jobs[0]!);
    else await enqueueBatch(env.worker, queue, jobs);
  }
}

describe('groupConcurrency 3: at most 3 of a group at once, started in order', () => {
  const env = useWorker();

  for (const round of [1, 2, 3]) {
    it(`round ${round}: ${TOTAL} jobs over ${GROUPS} groups, queue concurrency ${CONCURRENCY}`, async () => {
      const config = { concurrency: CONCURRENCY, groupConcurrency: GROUP_CONCURRENCY, maxAttempts: 3, backoff };
      const { checker, queue, ticking } = await flowQueue(env.worker, config, (d) => {
        const rand = draw(`${round}/${d.id}/${d.attempt}`);
        const delayMs = 2 + Math.floor(rand() * 40);
        return { delayMs, status: d.attempt === 1 && rand() < 0.08 ? 500 : 200 };
      });
      await Promise.all(Array.from({ length: PRODUCERS }, (_, p) => produce(env, queue, checker, round, p)));
      await until(() => checker.completions.size === TOTAL && checker.inFlight() === 0, `${TOTAL} jobs completed`, 45_000);
      await ticking.stop();
      const counts = await settledCounts(env.worker, queue, TOTAL);
      expect(counts).toMatchObject({ waiting: 0, delayed: 0, active: 0, failed: 0, groups: 0 });

      expect(checker.groupConcurrency(GROUP_CONCURRENCY)).toEqual([]);
      expect(checker.queueConcurrency(CONCURRENCY)).toEqual([]);
      // The limit was reached: groups really ran 3 at once (1 would pass the check above too).
      expect(checker.peakGroupInFlight()).toBe(GROUP_CONCURRENCY);
      expect(checker.peakInFlight()).toBeGreaterThan(GROUP_CONCURRENCY);

      const order = checker.startOrder();
      expect(order.violations).toEqual([]);
      expect(order.decided).toBeGreaterThan(TOTAL);

      expect(checker.completedOnce()).toEqual([]);
      // Each failed first attempt was retried, once, as attempt 2.
      const failed = checker.deliveries.filter((d) => d.status === 500);
      expect(failed.length).toBeGreaterThan(0);
      expect(failed.every((d) => d.attempt === 1)).toBe(true);
      expect(checker.deliveries.filter((d) => d.attempt === 2)).toHaveLength(failed.length);
      expect(checker.deliveries).toHaveLength(TOTAL + failed.length);
    });
  }

  it('a retried job keeps its place at the head: later jobs wait for its next attempt while the others run', async () => {
    // g0 fails at once; g1 and g2 run on until g0 is back, holding the group's other places.
    // Only g0's own place is free during its backoff, and g3 must not take it.
    const { checker, queue, ticking, enqueue } = await flowQueue(env.worker, { groupConcurrency: GROUP_CONCURRENCY, backoff }, (d) => {
      if (d.id === 'g0' && d.attempt === 1) return { status: 500 };
      if (d.id === 'g1' || d.id === 'g2') return { until: until(() => checker.of('g0').length === 2, "g0's second attempt") };
      return {};
    });
    await enqueue(Array.from({ length: 6 }, (_, i) => ({ id: `g${i}`, group: 'g' })));
    await until(() => checker.completions.size === 6 && checker.inFlight() === 0, '6 jobs completed');
    await ticking.stop();
    await settledCounts(env.worker, queue, 6);

    const arrivals = checker.deliveries.map((d) => `${d.id}#${d.attempt}`);
    expect(arrivals.slice(0, 3).sort()).toEqual(['g0#1', 'g1#1', 'g2#1']);
    expect(arrivals[3]).toBe('g0#2');
    expect(arrivals.slice(4).sort()).toEqual(['g3#1', 'g4#1', 'g5#1']);
    expect(checker.startOrder().violations).toEqual([]);
    const [first, second] = checker.of('g0');
    expect(second!.arrivedWall).toBeGreaterThanOrEqual(first!.answeredWall! + BACKOFF_MS - SLACK_MS);
    expect(checker.groupConcurrency(GROUP_CONCURRENCY)).toEqual([]);
    expect(checker.completedOnce()).toEqual([]);
  });
});
