// The batch delivery as an endpoint sees it (docs/batches.md#the-delivery): one signed POST whose
// webhook-id is `bat_` and 32 hex digits, repeated as the body's id; the groupq headers; a body
// of {id, queue, group, jobs} whose every element is exactly a single delivery's body, the
// jobs sharing one lease deadline; each delivery verified by the official `standardwebhooks`
// package. The webhook-id is the same when the same jobs are sent again (whatever their attempt
// numbers) and another for other jobs. A queue with maxSize 1 still sends batch bodies (of one);
// a queue without `batch` sends exactly today's single-job delivery.
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { type BatchBody, batchOf } from '../helpers/batch-checker';
import { type Received, expectedSignature, useEndpointPerTest } from '../helpers/endpoint';
import { SIGNING_SECRET } from '../helpers/worker';
import { enqueue, enqueueBatch, getJob, jobInState, putQueue, queueName, quickRetries, useWorker } from '../delivery/support';

/** A single delivery's body, field by field (test/delivery/protocol.test.ts). */
const BODY_FIELDS = ['id', 'queue', 'group', 'data', 'attempt', 'maxAttempts', 'orderMs', 'createdAt', 'lease', 'callbacks'];

/** What the official package makes of a delivery: its body, once the signature checks out. */
const verified = (r: Received) => new Webhook(SIGNING_SECRET).verify(r.rawBody, r.headers as Record<string, string>);

describe('the batch body', () => {
  const env = useWorker({ GROUPQ_LOG_LEVEL: 'error' });
  const startEndpoint = useEndpointPerTest();

  it('one signed POST: bat_ webhook-id, the groupq headers, and each job exactly as a single delivery carries it', async () => {
    const ep = await startEndpoint();
    const queue = queueName('bbody');
    await putQueue(env.worker, queue, { endpoint: ep.url, maxAttempts: 4, keepCompleted: 10, batch: { maxSize: 3, maxWaitMs: 0 } });
    const group = 'team/a b ü';
    const jobs = await enqueueBatch(env.worker, queue, [0, 1, 2].map((i) => ({ group, data: { i, deep: [i, { s: 'x' }] } })));
    const [r] = await ep.waitFor(1);

    expect(r!.headers['content-type']).toBe('application/json');
    expect(r!.headers['webhook-id']).toMatch(/^bat_[0-9a-f]{32}$/);
    expect(r!.headers['webhook-signature']).toBe(
      expectedSignature(SIGNING_SECRET, String(r!.headers['webhook-id']), String(r!.headers['webhook-timestamp']), r!.rawBody),
    );
    expect(r!.headers['groupq-queue']).toBe(queue);
    expect(r!.headers['groupq-group']).toBe(encodeURIComponent(group));
    expect(r!.headers['groupq-batch-size']).toBe('3');
    // A batch is no one job: none of the single delivery's per-job headers.
    expect(r!.headers['groupq-job-id']).toBeUndefined();
    expect(r!.headers['groupq-attempt']).toBeUndefined();

    const body = batchOf(r!);
    expect(verified(r!)).toEqual(body);
    expect(Object.keys(body)).toEqual(['id', 'queue', 'group', 'jobs']);
    expect(body).toMatchObject({ id: r!.headers['webhook-id'], queue, group });
    expect(body.jobs.map((job) => job.id)).toEqual(jobs.map((job) => job.id));
    const expiresAt = body.jobs[0]!.lease.expiresAt;
    expect(r!.headers['groupq-lease-expires-at']).toBe(String(expiresAt));
    for (const [i, job] of body.jobs.entries()) {
      expect(Object.keys(job)).toEqual(BODY_FIELDS);
      expect(job).toMatchObject({ queue, group, data: { i, deep: [i, { s: 'x' }] }, attempt: 1, maxAttempts: 4 });
      // One lease deadline for the batch; a token and callbacks of each job's own.
      expect(job.lease.expiresAt).toBe(expiresAt);
      const base = `${env.worker.url}/v1/queues/${queue}/jobs/${job.id}`;
      expect(job.callbacks).toEqual({ heartbeat: `${base}/heartbeat`, complete: `${base}/complete`, fail: `${base}/fail`, progress: `${base}/progress` });
    }
    expect(new Set(body.jobs.map((job) => job.lease.token)).size).toBe(3);
    for (const job of jobs) await jobInState(env.worker, queue, job.id, 'completed');
  });

  it('the same jobs sent again carry the same webhook-id whatever their attempts; other jobs another', async () => {
    // 1st: 500 (job 0 retried, the rest left); 2nd, the same three: completed 1 (job 1 retried);
    // 3rd, jobs 1 and 2: 200.
    const ep = await startEndpoint((r) => {
      const n = ep.received.indexOf(r);
      if (n === 0) return { status: 500, body: 'not yet' };
      if (n === 1) return { status: 200, body: JSON.stringify({ completed: 1, results: ['r0'], error: 'job 1 not yet' }) };
      return { status: 200 };
    });
    const queue = queueName('bbody-id');
    await putQueue(env.worker, queue, { endpoint: ep.url, backoff: quickRetries, keepCompleted: 10, batch: { maxSize: 3, maxWaitMs: 0 } });
    const jobs = await enqueueBatch(env.worker, queue, [0, 1, 2].map((i) => ({ group: 'g', data: { i } })));
    for (const job of jobs) await jobInState(env.worker, queue, job.id, 'completed', { pump: env.worker });

    const bodies: BatchBody[] = ep.received.map(batchOf);
    expect(bodies.map((b) => b.jobs.map((job) => `${(job.data as { i: number }).i}#${job.attempt}`))).toEqual([
      ['0#1', '1#1', '2#1'],
      ['0#2', '1#1', '2#1'],
      ['1#2', '2#1'],
    ]);
    const ids = ep.received.map((r) => r.headers['webhook-id']);
    expect(ids[1]).toBe(ids[0]);
    expect(ids[2]).not.toBe(ids[0]);
    expect(ids[2]).toMatch(/^bat_[0-9a-f]{32}$/);
    for (const r of ep.received) expect(verified(r)).toEqual(batchOf(r));
    // Each attempt is signed afresh, with a lease of its own.
    expect(new Set(bodies.map((b) => b.jobs[0]!.lease.token)).size).toBe(3);
    expect((await getJob(env.worker, queue, jobs[0]!.id)).result).toBe('r0');
  });

  it('maxSize 1: every delivery is a batch body, of one job', async () => {
    const ep = await startEndpoint();
    const queue = queueName('bbody-one');
    await putQueue(env.worker, queue, { endpoint: ep.url, keepCompleted: 10, batch: { maxSize: 1, maxWaitMs: 0 } });
    const jobs = await enqueueBatch(env.worker, queue, [0, 1].map((i) => ({ group: 'g', data: { i } })));
    for (const job of jobs) await jobInState(env.worker, queue, job.id, 'completed');
    expect(ep.received.map((r) => batchOf(r).jobs.map((job) => job.id))).toEqual([[jobs[0]!.id], [jobs[1]!.id]]);
    for (const r of ep.received) {
      expect(r.headers['webhook-id']).toMatch(/^bat_[0-9a-f]{32}$/);
      expect(r.headers['groupq-batch-size']).toBe('1');
      expect(verified(r)).toEqual(batchOf(r));
    }
  });

  for (const [title, batch] of [
    ['a queue that never set batch', undefined],
    ['a queue whose batch is null', null],
  ] as const) {
    it(`${title}: a delivery is exactly today's single-job body`, async () => {
      const ep = await startEndpoint();
      const queue = queueName('bbody-none');
      await putQueue(env.worker, queue, { endpoint: ep.url, keepCompleted: 10, ...(batch === null && { batch }) });
      const { id } = await enqueue(env.worker, queue, { group: 'g', data: { hello: 'world' } });
      const [r] = await ep.waitFor(1);
      expect(r!.headers['webhook-id']).toMatch(/^msg_[0-9a-f]{32}$/);
      expect(r!.headers['groupq-job-id']).toBe(id);
      expect(r!.headers['groupq-attempt']).toBe('1');
      expect(r!.headers['groupq-batch-size']).toBeUndefined();
      expect(Object.keys(r!.job)).toEqual(BODY_FIELDS);
      expect(r!.job).toMatchObject({ id, queue, group: 'g', data: { hello: 'world' }, attempt: 1 });
      expect(verified(r!)).toEqual(r!.job);
      await jobInState(env.worker, queue, id, 'completed');
    });
  }
});
