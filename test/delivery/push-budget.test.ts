// GROUPQ_MAX_PUSHES (docs/deploy.md#workers-free): one invocation pushes at most that many jobs,
// the request's follow-up as much as a cron run; the queue stays due and each next invocation
// takes the next ones, until every job is delivered, each once.
import { describe, expect, it } from 'vitest';
import { startEndpoint } from '../helpers/endpoint';
import { countsWhenNoneLeased, enqueueBatch, putQueue, queueName, useWorker } from './support';

const JOBS = 30;
const PUSHES = 4;

describe('push budget', () => {
  const env = useWorker({ GROUPQ_MAX_PUSHES: String(PUSHES) });

  it(`each invocation pushes at most ${PUSHES} jobs; the next ones take the rest`, async () => {
    const endpoint = await startEndpoint();
    try {
      const queue = queueName('pushes');
      // Neither capacity nor subrequests are the limit here: 30 groups, concurrency 100.
      await putQueue(env.worker, queue, { endpoint: endpoint.url, concurrency: 100 });
      await enqueueBatch(env.worker, queue, Array.from({ length: JOBS }, (_, i) => ({ id: `j${i}`, group: `g${i}`, data: i })));
      // The enqueue's follow-up runs after its response: it is over once none of its jobs is leased.
      expect((await countsWhenNoneLeased(env.worker, queue)).waiting).toBe(JOBS - PUSHES);
      expect(endpoint.received.length).toBe(PUSHES);

      // A cron run is one invocation, and scheduled() waits for it to end. One that runs the queue
      // takes as many as its budget allows; one that finds the queue's tick in another invocation's
      // hands (the request's follow-up may still end with a tick) takes none, and the next goes on.
      for (let idle = 0; endpoint.received.length < JOBS; ) {
        const before = endpoint.received.length;
        await env.worker.scheduled();
        const pushed = endpoint.received.length - before;
        expect([0, Math.min(PUSHES, JOBS - before)]).toContain(pushed);
        idle = pushed === 0 ? idle + 1 : 0;
        expect(idle, 'cron runs in a row that pushed nothing').toBeLessThan(20);
      }
      expect(new Set(endpoint.received.map((r) => r.job.id)).size).toBe(JOBS);
    } finally {
      await endpoint.close();
    }
  });
});
