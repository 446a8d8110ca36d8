// POST /v1/queues/{queue}/jobs/{id}/cancel over HTTP to the Worker: 200 {id, state} for a
// waiting, delayed or active job; 409 INVALID_STATE for a finished one; the admin token; a
// cancelled job listed, counted and shown with GET. Refusals write nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Endpoint, startEndpoint } from '../helpers/endpoint';
import { enqueue, expectJson, expectRefused, pausedQueue, putQueue, quietQueue, uniqueQueue, useHttpSuite, waitForState } from './support';

const suite = useHttpSuite();
let accepting: Endpoint;
beforeAll(async () => {
  accepting = await startEndpoint(() => ({ status: 202 }));
});
afterAll(() => accepting?.close());

const cancel = (queue: string, id: string, headers?: Record<string, string>) =>
  suite.worker.api(`/v1/queues/${queue}/jobs/${encodeURIComponent(id)}/cancel`, { method: 'POST', headers });

describe('POST /v1/queues/{queue}/jobs/{id}/cancel', () => {
  it('cancels waiting and delayed jobs: 200 {id, state}, then listed, counted and shown as cancelled', async () => {
    const queue = uniqueQueue('cancel');
    await pausedQueue(suite.worker, queue);
    await enqueue(suite.worker, queue, { id: 'w', group: 'g' });
    await enqueue(suite.worker, queue, { id: 'd', group: 'g', delayMs: 600_000 });
    expect(await expectJson(await cancel(queue, 'w'), 200)).toEqual({ id: 'w', state: 'cancelled' });
    expect(await expectJson(await cancel(queue, 'd'), 200)).toEqual({ id: 'd', state: 'cancelled' });

    const listed = await expectJson(await suite.worker.api(`/v1/queues/${queue}/jobs?state=cancelled`), 200);
    expect(listed.jobs.map((job: { id: string }) => job.id)).toEqual(['d', 'w']);
    const info = await expectJson(await suite.worker.api(`/v1/queues/${queue}`), 200);
    expect(info.counts).toMatchObject({ waiting: 0, delayed: 0, cancelled: 2, groups: 0 });
    expect(await expectJson(await suite.worker.api(`/v1/queues/${queue}/jobs/w`), 200)).toMatchObject({ state: 'cancelled', attempts: 0 });
  });

  it('cancels an active job: the attempt counts and its lease callbacks get 409 JOB_CANCELLED', async () => {
    const queue = uniqueQueue('cancel-active');
    await putQueue(suite.worker, queue, { endpoint: accepting.url });
    const before = accepting.received.length;
    const { id } = await enqueue(suite.worker, queue, { group: 'g' });
    await waitForState(suite.worker, queue, id, 'active');
    const [delivered] = (await accepting.waitFor(before + 1)).slice(before);
    expect(await expectJson(await cancel(queue, id), 200)).toEqual({ id, state: 'cancelled' });
    const heartbeat = await fetch(delivered!.job.callbacks.heartbeat, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ lease: delivered!.job.lease.token }),
    });
    expect(heartbeat.status).toBe(409);
    expect(((await heartbeat.json()) as { error: { code: string } }).error.code).toBe('JOB_CANCELLED');
    expect(await expectJson(await suite.worker.api(`/v1/queues/${queue}/jobs/${id}`), 200)).toMatchObject({
      state: 'cancelled',
      attempts: 1,
      history: [{ attempt: 1, outcome: 'cancelled' }],
    });
  });

  it('a finished job is 409 INVALID_STATE and stays as it was', async () => {
    const queue = await quietQueue(suite, 'cancel-done');
    await enqueue(suite.worker, queue, { id: 'j', group: 'g' });
    await expectJson(await cancel(queue, 'j'), 200);
    await expectRefused(suite, queue, 409, 'INVALID_STATE', () => cancel(queue, 'j'));
  });

  it('an unknown job or queue is 404; without the admin token 401; a bad id 400: nothing written', async () => {
    const queue = await quietQueue(suite, 'cancel-bad');
    await enqueue(suite.worker, queue, { id: 'j', group: 'g' });
    await expectRefused(suite, queue, 404, 'JOB_NOT_FOUND', () => cancel(queue, 'nope'));
    await expectRefused(suite, queue, 404, 'QUEUE_NOT_FOUND', () => cancel(`${queue}-gone`, 'j'));
    await expectRefused(suite, queue, 401, 'UNAUTHORIZED', () => cancel(queue, 'j', { authorization: 'Bearer gq_wrong' }));
    await expectRefused(suite, queue, 400, 'VALIDATION_FAILED', () => cancel(queue, 'a b'));
  });
});
