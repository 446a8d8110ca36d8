// groupConcurrency under real concurrency, through the Worker (README, Flow control): producers
// enqueue 20 groups' jobs (singles and batches) while the queue flows, the endpoint answers after
// a random short delay, and some first attempts fail (500) to be retried after a backoff. Each
// round checks on the FlowChecker's record that no group ever had more than 3 jobs at the
// endpoint at once, nor the queue more than its concurrency; that each group's jobs started in
// their order, a retried job again before any later one; and that every job completed once.
import { describe, expect, it } from 'vitest';
import { FlowChecker } from '../helpers/flow-checker';
import { keepTicking, settledCounts, startFlowEndpoint, until } from '../helpers/flow-endpoint';
import { hash, prng } from '../helpers/random';
import { enqueue, enqueueBatch, putQueue, queueName, useWorker } from '../delivery/support';

const GROUPS = 20;
const JOBS_PER_GROUP = 8;
const PRODUCERS = 4;
const GROUP_CONCURRENCY = 3;
const CONCURRENCY = 12;
const TIMEOUT_MS = 10_000;
/** A failed attempt waits this long: the retry check needs a hold to judge by. */
const BACKOFF_MS = 200;
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
      const checker = new FlowChecker(TIMEOUT_MS);
      const endpoint = await startFlowEndpoint(checker, (d) => {
        const rand = draw(`${round}/${d.id}/${d.attempt}`);
        const delayMs = 2 + Math.floor(rand() * 40);
        return { delayMs, status: d.attempt === 1 && rand() < 0.08 ? 500 : 200 };
      });
      const queue = queueName(`group-concurrency-${round}`);
      await putQueue(env.worker, queue, {
        endpoint: endpoint.url,
        concurrency: CONCURRENCY,
        groupConcurrency: GROUP_CONCURRENCY,
        timeoutMs: TIMEOUT_MS,
        maxAttempts: 3,
        backoff: { type: 'fixed', delayMs: BACKOFF_MS, jitter: false },
        keepCompleted: 10_000,
      });
      // Retries wait for their backoff, which the scheduler ends.
      const ticking = keepTicking(env.worker);
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
      const head = checker.retryKeepsHead(BACKOFF_MS);
      expect(head.violations).toEqual([]);
      expect(head.retried).toBeGreaterThan(0);

      expect(checker.completedOnce()).toEqual([]);
      expect(checker.deliveries).toHaveLength(TOTAL + head.retried);
      // A failed first attempt was retried, once, as attempt 2.
      expect(checker.deliveries.filter((d) => d.status === 500).every((d) => d.attempt === 1)).toBe(true);
      expect(checker.deliveries.filter((d) => d.attempt === 2)).toHaveLength(head.retried);
    });
  }
});
