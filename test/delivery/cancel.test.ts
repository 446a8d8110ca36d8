// Cancelling jobs that are being delivered, through the Worker to real endpoints: the group's
// next job is delivered at once, the cancelled job's late answer (sync) or callbacks (async)
// change nothing, and the endpoint's HTTP statuses land in the job's attempt history.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Endpoint, startEndpoint } from '../helpers/endpoint';
import { callback, enqueue, enqueueBatch, getJob, jobInState, putQueue, queueName, quickRetries, useWorker } from './support';

const KINDS = ['heartbeat', 'progress', 'complete', 'fail'] as const;

function bodyFor(kind: (typeof KINDS)[number], lease: string): Record<string, unknown> {
  if (kind === 'complete') return { lease, result: 'late' };
  if (kind === 'fail') return { lease, error: 'late', retry: true };
  if (kind === 'progress') return { lease, progress: 50 };
  return { lease };
}

const cancel = (env: ReturnType<typeof useWorker>, queue: string, id: string) =>
  env.worker.api(`/v1/queues/${queue}/jobs/${encodeURIComponent(id)}/cancel`, { method: 'POST' });

describe('cancel during delivery', () => {
  const env = useWorker();
  let endpoint: Endpoint;
  /** Answers of the held synchronous delivery, released by the test. */
  let release: () => void = () => {};
  beforeAll(async () => {
    endpoint = await startEndpoint(async (r) => {
      const data = r.job.data as { mode: string; n?: number };
      if (data.mode === 'hold') {
        await new Promise<void>((resolve) => (release = resolve));
        return { status: 200, headers: { 'content-type': 'application/json' }, body: '"late"' };
      }
      if (data.mode === 'async') return { status: 202 };
      if (data.mode === 'flaky' && r.job.attempt === 1) return { status: 503, body: 'busy' };
      return { status: 200, headers: { 'content-type': 'application/json' }, body: '"done"' };
    });
  });
  afterAll(() => endpoint?.close());

  it('a synchronous delivery in flight: the next job of the group starts, the late 200 changes nothing', async () => {
    const queue = queueName('cancel-sync');
    await putQueue(env.worker, queue, { endpoint: endpoint.url, keepCompleted: 10, timeoutMs: 20_000 });
    const before = endpoint.received.length;
    const [held, next] = await enqueueBatch(env.worker, queue, [
      { id: 'held', group: 'g', data: { mode: 'hold' } },
      { id: 'next', group: 'g', data: { mode: 'now' } },
    ]);
    await endpoint.waitFor(before + 1);
    expect((await cancel(env, queue, held!.id)).status).toBe(200);
    // The group moved on while the first delivery is still open.
    const done = await jobInState(env.worker, queue, next!.id, 'completed');
    expect(done).toMatchObject({ result: 'done', history: [{ attempt: 1, outcome: 'completed', status: 200 }] });
    const cancelled = await getJob(env.worker, queue, held!.id);
    release();
    // Its answer comes and is refused as JOB_CANCELLED by the drain's settle: the job stays as it was.
    const third = await enqueue(env.worker, queue, { group: 'g', data: { mode: 'now' } });
    await jobInState(env.worker, queue, third.id, 'completed');
    expect(await getJob(env.worker, queue, held!.id)).toEqual(cancelled);
    expect(cancelled).toMatchObject({ state: 'cancelled', attempts: 1, history: [{ attempt: 1, outcome: 'cancelled' }] });
    expect(cancelled).not.toHaveProperty('result');
    const counts = (await (await env.worker.api(`/v1/queues/${queue}`)).json()) as { counts: Record<string, number> };
    expect(counts.counts).toMatchObject({ active: 0, completed: 2, cancelled: 1, groups: 0 });
  });

  it('an asynchronous lease: every callback of it answers 409 JOB_CANCELLED and changes nothing', async () => {
    const queue = queueName('cancel-async');
    await putQueue(env.worker, queue, { endpoint: endpoint.url, keepCompleted: 10 });
    const before = endpoint.received.length;
    const [job, next] = await enqueueBatch(env.worker, queue, [
      { id: 'a', group: 'g', data: { mode: 'async' } },
      { id: 'b', group: 'g', data: { mode: 'now' } },
    ]);
    const [delivered] = (await endpoint.waitFor(before + 1)).slice(before);
    expect(delivered!.job.id).toBe(job!.id);
    expect((await cancel(env, queue, job!.id)).status).toBe(200);
    await jobInState(env.worker, queue, next!.id, 'completed');
    const cancelled = await getJob(env.worker, queue, job!.id);
    for (const kind of KINDS) {
      const res = await callback(delivered!.job.callbacks[kind], bodyFor(kind, delivered!.job.lease.token));
      expect(res.status, kind).toBe(409);
      expect(res.json.error.code, kind).toBe('JOB_CANCELLED');
    }
    expect(await getJob(env.worker, queue, job!.id)).toEqual(cancelled);
  });

  it("the endpoint's statuses reach the history: 503, then 200 on the retry", async () => {
    const queue = queueName('history');
    await putQueue(env.worker, queue, { endpoint: endpoint.url, keepCompleted: 10, backoff: quickRetries });
    const { id } = await enqueue(env.worker, queue, { group: 'g', data: { mode: 'flaky' } });
    const done = await jobInState(env.worker, queue, id, 'completed', { pump: env.worker });
    expect(done.history!.map((a) => [a.attempt, a.outcome, a.status, a.error])).toEqual([
      [1, 'failed', 503, 'HTTP 503: busy'],
      [2, 'completed', 200, undefined],
    ]);
  });
});
