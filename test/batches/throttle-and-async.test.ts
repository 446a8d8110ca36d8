// Batches answered 429 and batches taken asynchronously (docs/batches.md#the-answer), one batch
// at a time, through the Worker and a real endpoint on loopback:
//   - 429 holds the group with no attempt used: the same jobs come back, each with the attempt
//     number it had, under the same webhook-id; the attempt that then completes is the only one;
//   - 202: the endpoint ends the jobs through their own callbacks in order; ending one while a job
//     ahead of it is still out is refused with 409 OUT_OF_ORDER and changes nothing; a heartbeat
//     through any job renews the lease of every job of the batch still out;
//   - failing job k through its callback returns the jobs behind it to their group untouched: their
//     old leases are gone and they come back with the same attempt number, behind job k's retry;
//   - a batch taken with 202 and left alone lapses: job 0's attempt fails, the rest come back
//     untouched; left alone after some of its jobs ended, the first job still out fails.
import { describe, expect, it } from 'vitest';
import { type BatchBody, batchOf } from '../helpers/batch-checker';
import { type Received, useEndpointPerTest } from '../helpers/endpoint';
import { callback, enqueueBatch, getJob, jobInState, poll, putQueue, queueName, quickRetries, useWorker } from '../delivery/support';

const ids = (body: BatchBody) => body.jobs.map((job) => job.id);
const attempts = (body: BatchBody) => body.jobs.map((job) => job.attempt);

describe('batches answered 429, and taken asynchronously', () => {
  const env = useWorker({ GROUPQ_LOG_LEVEL: 'error' });
  const startEndpoint = useEndpointPerTest();

  /** A queue of batches of up to 5 on `url`, and 5 jobs of group g in it (one enqueue: one batch). */
  async function fiveJobs(url: string, config: Record<string, unknown> = {}) {
    const queue = queueName('bthrottle');
    await putQueue(env.worker, queue, { endpoint: url, backoff: quickRetries, keepCompleted: 100, batch: { maxSize: 5, maxWaitMs: 0 }, ...config });
    const jobs = await enqueueBatch(env.worker, queue, Array.from({ length: 5 }, (_, i) => ({ group: 'g', data: { i } })));
    return { queue, jobIds: jobs.map((job) => job.id) };
  }

  it('429 holds the group with no attempt used: the same jobs come back at the same attempt, under the same webhook-id', async () => {
    const ep = await startEndpoint((r) => (ep.received.length === 1 ? { status: 429, headers: { 'retry-after': '1' } } : { status: 200 }));
    const { queue, jobIds } = await fiveJobs(ep.url);
    for (const id of jobIds) await jobInState(env.worker, queue, id, 'completed', { pump: env.worker });

    const [first, second, ...more] = ep.received;
    expect(more).toEqual([]);
    expect(ids(batchOf(first!))).toEqual(jobIds);
    expect(attempts(batchOf(first!))).toEqual([1, 1, 1, 1, 1]);
    expect(ids(batchOf(second!))).toEqual(jobIds);
    expect(attempts(batchOf(second!))).toEqual([1, 1, 1, 1, 1]);
    expect(second!.headers['webhook-id']).toBe(first!.headers['webhook-id']);
    for (const [i, id] of jobIds.entries()) {
      const job = await getJob(env.worker, queue, id);
      expect(job.attempts).toBe(1);
      // The 429 was no attempt: the history holds the one that completed, in its batch.
      expect(job.history?.map((h) => [h.attempt, h.outcome, h.batch?.index, h.batch?.size])).toEqual([[1, 'completed', i, 5]]);
    }
  });

  /** A queue whose first batch the endpoint takes with 202; later ones it answers 200. */
  async function asyncBatch(config: Record<string, unknown> = {}) {
    const ep = await startEndpoint((r) => (ep.received.length === 1 ? { status: 202 } : { status: 200 }));
    const setup = await fiveJobs(ep.url, config);
    const [r] = await ep.waitFor(1);
    return { ep, ...setup, batch: batchOf(r!), received: r! };
  }

  const complete = (batch: BatchBody, i: number) =>
    callback(batch.jobs[i]!.callbacks.complete, { lease: batch.jobs[i]!.lease.token, result: { i } });
  const fail = (batch: BatchBody, i: number, retry = true) =>
    callback(batch.jobs[i]!.callbacks.fail, { lease: batch.jobs[i]!.lease.token, error: `job ${i} failed`, retry });
  const heartbeat = (batch: BatchBody, i: number, extendMs: number) =>
    callback(batch.jobs[i]!.callbacks.heartbeat, { lease: batch.jobs[i]!.lease.token, extendMs });

  it("202: ended in order through each job's callbacks; one ended out of order is refused 409 OUT_OF_ORDER and nothing changes", async () => {
    const { ep, queue, jobIds, batch } = await asyncBatch();
    expect(ids(batch)).toEqual(jobIds);
    const before = await Promise.all(jobIds.map((id) => getJob(env.worker, queue, id)));
    expect(before.map((job) => job.state)).toEqual(['active', 'active', 'active', 'active', 'active']);

    const refused = [await complete(batch, 2), await fail(batch, 1), await complete(batch, 4)];
    expect(refused.map((r) => [r.status, r.json?.error?.code])).toEqual(refused.map(() => [409, 'OUT_OF_ORDER']));
    expect(await Promise.all(jobIds.map((id) => getJob(env.worker, queue, id)))).toEqual(before);
    for (const i of [0, 1, 2, 3, 4]) {
      const done = await complete(batch, i);
      expect([done.status, done.json.state]).toEqual([200, 'completed']);
      const job = await getJob(env.worker, queue, jobIds[i]!);
      expect([job.state, job.attempts, job.result]).toEqual(['completed', 1, { i }]);
    }
    expect(ep.received).toHaveLength(1);
  });

  it('a heartbeat through any job renews every job of the batch still out', async () => {
    const { queue, jobIds, batch } = await asyncBatch();
    const leaseOf = async (id: string) => (await getJob(env.worker, queue, id)).leaseExpiresAt;
    const shared = batch.jobs[0]!.lease.expiresAt;
    expect(await Promise.all(jobIds.map(leaseOf))).toEqual([shared, shared, shared, shared, shared]);

    // Through the last job: all five move to its new deadline.
    const beat = await heartbeat(batch, 4, 120_000);
    expect(beat.status).toBe(200);
    expect(beat.json.expiresAt).toBeGreaterThan(shared);
    expect(await Promise.all(jobIds.map(leaseOf))).toEqual(jobIds.map(() => beat.json.expiresAt));

    // Two ended: a heartbeat through the middle one still out moves the three left, and only them.
    for (const i of [0, 1]) expect((await complete(batch, i)).status).toBe(200);
    const again = await heartbeat(batch, 3, 60_000);
    expect(again.status).toBe(200);
    expect(again.json.expiresAt).not.toBe(beat.json.expiresAt);
    expect(await Promise.all(jobIds.map(leaseOf))).toEqual([undefined, undefined, again.json.expiresAt, again.json.expiresAt, again.json.expiresAt]);
    for (const i of [2, 3, 4]) expect((await complete(batch, i)).status).toBe(200);
  });

  it('failing job k through its callback returns the jobs behind it untouched; they come back behind its retry', async () => {
    // Job k's retry holds the group for its backoff: meanwhile the jobs behind it wait, as released.
    const { ep, queue, jobIds, batch } = await asyncBatch({ backoff: { type: 'fixed', delayMs: 1500, jitter: false } });
    for (const i of [0, 1]) expect((await complete(batch, i)).json.state).toBe('completed');
    const failed = await fail(batch, 2);
    expect([failed.status, failed.json.state]).toEqual([200, 'waiting']);
    // The jobs behind it are waiting again, with no attempt used, and their old leases are gone.
    for (const i of [3, 4]) {
      const job = await getJob(env.worker, queue, jobIds[i]!);
      expect([job.state, job.attempts]).toEqual(['waiting', 0]);
      const late = await complete(batch, i);
      expect(late.status).toBe(409);
      expect(late.json.error.code).toBe('LEASE_LOST');
    }

    for (const id of jobIds.slice(2)) await jobInState(env.worker, queue, id, 'completed', { pump: env.worker });
    const [, again, ...more] = ep.received;
    expect(more).toEqual([]);
    expect(ids(batchOf(again!))).toEqual(jobIds.slice(2));
    expect(attempts(batchOf(again!))).toEqual([2, 1, 1]);
    const ends = await Promise.all(jobIds.map((id) => getJob(env.worker, queue, id)));
    expect(ends.map((job) => job.attempts)).toEqual([1, 1, 2, 1, 1]);
  });

  it('failing job k for good through its callback: it ends failed, the jobs behind it come back untouched', async () => {
    const { ep, queue, jobIds, batch } = await asyncBatch({ keepFailed: 100 });
    expect((await complete(batch, 0)).json.state).toBe('completed');
    const failed = await fail(batch, 1, false);
    expect([failed.status, failed.json.state]).toEqual([200, 'failed']);
    for (const id of jobIds.slice(2)) await jobInState(env.worker, queue, id, 'completed', { pump: env.worker });
    expect(ids(batchOf(ep.received[1]!))).toEqual(jobIds.slice(2));
    expect(attempts(batchOf(ep.received[1]!))).toEqual([1, 1, 1]);
    const ends = await Promise.all(jobIds.map((id) => getJob(env.worker, queue, id)));
    expect(ends.map((job) => [job.state, job.attempts])).toEqual([
      ['completed', 1],
      ['failed', 1],
      ['completed', 1],
      ['completed', 1],
      ['completed', 1],
    ]);
  });

  it('a batch taken with 202 and left alone lapses: job 0\'s attempt fails, the rest come back untouched', async () => {
    // timeoutMs 1 s: the lease lasts 6 s (timeoutMs + 5 s), then a cron run fails job 0's attempt.
    const { ep, queue, jobIds, received } = await asyncBatch({ timeoutMs: 1000 });
    const second: Received = await poll(async () => ep.received[1], { pump: env.worker, timeoutMs: 30_000, what: 'the batch again' });
    expect(ids(batchOf(second))).toEqual(jobIds);
    expect(attempts(batchOf(second))).toEqual([2, 1, 1, 1, 1]);
    // The same jobs: the same webhook-id.
    expect(second.headers['webhook-id']).toBe(received.headers['webhook-id']);
    for (const id of jobIds) await jobInState(env.worker, queue, id, 'completed', { pump: env.worker });
    const first = await getJob(env.worker, queue, jobIds[0]!);
    expect(first.history?.map((h) => [h.attempt, h.outcome])).toEqual([
      [1, 'expired'],
      [2, 'completed'],
    ]);
    for (const id of jobIds.slice(1)) expect((await getJob(env.worker, queue, id)).attempts).toBe(1);
  });

  it('a batch partly ended through its callbacks, then left alone, lapses: the first job still out fails, the rest come back untouched', async () => {
    const { ep, queue, jobIds, batch } = await asyncBatch({ timeoutMs: 1000 });
    for (const i of [0, 1]) expect((await complete(batch, i)).json.state).toBe('completed');
    const second: Received = await poll(async () => ep.received[1], { pump: env.worker, timeoutMs: 30_000, what: 'the batch again' });
    expect(ids(batchOf(second))).toEqual(jobIds.slice(2));
    expect(attempts(batchOf(second))).toEqual([2, 1, 1]);
    for (const id of jobIds) await jobInState(env.worker, queue, id, 'completed', { pump: env.worker });
    const jobs = await Promise.all(jobIds.map((id) => getJob(env.worker, queue, id)));
    expect(jobs.map((job) => job.history?.map((h) => h.outcome))).toEqual([
      ['completed'],
      ['completed'],
      ['expired', 'completed'],
      ['completed'],
      ['completed'],
    ]);
  });
});
