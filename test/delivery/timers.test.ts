// Second-precision timers without the cron: a request's follow-up keeps waking for the queue's
// due times within its invocation, so a delayed job and a retry's backoff end on time even when
// no cron run comes (these tests never fire one). Never early, either.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Endpoint, startEndpoint } from '../helpers/endpoint';
import { enqueue, jobInState, putQueue, queueName, useWorker } from './support';

describe('timers honoured by the request follow-up, without the cron', () => {
  const env = useWorker();
  let endpoint: Endpoint;
  beforeAll(async () => {
    endpoint = await startEndpoint((r) => (r.job.data === 'fail-once' && r.job.attempt === 1 ? { status: 500 } : { status: 200 }));
  });
  afterAll(() => endpoint.close());

  it('a delayed job is delivered once due, not before', async () => {
    const queue = queueName('timer-delay');
    await putQueue(env.worker, queue, { endpoint: endpoint.url, keepCompleted: 10 });
    const sentAt = Date.now();
    const { id, state } = await enqueue(env.worker, queue, { group: 'g', data: 'later', delayMs: 1000 });
    expect(state).toBe('delayed');
    await jobInState(env.worker, queue, id, 'completed');
    const delivery = endpoint.received.find((r) => r.job.id === id)!;
    expect(delivery.at).toBeGreaterThanOrEqual(sentAt + 1000);
  });

  it("a retry's backoff ends on time: the second attempt comes after it", async () => {
    const queue = queueName('timer-retry');
    await putQueue(env.worker, queue, {
      endpoint: endpoint.url,
      keepCompleted: 10,
      backoff: { type: 'fixed', delayMs: 1000, jitter: false },
    });
    const { id } = await enqueue(env.worker, queue, { group: 'g', data: 'fail-once' });
    await jobInState(env.worker, queue, id, 'completed');
    const [first, second] = endpoint.received.filter((r) => r.job.id === id);
    expect([first!.job.attempt, second!.job.attempt]).toEqual([1, 2]);
    expect(second!.at).toBeGreaterThanOrEqual(first!.at + 1000);
  });
});
