// Outcome callbacks through the Worker in workerd, to real callback servers on loopback: the
// outcome of a completed and of a failed job, signed like a delivery and verified by the
// receiver's verifyOutcome (a tampered one refused); a failing callback URL retried by the
// schedule, answered by the receiver's createOutcomeHandler; a callback URL that never answers
// holding up nothing of its group; bad callbackUrl values refused, writing nothing.
import { describe, expect, it } from 'vitest';
import { DeliveryVerificationError, createOutcomeHandler, verifyOutcome } from '../../src/receiver';
import { type Received, useEndpointPerTest } from '../helpers/endpoint';
import { SIGNING_SECRET } from '../helpers/worker';
import { enqueue, enqueueBatch, getJob, jobInState, poll, putQueue, queueName, useWorker } from './support';

const env = useWorker();
const server = useEndpointPerTest();

/** A request as the callback server received it, for the receiver's functions. */
function asRequest(received: Received, body = received.rawBody): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(received.headers)) if (typeof value === 'string') headers.set(name, value);
  return new Request('http://127.0.0.1/outcomes', { method: 'POST', headers, body });
}

describe('outcome callbacks', () => {
  it('a completed job: POSTed to its callbackUrl, signed, and verifyOutcome accepts it (not a tampered copy)', async () => {
    const callback = await server(() => ({ status: 204 }));
    const endpoint = await server(() => ({ status: 200, headers: { 'content-type': 'application/json' }, body: '{"sent":true}' }));
    const q = queueName('oc-done');
    await putQueue(env.worker, q, { endpoint: endpoint.url, keepCompleted: 10 });
    const { id } = await enqueue(env.worker, q, { group: 'user:1', data: 1, callbackUrl: callback.url });

    const [received] = await callback.waitFor(1);
    expect(received!.headers).toMatchObject({
      'content-type': 'application/json',
      'webhook-id': expect.stringMatching(/^out_[0-9a-f]{32}$/),
      'groupq-outcome': 'completed',
      'groupq-queue': q,
    });
    const body = JSON.parse(received!.rawBody);
    expect(body).toEqual({ id, queue: q, group: 'user:1', state: 'completed', result: { sent: true }, attempts: 1, finishedAt: expect.any(Number) });

    expect(await verifyOutcome(asRequest(received!), { secret: SIGNING_SECRET })).toEqual(body);
    const tampered = verifyOutcome(asRequest(received!, received!.rawBody.replace('"sent":true', '"sent":false')), { secret: SIGNING_SECRET });
    await expect(tampered).rejects.toBeInstanceOf(DeliveryVerificationError);
    await expect(tampered).rejects.toMatchObject({ reason: 'bad_signature' });

    const job = await poll(async () => {
      const seen = await getJob(env.worker, q, id);
      return seen.outcome?.state === 'delivered' ? seen : undefined;
    });
    expect(job).toMatchObject({ state: 'completed', callbackUrl: callback.url, outcome: { state: 'delivered', attempts: 1 } });
    expect(job.finishedAt).toBe(body.finishedAt);
  });

  it("a job failed for good: its queue's callbackUrl gets the error", async () => {
    const callback = await server();
    const endpoint = await server(() => ({ status: 500, headers: { 'groupq-retry': 'false' }, body: 'nope' }));
    const q = queueName('oc-failed');
    await putQueue(env.worker, q, { endpoint: endpoint.url, callbackUrl: callback.url });
    const { id } = await enqueue(env.worker, q, { group: 'g' });
    const [received] = await callback.waitFor(1);
    expect(received!.headers['groupq-outcome']).toBe('failed');
    expect(JSON.parse(received!.rawBody)).toEqual({
      id, queue: q, group: 'g', state: 'failed', error: 'HTTP 500: nope', attempts: 1, finishedAt: expect.any(Number),
    });
    expect(await getJob(env.worker, q, id)).toMatchObject({ state: 'failed', callbackUrl: callback.url });
  });

  it('a callback URL that fails is tried again after 5 s; createOutcomeHandler answers it', async () => {
    const seen: string[] = [];
    let calls = 0;
    const handle = createOutcomeHandler(
      (outcome, { webhookId }) => {
        if (++calls === 1) throw new Error('database busy');
        seen.push(`${webhookId} ${outcome.state}`);
      },
      { secret: SIGNING_SECRET },
    );
    const callback = await server(async (received) => {
      const res = await handle(asRequest(received));
      return { status: res.status, body: await res.text() };
    });
    const endpoint = await server();
    const q = queueName('oc-retry');
    await putQueue(env.worker, q, { endpoint: endpoint.url, callbackUrl: callback.url, keepCompleted: 10 });
    const { id } = await enqueue(env.worker, q, { group: 'g' });

    await callback.waitFor(1);
    const pending = await poll(async () => {
      const job = await getJob(env.worker, q, id);
      return job.outcome?.lastError ? job : undefined;
    });
    expect(pending.outcome).toEqual({ state: 'pending', attempts: 1, nextAttemptAt: expect.any(Number), lastError: 'HTTP 500: database busy' });

    const delivered = await poll(
      async () => {
        const job = await getJob(env.worker, q, id);
        return job.outcome?.state === 'delivered' ? job : undefined;
      },
      { pump: env.worker, intervalMs: 200, what: 'the second attempt' },
    );
    expect(delivered.outcome).toMatchObject({ state: 'delivered', attempts: 2 });
    // Both attempts are one message to dedupe on: one webhook-id, a fresh timestamp each.
    const webhookId = callback.received[0]!.headers['webhook-id'];
    expect(callback.received[1]!.headers['webhook-id']).toBe(webhookId);
    expect(seen).toEqual([`${webhookId} completed`]);
    // The second attempt waited for its time (5 s after the first ended).
    expect(callback.received[1]!.at).toBeGreaterThanOrEqual(pending.outcome!.nextAttemptAt!);
  });

  it('each end of a job is a message of its own: a retry by hand that ends again gets another webhook-id', async () => {
    const callback = await server();
    let calls = 0;
    const endpoint = await server(() => (++calls === 1 ? { status: 500, headers: { 'groupq-retry': 'false' }, body: 'first' } : { status: 200 }));
    const q = queueName('oc-again');
    await putQueue(env.worker, q, { endpoint: endpoint.url, callbackUrl: callback.url, keepCompleted: 10 });
    const { id } = await enqueue(env.worker, q, { group: 'g', id: 'again' });
    await callback.waitFor(1);
    const retried = await env.worker.api(`/v1/queues/${q}/jobs/${id}/retry`, { method: 'POST' });
    expect(retried.status).toBe(200);
    const [failed, completed] = await callback.waitFor(2);
    expect([failed!.headers['groupq-outcome'], completed!.headers['groupq-outcome']]).toEqual(['failed', 'completed']);
    expect(failed!.headers['webhook-id']).toMatch(/^out_[0-9a-f]{32}$/);
    expect(completed!.headers['webhook-id']).toMatch(/^out_[0-9a-f]{32}$/);
    expect(completed!.headers['webhook-id']).not.toBe(failed!.headers['webhook-id']);
  });

  it("a callback URL that never answers holds up nothing of the job's group", async () => {
    const callback = await server(() => ({ hang: true }));
    const endpoint = await server();
    const q = queueName('oc-hang');
    await putQueue(env.worker, q, { endpoint: endpoint.url, callbackUrl: callback.url, keepCompleted: 10 });
    const jobs = await enqueueBatch(env.worker, q, [{ group: 'g' }, { group: 'g' }, { group: 'g' }]);
    for (const { id } of jobs) await jobInState(env.worker, q, id, 'completed');
    expect(endpoint.received.map((r) => r.job.id)).toEqual(jobs.map((j) => j.id));
    // Each outcome went out and is still waiting for its answer.
    await callback.waitFor(3);
    expect((await getJob(env.worker, q, jobs[0]!.id)).outcome).toMatchObject({ state: 'pending', attempts: 1 });
  });

  // Cancel ends the job through retire (finish.lua), which records the outcome; the cancel's
  // own invocation sends it.
  it('a cancelled job: its callbackUrl hears `cancelled`', async () => {
    const callback = await server();
    const endpoint = await server(() => ({ hang: true }));
    const q = queueName('oc-cancel');
    await putQueue(env.worker, q, { endpoint: endpoint.url, callbackUrl: callback.url });
    const { id } = await enqueue(env.worker, q, { group: 'g' });
    await endpoint.waitFor(1);
    const res = await env.worker.api(`/v1/queues/${q}/jobs/${id}/cancel`, { method: 'POST' });
    expect(res.status).toBe(200);
    const [received] = await callback.waitFor(1, 30_000);
    expect(received!.headers['groupq-outcome']).toBe('cancelled');
    expect(JSON.parse(received!.rawBody)).toMatchObject({ id, state: 'cancelled' });
  });
});

describe('bad callbackUrl values', () => {
  const bad: [string, unknown][] = [
    ['not a URL', 'callback please'],
    ['a relative URL', '/outcomes'],
    ['another scheme', 'ftp://127.0.0.1/outcomes'],
    ['http off loopback', 'http://producer.example/outcomes'],
    ['not a string', 42],
    ['over 2048 characters', `https://producer.example/${'x'.repeat(2048)}`],
  ];

  it.each(bad)('%s: 400 VALIDATION_FAILED for a job, a batch and a queue, and nothing is written', async (_, callbackUrl) => {
    const q = queueName('oc-bad');
    await putQueue(env.worker, q, { endpoint: 'http://127.0.0.1:9/jobs' });
    const refusals = [
      [`/v1/queues/${q}/jobs`, 'POST', { group: 'g', callbackUrl }, 'callbackUrl'],
      [`/v1/queues/${q}/jobs/batch`, 'POST', { jobs: [{ group: 'g' }, { group: 'g', callbackUrl }] }, 'jobs.1.callbackUrl'],
      [`/v1/queues/${q}`, 'PUT', { endpoint: 'http://127.0.0.1:8/jobs', callbackUrl }, 'callbackUrl'],
    ] as const;
    for (const [path, method, json, field] of refusals) {
      const res = await env.worker.api(path, { method, json });
      const body = (await res.json()) as { error: { code: string; details: { path: string }[] } };
      expect(res.status, path).toBe(400);
      expect(body.error.code).toBe('VALIDATION_FAILED');
      expect(body.error.details.map((d) => d.path)).toContain(field);
    }
    const info = (await (await env.worker.api(`/v1/queues/${q}`)).json()) as { config: Record<string, unknown>; counts: Record<string, number> };
    expect(info.config).toMatchObject({ endpoint: 'http://127.0.0.1:9/jobs' });
    expect(info.config.callbackUrl).toBeUndefined();
    expect(info.counts).toMatchObject({ waiting: 0, active: 0, delayed: 0, completed: 0, failed: 0 });
  });
});
