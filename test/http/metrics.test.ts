// GET /v1/queues/{queue}/metrics over HTTP against the Worker in workerd: jobs delivered to a
// real endpoint that completes, fails for retry and fails for good (and an async job failed with
// retry:false through the fail callback) show up in the current minute of a 60-minute answer,
// oldest first; unknown queue 404, bad name 400, admin token only (401), nothing written.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Endpoint, startEndpoint } from '../helpers/endpoint';
import { enqueue, expectError, expectJson, expectRefused, putQueue, quietQueue, uniqueQueue, useHttpSuite, waitForState } from './support';

const MINUTE = 60_000;
const suite = useHttpSuite();
let endpoint: Endpoint;
beforeAll(async () => {
  // The job's data says how to answer: complete, fail (retried while attempts remain), fail for
  // good (groupq-retry: false), or take the job (202) and answer later through a callback.
  endpoint = await startEndpoint(({ job }) => {
    const answer = (job.data as { answer: string }).answer;
    if (answer === 'ok') return { status: 200 };
    if (answer === 'error') return { status: 500, body: 'try again' };
    if (answer === 'fatal') return { status: 422, headers: { 'groupq-retry': 'false' }, body: 'bad input' };
    return { status: 202 };
  });
});
afterAll(async () => {
  await endpoint?.close();
});

interface Minute {
  at: number;
  completed: number;
  failed: number;
  retried: number;
}

const metrics = (queue: string) => suite.worker.api(`/v1/queues/${queue}/metrics`);

/** The 60 minutes and their totals; checks the shape on the way. */
async function readMetrics(queue: string) {
  const before = Math.floor(Date.now() / MINUTE) * MINUTE;
  const res = await metrics(queue);
  const after = Math.floor(Date.now() / MINUTE) * MINUTE;
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  const body = await expectJson<{ minutes: Minute[] }>(res, 200);
  expect(Object.keys(body)).toEqual(['minutes']);
  const { minutes } = body;
  expect(minutes).toHaveLength(60);
  // The last entry is the current minute (the request may have crossed into the next one).
  expect([before, after]).toContain(minutes.at(-1)!.at);
  minutes.forEach((m, i) => {
    expect(Object.keys(m).sort()).toEqual(['at', 'completed', 'failed', 'retried']);
    if (i > 0) expect(m.at - minutes[i - 1]!.at).toBe(MINUTE); // oldest first, no gaps
  });
  const total = (key: 'completed' | 'failed' | 'retried') => minutes.reduce((sum, m) => sum + m[key], 0);
  return { minutes, totals: { completed: total('completed'), failed: total('failed'), retried: total('retried') } };
}

describe('GET /v1/queues/{queue}/metrics', () => {
  it('a new queue: 60 minutes of zeros, the current one last', async () => {
    const queue = uniqueQueue('mzero');
    await putQueue(suite.worker, queue, { endpoint: endpoint.url });
    const { minutes, totals } = await readMetrics(queue);
    expect(totals).toEqual({ completed: 0, failed: 0, retried: 0 });
    expect(minutes[0]).toEqual({ at: minutes.at(-1)!.at - 59 * MINUTE, completed: 0, failed: 0, retried: 0 });
  });

  it('counts what the deliveries and the fail callback ended: completed, retried, failed', async () => {
    const queue = uniqueQueue('mcount');
    const backoff = { type: 'fixed', delayMs: 0, jitter: false };
    await putQueue(suite.worker, queue, { endpoint: endpoint.url, maxAttempts: 2, backoff, keepFailed: 10 });
    await enqueue(suite.worker, queue, { id: 'ok-1', group: 'a', data: { answer: 'ok' } });
    await enqueue(suite.worker, queue, { id: 'ok-2', group: 'b', data: { answer: 'ok' } });
    await enqueue(suite.worker, queue, { id: 'error', group: 'c', data: { answer: 'error' } }); // 2 attempts: retried, then failed
    await enqueue(suite.worker, queue, { id: 'fatal', group: 'd', data: { answer: 'fatal' } });
    await enqueue(suite.worker, queue, { id: 'async', group: 'e', data: { answer: 'later' } });
    await waitForState(suite.worker, queue, 'error', 'failed');
    await waitForState(suite.worker, queue, 'fatal', 'failed');

    // The async job holds its lease; its endpoint gives up on it through the fail callback.
    const delivery = (await endpoint.waitFor(6)).find((r) => r.job.id === 'async')!;
    const failed = await fetch(delivery.job.callbacks.fail, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ lease: delivery.job.lease.token, error: 'cannot do this', retry: false }),
    });
    expect(await expectJson(failed, 200)).toEqual({ state: 'failed' });

    // Outcomes are written by the requests' background work: wait for all of them.
    await expect
      .poll(async () => (await readMetrics(queue)).totals, { timeout: 15_000, interval: 50 })
      .toEqual({ completed: 2, retried: 1, failed: 3 });
  });

  it('an unknown queue is 404 QUEUE_NOT_FOUND; a bad name 400 VALIDATION_FAILED', async () => {
    await expectError(await metrics(uniqueQueue('nosuch')), 404, 'QUEUE_NOT_FOUND');
    await expectError(await metrics(encodeURIComponent('no spaces')), 400, 'VALIDATION_FAILED');
    await expectError(await metrics('x'.repeat(65)), 400, 'VALIDATION_FAILED');
  });

  it('admin token only: none, a wrong one or a publish token 401; nothing is written', async () => {
    const queue = await quietQueue(suite, 'mauth', { publishTokens: ['publish-token-of-metrics-q-01'] });
    const get = (authorization: string) => () => suite.worker.api(`/v1/queues/${queue}/metrics`, { headers: { authorization } });
    await expectRefused(suite, queue, 401, 'UNAUTHORIZED', get(''));
    await expectRefused(suite, queue, 401, 'UNAUTHORIZED', get('Bearer not-the-admin-token'));
    await expectRefused(suite, queue, 401, 'UNAUTHORIZED', get('Bearer publish-token-of-metrics-q-01'));
  });
});
