// GROUPQ_MAX_PUSHES (docs/deploy.md#workers-free): one invocation pushes at most that many jobs,
// the request's follow-up as much as a cron run; the queue stays due and each next invocation
// takes the next ones, until every job is delivered, each once.
import { describe, expect, it } from 'vitest';
import { startEndpoint } from '../helpers/endpoint';
import { enqueueBatch, putQueue, queueName, sleep, useWorker } from './support';

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
      // The enqueue's follow-up runs after its response: wait until no delivery came for a while.
      for (let seen = -1; seen !== endpoint.received.length; ) {
        seen = endpoint.received.length;
        await sleep(1000);
      }
      expect(endpoint.received.length).toBe(PUSHES);

      // A cron run is one invocation, and scheduled() waits for it to end.
      for (let run = 1; endpoint.received.length < JOBS; run++) {
        await env.worker.scheduled();
        expect(endpoint.received.length).toBe(Math.min(JOBS, PUSHES * (run + 1)));
      }
      expect(new Set(endpoint.received.map((r) => r.job.id)).size).toBe(JOBS);
    } finally {
      await endpoint.close();
    }
  });
});
