// Asynchronous deliveries (docs/delivery.md#async-mode-jobs-longer-than-one-invocation): an endpoint that answers 202 keeps the
// lease and finishes the job through heartbeat, progress, complete and fail, authorized by the
// lease token alone. A stale or made-up token, or a job whose queue was deleted, gets 409
// LEASE_LOST and changes nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRespClient } from '../../scripts/resp.mjs';
import { type DeliveredJob, type Endpoint, startEndpoint } from '../helpers/endpoint';
import { callback, enqueue, getJob, jobInState, putQueue, queueName, quickRetries, useWorker } from './support';

const KINDS = ['heartbeat', 'complete', 'fail', 'progress'] as const;

/** A body each callback accepts, for the given lease token. */
function bodyFor(kind: (typeof KINDS)[number], lease: string): Record<string, unknown> {
  if (kind === 'complete') return { lease, result: { sneaky: true } };
  if (kind === 'fail') return { lease, error: 'should not count', retry: false };
  if (kind === 'progress') return { lease, progress: 99 };
  return { lease, extendMs: 3_600_000 };
}

describe('asynchronous deliveries (202) and the lease callbacks', () => {
  const env = useWorker();
  let endpoint: Endpoint;
  beforeAll(async () => {
    // 202 on every first attempt; a retried attempt is answered at once.
    endpoint = await startEndpoint((r) => (r.job.attempt === 1 ? { status: 202 } : { status: 200, body: 'sync' }));
  });
  afterAll(() => endpoint?.close());

  /** A queue on the shared endpoint and one job delivered to it, held by the endpoint. */
  async function accepted(config: Record<string, unknown> = {}): Promise<{ queue: string; job: DeliveredJob }> {
    const queue = queueName('async');
    await putQueue(env.worker, queue, { endpoint: endpoint.url, keepCompleted: 10, backoff: quickRetries, ...config });
    const before = endpoint.received.length;
    const { id } = await enqueue(env.worker, queue, { group: 'g', data: { n: 1 } });
    const received = await endpoint.waitFor(before + 1);
    const r = received.slice(before).find((x) => x.job.id === id)!;
    return { queue, job: r.job };
  }

  it('202 leaves the job active under the delivered lease', async () => {
    const { queue, job } = await accepted();
    const view = await getJob(env.worker, queue, job.id);
    expect(view).toMatchObject({ state: 'active', attempts: 1, leaseExpiresAt: job.lease.expiresAt });
  });

  it('heartbeat extends the lease: extendMs past the current deadline, or timeoutMs from now', async () => {
    const { queue, job } = await accepted({ timeoutMs: 20_000 });
    const extended = await callback(job.callbacks.heartbeat, { lease: job.lease.token, extendMs: 120_000 });
    expect(extended.status).toBe(200);
    expect(Object.keys(extended.json)).toEqual(['expiresAt']);
    expect(extended.json.expiresAt).toBeGreaterThan(job.lease.expiresAt);
    expect((await getJob(env.worker, queue, job.id)).leaseExpiresAt).toBe(extended.json.expiresAt);

    // Without extendMs the lease runs the job's timeoutMs from the moment of the heartbeat.
    const before = Date.now();
    const plain = await callback(job.callbacks.heartbeat, { lease: job.lease.token });
    const after = Date.now();
    expect(plain.status).toBe(200);
    expect(plain.json.expiresAt).toBeGreaterThanOrEqual(before + 20_000);
    expect(plain.json.expiresAt).toBeLessThanOrEqual(after + 20_000);
  });

  it('progress answers {} and shows on the job; complete stores the result', async () => {
    const { queue, job } = await accepted();
    const first = await callback(job.callbacks.progress, { lease: job.lease.token, progress: 42 });
    expect(first).toEqual({ status: 200, json: {} });
    expect((await getJob(env.worker, queue, job.id)).progress).toBe(42);
    const second = await callback(job.callbacks.progress, { lease: job.lease.token, progress: { step: 'resize', done: 3, of: 7 } });
    expect(second.status).toBe(200);
    expect((await getJob(env.worker, queue, job.id)).progress).toEqual({ step: 'resize', done: 3, of: 7 });

    const done = await callback(job.callbacks.complete, { lease: job.lease.token, result: { thumbnails: [1, 2] } });
    expect(done).toEqual({ status: 200, json: { state: 'completed' } });
    const view = await getJob(env.worker, queue, job.id);
    expect(view).toMatchObject({ state: 'completed', attempts: 1, result: { thumbnails: [1, 2] } });
  });

  it('fail with retry: true puts the job back, and it is delivered again as attempt 2', async () => {
    const { queue, job } = await accepted({ maxAttempts: 3 });
    const before = endpoint.received.length;
    const failed = await callback(job.callbacks.fail, { lease: job.lease.token, error: 'upstream busy', retry: true });
    expect(failed).toEqual({ status: 200, json: { state: 'waiting' } });
    const view = await jobInState(env.worker, queue, job.id, 'completed', { pump: env.worker });
    const again = endpoint.received.slice(before).filter((r) => r.job.id === job.id);
    expect(again.map((r) => r.job.attempt)).toEqual([2]);
    expect(again[0]!.headers['groupq-job-id']).toBe(job.id);
    expect(again[0]!.job.lease.token).not.toBe(job.lease.token);
    expect(view).toMatchObject({ attempts: 2, result: 'sync' });
  });

  it('the old lease after complete gets 409 LEASE_LOST on every callback and changes nothing', async () => {
    const { queue, job } = await accepted();
    expect((await callback(job.callbacks.complete, { lease: job.lease.token, result: 'first' })).status).toBe(200);
    const settled = await getJob(env.worker, queue, job.id);
    for (const kind of KINDS) {
      const res = await callback(job.callbacks[kind], bodyFor(kind, job.lease.token));
      expect(res.status, kind).toBe(409);
      expect(res.json.error.code, kind).toBe('LEASE_LOST');
    }
    expect(await getJob(env.worker, queue, job.id)).toEqual(settled);
  });

  it('a made-up token gets 409 LEASE_LOST and leaves the live lease alone', async () => {
    const { queue, job } = await accepted();
    const live = await getJob(env.worker, queue, job.id);
    for (const kind of KINDS) {
      const res = await callback(job.callbacks[kind], bodyFor(kind, 'made-up-token-0000'));
      expect(res.status, kind).toBe(409);
      expect(res.json.error.code, kind).toBe('LEASE_LOST');
    }
    expect(await getJob(env.worker, queue, job.id)).toEqual(live);
    // The real holder still owns it.
    expect((await callback(job.callbacks.complete, { lease: job.lease.token })).json).toEqual({ state: 'completed' });
  });

  it('a callback for a job of a deleted queue gets 409 LEASE_LOST and brings nothing back', async () => {
    const { queue, job } = await accepted();
    const deleted = await env.worker.api(`/v1/queues/${queue}`, { method: 'DELETE' });
    expect(deleted.status).toBe(204);
    for (const kind of KINDS) {
      const res = await callback(job.callbacks[kind], bodyFor(kind, job.lease.token));
      expect(res.status, kind).toBe(409);
      expect(res.json.error.code, kind).toBe('LEASE_LOST');
    }
    expect((await env.worker.api(`/v1/queues/${queue}`)).status).toBe(404);
    // Not a single key of the queue was written again.
    const redis = createRespClient({ port: env.stack.redisPort });
    try {
      const [, keys] = (await redis.call(['SCAN', '0', 'MATCH', `gq:{${queue}}*`, 'COUNT', 100_000])) as [Buffer, Buffer[]];
      expect(keys.map(String)).toEqual([]);
      expect(await redis.call(['SISMEMBER', 'gq:queues', queue])).toBe(0);
    } finally {
      redis.close();
    }
  });
});
