// Bulk actions through the Worker (docs/http-api.md#jobs): POST /jobs/retry retries every failed
// job and DELETE /jobs?state= deletes every completed or failed one, over 1,000 jobs, answering
// an exact {count, done}. A Worker with a small subrequest budget stops early with done: false
// and the client repeats until done. Bad input is refused and writes nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GroupqClient } from '../../src/client';
import { type Endpoint, startEndpoint } from '../helpers/endpoint';
import { ADMIN_TOKEN, type RunningWorker, startWorker } from '../helpers/worker';
import { expectError, expectJson, expectRefused, putQueue, quietQueue, uniqueQueue, useHttpSuite } from './support';

const suite = useHttpSuite();
/** A second Worker on the same stack that may make 10 subrequests per invocation. */
let tight: RunningWorker;
let endpoint: Endpoint;
let failing = true;

beforeAll(async () => {
  tight = await startWorker(suite.stack, { GROUPQ_MAX_SUBREQUESTS: '10' });
  endpoint = await startEndpoint(() => (failing ? { status: 500, headers: { 'groupq-retry': 'false' }, body: 'down' } : { status: 200 }));
});
afterAll(async () => {
  await tight?.dispose();
  await endpoint?.close();
});

const GROUPS = 40;

/** `n` jobs over GROUPS groups, ids `<group>/<i>` in enqueue order. */
function jobs(n: number) {
  return Array.from({ length: n }, (_, k) => ({ id: `g${k % GROUPS}/${Math.floor(k / GROUPS)}`, group: `g${k % GROUPS}` }));
}

async function counts(queue: string) {
  return (await expectJson(await suite.worker.api(`/v1/queues/${queue}`), 200)).counts as Record<string, number>;
}

/** Polls the queue's counts until `accept`; fires the cron now and then, as Cloudflare would. */
async function untilCounts(queue: string, accept: (c: Record<string, number>) => boolean, what: string) {
  const deadline = Date.now() + 60_000;
  for (let round = 1; ; round++) {
    const seen = await counts(queue);
    if (accept(seen)) return seen;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(seen)}`);
    if (round % 20 === 0) await suite.worker.scheduled();
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** A queue whose `n` jobs all failed for good (the endpoint refuses them with groupq-retry: false). */
async function failedQueue(n: number): Promise<string> {
  const queue = uniqueQueue('bulk');
  failing = true;
  await putQueue(suite.worker, queue, { endpoint: endpoint.url, concurrency: 100, keepFailed: 5000, keepCompleted: 5000 });
  await expectJson(await suite.worker.api(`/v1/queues/${queue}/jobs/batch`, { method: 'POST', json: { jobs: jobs(n) } }), 201);
  await untilCounts(queue, (c) => c.failed === n, `${n} jobs to fail`);
  return queue;
}

describe('over 1,000 jobs', () => {
  it('retries all 1,000 failed jobs (each group in its order), then deletes the 1,000 completed ones', async () => {
    const queue = await failedQueue(1000);
    const firstRound = endpoint.received.length;
    failing = false;
    const retried = await suite.worker.api(`/v1/queues/${queue}/jobs/retry`, { method: 'POST', json: { state: 'failed' } });
    expect(await expectJson(retried, 200)).toEqual({ count: 1000, done: true });
    await untilCounts(queue, (c) => c.completed === 1000, 'the retried jobs to complete');
    expect(await counts(queue)).toEqual({ waiting: 0, delayed: 0, active: 0, completed: 1000, failed: 0, cancelled: 0, expired: 0, groups: 0 });
    // Each job was delivered once more, and each group's jobs ran in their enqueue order again.
    const again = endpoint.received.slice(firstRound).filter((r) => r.job.queue === queue);
    expect(again).toHaveLength(1000);
    for (let g = 0; g < GROUPS; g++) {
      const ids = again.filter((r) => r.job.group === `g${g}`).map((r) => r.job.id);
      expect(ids).toEqual(Array.from({ length: 1000 / GROUPS }, (_, i) => `g${g}/${i}`));
    }

    const cleaned = await suite.worker.api(`/v1/queues/${queue}/jobs?state=completed`, { method: 'DELETE' });
    expect(await expectJson(cleaned, 200)).toEqual({ count: 1000, done: true });
    expect(await counts(queue)).toMatchObject({ completed: 0, failed: 0 });
    await expectError(await suite.worker.api(`/v1/queues/${queue}/jobs/g3%2F7`), 404, 'JOB_NOT_FOUND');
    expect(await expectJson(await suite.worker.api(`/v1/queues/${queue}/jobs?state=completed`, { method: 'DELETE' }), 200)).toEqual({ count: 0, done: true });
  });
});

describe('on a small budget', () => {
  it('answers done: false with an exact count; the client repeats until done', async () => {
    const queue = await failedQueue(600);
    await expectJson(await suite.worker.api(`/v1/queues/${queue}/pause`, { method: 'POST' }), 200);

    const first = await expectJson(await tight.api(`/v1/queues/${queue}/jobs/retry`, { method: 'POST', json: { state: 'failed' } }), 200);
    expect(first.done).toBe(false);
    expect(first.count).toBeGreaterThan(0);
    expect(first.count).toBeLessThan(600);
    expect(await counts(queue)).toMatchObject({ failed: 600 - first.count, waiting: first.count });

    const q = new GroupqClient({ url: tight.url, token: ADMIN_TOKEN }).queue(queue);
    expect(await q.retryAll({ state: 'failed' })).toEqual({ count: 600 - first.count });
    expect(await counts(queue)).toMatchObject({ failed: 0, waiting: 600 });
    expect(await q.clean({ state: 'failed' })).toEqual({ count: 0 });
  });
});

describe('bad input', () => {
  it('refuses other states, a bad body or query, and an unknown queue; a refused call writes nothing', async () => {
    const queue = await quietQueue(suite, 'bulk-bad');
    const retry = (body: string, headers: Record<string, string> = { 'content-type': 'application/json' }) => () =>
      suite.worker.api(`/v1/queues/${queue}/jobs/retry`, { method: 'POST', body, headers: { authorization: `Bearer ${ADMIN_TOKEN}`, ...headers } });
    for (const body of ['{"state":"completed"}', '{"state":"waiting"}', '{}', '{"state":"failed","limit":5}', '[]']) {
      await expectRefused(suite, queue, 400, 'VALIDATION_FAILED', retry(body));
    }
    await expectRefused(suite, queue, 400, 'BAD_JSON', retry('{"state":'));
    await expectRefused(suite, queue, 415, 'UNSUPPORTED_MEDIA_TYPE', retry('{"state":"failed"}', { 'content-type': 'text/plain' }));
    for (const search of ['', '?state=waiting', '?state=active', '?state=delayed', '?state=failed&limit=5']) {
      await expectRefused(suite, queue, 400, 'VALIDATION_FAILED', () => suite.worker.api(`/v1/queues/${queue}/jobs${search}`, { method: 'DELETE' }));
    }
    await expectError(await suite.worker.api('/v1/queues/no-such-queue/jobs?state=failed', { method: 'DELETE' }), 404, 'QUEUE_NOT_FOUND');
    await expectError(await suite.worker.api('/v1/queues/no-such-queue/jobs/retry', { method: 'POST', json: { state: 'failed' } }), 404, 'QUEUE_NOT_FOUND');
    await expectError(await suite.worker.api(`/v1/queues/${queue}/jobs?state=failed`, { method: 'DELETE', headers: { authorization: 'Bearer nope' } }), 401, 'UNAUTHORIZED');
  });
});
