// The invocation's budgets (docs/deploy.md#limits-and-what-they-mean-for-your-jobs): one
// invocation never has more than 6 pushes open at once, and a drain stops at its subrequest
// budget, leaving the rest to the next trigger (here the cron) without losing anything.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Endpoint, startEndpoint } from '../helpers/endpoint';
import { enqueueBatch, poll, putQueue, queueName, sleep, useWorker } from './support';

const JOBS = 30;

/** An endpoint that holds each push a little, counting how many are open at once. */
async function slowEndpoint() {
  const stats = { open: 0, maxOpen: 0 };
  const endpoint = await startEndpoint(async () => {
    stats.open++;
    stats.maxOpen = Math.max(stats.maxOpen, stats.open);
    await sleep(100); // long enough for the pushes of one invocation to overlap
    stats.open--;
    return { status: 200 };
  });
  return { endpoint, stats };
}

describe('at most six pushes open per invocation', () => {
  const env = useWorker();
  it('one enqueue of 30 ready jobs (30 groups, concurrency 100) pushes them six at a time', async () => {
    const { endpoint, stats } = await slowEndpoint();
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

  /** Waits until no delivery has arrived for `quietMs`: the invocations that pushed are done. */
  async function quiet(quietMs = 1000): Promise<number> {
    for (let seen = -1; seen !== endpoint.received.length; ) {
      seen = endpoint.received.length;
      await sleep(quietMs);
    }
    return endpoint.received.length;
  }

  it('a drain stops at its subrequest budget; the cron delivers the rest', async () => {
    const queue = queueName('budget');
    // Capacity is not the limit here: 30 groups, concurrency 100.
    await putQueue(env.worker, queue, { endpoint: endpoint.url, concurrency: 100 });
    const jobs = Array.from({ length: JOBS }, (_, i) => ({ id: `j${i}`, group: `g${i}`, data: i }));
    await enqueueBatch(env.worker, queue, jobs);

    const byRequest = await quiet();
    expect(byRequest).toBeGreaterThan(0);
    expect(byRequest).toBeLessThan(JOBS); // the budget ran out with jobs still waiting
    const counts = (await (await env.worker.api(`/v1/queues/${queue}`)).json()) as { counts: { waiting: number } };
    expect(counts.counts.waiting).toBe(JOBS - byRequest);

    // Each cron run is one more invocation with a budget of its own: the rest flows, nothing lost.
    await poll(async () => (endpoint.received.length >= JOBS ? true : undefined), { pump: env.worker, what: 'every job' });
    expect(new Set(endpoint.received.map((r) => r.job.id)).size).toBe(JOBS);
    expect(stats.maxOpen).toBeLessThanOrEqual(6);
  });
});
