// GET /v1/queues/{queue}/jobs/{id}?waitMs=N over HTTP against the Worker in workerd: a wait that
// ends early (the job completes, fails or is removed meanwhile), one that ends late (the job as
// it is after N ms), a job already finished (at once), and each class of bad waitMs (400, nothing
// written). "Early" is told apart from "late" by the wait itself, not by how fast this machine
// is: a wait that ends on its timeout cannot answer before its waitMs has passed, so an answer
// that arrives before then ended on the job.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Endpoint, startEndpoint } from '../helpers/endpoint';
import { enqueue, expectError, expectJson, expectRefused, pausedQueue, quietQueue, uniqueQueue, useHttpSuite, waitForState } from './support';

const suite = useHttpSuite();
let completing: Endpoint;
let failing: Endpoint;
beforeAll(async () => {
  completing = await startEndpoint(() => ({ headers: { 'content-type': 'application/json' }, body: '{"ok":true}' }));
  failing = await startEndpoint(() => ({ status: 500, headers: { 'groupq-retry': 'false' }, body: 'boom' }));
});
afterAll(async () => {
  await Promise.all([completing?.close(), failing?.close()]);
});

const waitFor = (queue: string, id: string, waitMs: number | string) =>
  suite.worker.api(`/v1/queues/${queue}/jobs/${encodeURIComponent(id)}?waitMs=${waitMs}`);

/** A paused queue holding job `j`: nothing happens to it until the test says so. */
async function heldJob(endpoint: Endpoint, config: Record<string, unknown> = {}) {
  const queue = uniqueQueue('wait');
  await pausedQueue(suite.worker, queue, { endpoint: endpoint.url, keepCompleted: 10, maxAttempts: 1, ...config });
  await enqueue(suite.worker, queue, { id: 'j', group: 'g', data: { n: 1 } });
  return queue;
}

const resume = (queue: string) => suite.worker.api(`/v1/queues/${queue}/resume`, { method: 'POST' });

/** The longest wait there is: a loaded machine still ends the job well inside it. */
const LONG_WAIT_MS = 25_000;

/**
 * The wait's answer, and whether it came before its waitMs ran out: a wait answered on its
 * timeout cannot be (the server starts counting after this send), so `early` says the job's end
 * answered it.
 */
async function waitEnding(queue: string, id: string, waitMs: number, meanwhile: () => Promise<void> = async () => {}) {
  let timedOut = false;
  const timer = setTimeout(() => (timedOut = true), waitMs);
  try {
    const waiting = waitFor(queue, id, waitMs);
    await meanwhile();
    const res = await waiting;
    return { res, early: !timedOut };
  } finally {
    clearTimeout(timer);
  }
}

describe('GET job ?waitMs', () => {
  it('ends early when the job completes while it waits, with the result', async () => {
    const queue = await heldJob(completing);
    const { res, early } = await waitEnding(queue, 'j', LONG_WAIT_MS, async () => {
      await expectJson(await resume(queue), 200);
    });
    const job = await expectJson(res, 200);
    expect(job).toMatchObject({ id: 'j', state: 'completed', result: { ok: true }, attempts: 1 });
    // It did not sit out its waitMs: the job's end answered it.
    expect(early).toBe(true);
  });

  it('ends early when the job fails for good, with the error', async () => {
    const queue = await heldJob(failing);
    const { res, early } = await waitEnding(queue, 'j', LONG_WAIT_MS, async () => {
      await expectJson(await resume(queue), 200);
    });
    expect(await expectJson(res, 200)).toMatchObject({ state: 'failed', error: expect.stringContaining('boom') });
    expect(early).toBe(true);
  });

  it('ends late with the job as it is then, when it does not finish in time', async () => {
    const queue = await heldJob(completing);
    const startedAt = Date.now();
    const job = await expectJson(await waitFor(queue, 'j', 1_500), 200);
    expect(Date.now() - startedAt).toBeGreaterThanOrEqual(1_500);
    expect(job).toMatchObject({ id: 'j', state: 'waiting', attempts: 0 });
    expect(job).toEqual(await expectJson(await suite.worker.api(`/v1/queues/${queue}/jobs/j`), 200));
  });

  it('answers at once for a job that has finished already (waitMs=25000, the bound, is fine), and waitMs=0 is a plain read', async () => {
    const queue = await heldJob(failing);
    await expectJson(await resume(queue), 200);
    const failed = await waitForState(suite.worker, queue, 'j', 'failed');
    const { res, early } = await waitEnding(queue, 'j', 25_000);
    expect(await expectJson(res, 200)).toEqual(failed);
    expect(early).toBe(true);
    expect(await expectJson(await waitFor(queue, 'j', 0), 200)).toEqual(failed);
  });

  it('a job removed while it waits ends the wait with 404 JOB_NOT_FOUND; an unknown job or queue is 404 too', async () => {
    const queue = await heldJob(completing);
    const waiting = waitFor(queue, 'j', 20_000);
    expect((await suite.worker.api(`/v1/queues/${queue}/jobs/j`, { method: 'DELETE' })).status).toBe(204);
    await expectError(await waiting, 404, 'JOB_NOT_FOUND');
    await expectError(await waitFor(queue, 'nope', 5_000), 404, 'JOB_NOT_FOUND');
    await expectError(await waitFor(uniqueQueue('nowhere'), 'j', 5_000), 404, 'QUEUE_NOT_FOUND');
  });

  it('a bad waitMs (over 25000, negative, not a whole number, empty) or an unknown parameter: 400, nothing written', async () => {
    const queue = await quietQueue(suite, 'badwait');
    await enqueue(suite.worker, queue, { id: 'j', group: 'g' });
    for (const query of ['waitMs=25001', 'waitMs=-1', 'waitMs=abc', 'waitMs=1.5', 'waitMs=1e3', 'waitMs=', 'wait=1000']) {
      const body = await expectRefused(suite, queue, 400, 'VALIDATION_FAILED', () => suite.worker.api(`/v1/queues/${queue}/jobs/j?${query}`));
      expect((body.error.details as { path: string }[])[0]!.path, query).toBe(query.startsWith('waitMs') ? 'waitMs' : '');
    }
  });
});
