// Repeatable jobs through the cron trigger: a repeat that is due when the scheduled handler runs
// becomes an ordinary job with the deterministic id `repeat:<key>:<runAt>`, which is pushed to
// the endpoint like any other (and completes).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Endpoint, startEndpoint } from '../helpers/endpoint';
import { jobInState, poll, putQueue, queueName, useWorker } from './support';

describe('repeats through the scheduled handler', () => {
  const env = useWorker();
  let endpoint: Endpoint;
  beforeAll(async () => {
    endpoint = await startEndpoint(() => ({ status: 200, headers: { 'content-type': 'application/json' }, body: '{"ran":true}' }));
  });
  afterAll(() => endpoint?.close());

  it('a due repeat (every 1000 ms, startAt now) is run by the cron: the run job exists and is delivered', async () => {
    const { worker } = env;
    const queue = queueName('repeat');
    await putQueue(worker, queue, { endpoint: endpoint.url, keepCompleted: 100 });
    const startAt = Date.now();
    const put = await worker.api(`/v1/queues/${queue}/repeats/heartbeat.check`, {
      method: 'PUT',
      json: { group: 'cron/g', data: { check: 'db' }, every: 1000, startAt },
    });
    expect(put.status).toBe(200);
    expect(await put.json()).toEqual({ key: 'heartbeat.check', nextRunAt: startAt });
    const runId = `repeat:heartbeat.check:${startAt}`;
    // Only the scheduler creates runs: nothing exists before it fires.
    expect((await worker.api(`/v1/queues/${queue}/jobs/${encodeURIComponent(runId)}`)).status).toBe(404);

    await worker.scheduled();
    const delivered = await poll(async () => endpoint.received.find((r) => r.job.id === runId), { what: `a delivery of ${runId}` });
    expect(delivered.headers['groupq-job-id']).toBe(runId);
    expect(delivered.headers['groupq-group']).toBe(encodeURIComponent('cron/g'));
    expect(delivered.job).toMatchObject({ queue, group: 'cron/g', data: { check: 'db' }, attempt: 1 });
    const job = await jobInState(worker, queue, runId, 'completed');
    expect(job).toMatchObject({ id: runId, result: { ran: true }, attempts: 1 });

    const listed = (await (await worker.api(`/v1/queues/${queue}/repeats`)).json()) as { repeats: { key: string; count: number; nextRunAt: number }[] };
    expect(listed.repeats).toHaveLength(1);
    expect(listed.repeats[0]!.count).toBeGreaterThanOrEqual(1);
    expect(listed.repeats[0]!.nextRunAt).toBeGreaterThan(startAt);
    // Each run is delivered once under its own id: never two deliveries of one run.
    const ids = endpoint.received.map((r) => r.job.id);
    expect(new Set(ids).size).toBe(ids.length);
  });
});
