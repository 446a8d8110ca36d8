// The invocation's budgets (docs/deploy.md#limits-and-what-they-mean-for-your-jobs): one
// invocation never has more than 6 pushes open at once, and a drain stops at its subrequest
// budget, leaving the rest to the next trigger (here the cron) without losing anything.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Endpoint, startEndpoint } from '../helpers/endpoint';
import { countsWhenNoneLeased, enqueueBatch, poll, putQueue, queueName, sleep, useWorker } from './support';

const JOBS = 30;

/** The longest a push is held waiting for others to open (then it is answered anyway). */
const GATHER_TIMEOUT_MS = 5_000;

/**
 * An endpoint that counts how many pushes are open at once. Each is held until `gather` are open
 * (or GATHER_TIMEOUT_MS passed), then 100 ms more, in which one more would be seen: that the
 * pushes of one invocation overlap does not depend on how fast this machine opens them.
 */
async function slowEndpoint(gather = 1) {
  const stats = { open: 0, maxOpen: 0 };
  let gathered: () => void = () => {};
  let allOpen = new Promise<void>((resolve) => (gathered = resolve));
  const endpoint = await startEndpoint(async () => {
    stats.open++;
    stats.maxOpen = Math.max(stats.maxOpen, stats.open);
    if (stats.open >= gather) gathered();
    const timer = new Promise<void>((resolve) => setTimeout(resolve, GATHER_TIMEOUT_MS).unref());
    await Promise.race([allOpen, timer]);
    await sleep(100);
    stats.open--;
    // The next pushes gather anew.
    if (stats.open === 0) allOpen = new Promise<void>((resolve) => (gathered = resolve));
    return { status: 200 };
  });
  return { endpoint, stats };
}

describe('at most six pushes open per invocation', () => {
  const env = useWorker();
  it('one enqueue of 30 ready jobs (30 groups, concurrency 100) pushes them six at a time', async () => {
    const { endpoint, stats } = await slowEndpoint(6);
    try {
      const queue = queueName('six');
      await putQueue(env.worker, queue, { endpoint: endpoint.url, concurrency: 100 });
      await enqueueBatch(env.worker, queue, Array.from({ length: JOBS }, (_, i) => ({ group: `g${i}`, data: i })));
      await poll(async () => (endpoint.received.length >= JOBS ? true : undefined), { what: 'every job' });
      // The request's own drain delivered them all (no cron was fired), never more than six at once.
      expect(stats.maxOpen).toBe(6);
    } finally {
      await endpoint.close();
    }
  });
});

describe('subrequest budget', () => {
  // 12 subrequests: the enqueue's own call, then a handful of pushes and settles, no more.
  const env = useWorker({ GROUPQ_MAX_SUBREQUESTS: '12' });
  let endpoint: Endpoint;
  let stats: { maxOpen: number };
  beforeAll(async () => {
    ({ endpoint, stats } = await slowEndpoint());
  });
  afterAll(() => endpoint.close());

  it('a drain stops at its subrequest budget; the cron delivers the rest', async () => {
    const queue = queueName('budget');
    // Capacity is not the limit here: 30 groups, concurrency 100.
    await putQueue(env.worker, queue, { endpoint: endpoint.url, concurrency: 100 });
    const jobs = Array.from({ length: JOBS }, (_, i) => ({ id: `j${i}`, group: `g${i}`, data: i }));
    await enqueueBatch(env.worker, queue, jobs);

    // The enqueue leased jobs in its own call; once none is leased, its drain is over.
    const counts = await countsWhenNoneLeased(env.worker, queue);
    const byRequest = endpoint.received.length;
    expect(byRequest).toBeGreaterThan(0);
    expect(byRequest).toBeLessThan(JOBS); // the budget ran out with jobs still waiting
    expect(counts.waiting).toBe(JOBS - byRequest);

    // Each cron run is one more invocation with a budget of its own: the rest flows, nothing lost.
    await poll(async () => (endpoint.received.length >= JOBS ? true : undefined), { pump: env.worker, what: 'every job' });
    expect(new Set(endpoint.received.map((r) => r.job.id)).size).toBe(JOBS);
    expect(stats.maxOpen).toBeLessThanOrEqual(6);
  });
});
