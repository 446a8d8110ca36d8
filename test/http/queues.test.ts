// HTTP API v1, queue routes and health, over HTTP against the Worker in workerd: PUT (create,
// replace with defaults), GET one, GET the list, pause/resume, DELETE, and GET /health.
import { describe, expect, it } from 'vitest';
import { startEndpoint } from '../helpers/endpoint';
import { enqueue, expectError, expectJson, putQueue, snapshotQueue, uniqueQueue, useHttpSuite } from './support';
import { queueKeys } from '../../src/core/store/keys';
import { CONFIG_DEFAULTS } from '../helpers/config-defaults';

const suite = useHttpSuite();

const ZERO_COUNTS = { waiting: 0, delayed: 0, active: 0, completed: 0, failed: 0, cancelled: 0, expired: 0, groups: 0 };
const NOWHERE = 'http://127.0.0.1:9/jobs';

describe('PUT /v1/queues/{queue}', () => {
  it('creates a queue: 200 {name, config, counts} with every omitted field at its default', async () => {
    const name = uniqueQueue('put');
    const res = await suite.worker.api(`/v1/queues/${name}`, { method: 'PUT', json: { endpoint: NOWHERE } });
    expect(await expectJson(res, 200)).toEqual({ name, config: { endpoint: NOWHERE, ...CONFIG_DEFAULTS }, counts: ZERO_COUNTS });
  });

  it('replaces the whole config: fields left out of a second PUT go back to their defaults', async () => {
    const name = uniqueQueue('replace');
    const custom = {
      endpoint: NOWHERE,
      concurrency: 3,
      timeoutMs: 5000,
      maxAttempts: 7,
      backoff: { type: 'fixed', delayMs: 250, maxDelayMs: 1000, jitter: false },
      orderingWindowMs: 2000,
      keepCompleted: 5,
      keepFailed: 6,
      groupConcurrency: 3,
      rateLimit: { max: 100, periodMs: 60_000 },
      groupRateLimit: { max: 5, periodMs: 1000 },
      dedupWindowMs: 0,
      backpressure: 'group',
      maxPayloadBytes: 1024,
      allowedOrigins: ['https://app.example'],
      maxJobs: 500,
      maxDelayMs: 60_000,
      maxThrottleMs: 5000,
      publishMaxDelayMs: 1000,
      publishCallbackOrigins: ['https://app.example'],
      publishRateLimit: null,
      publishTokenRateLimit: { max: 50, periodMs: 1000 },
      publishIpv6Prefix: 64,
      publishMaxJobs: 20,
      publishMaxDataBytes: 512,
      publishTtlMs: 3_600_000,
      publishEvents: 'result',
      maxBytes: null,
    };
    const first = await putQueue(suite.worker, name, custom);
    expect(first.config).toEqual({ ...custom, publishTokens: 0, signingSecret: false, signingSecretNext: false, partitions: 1, batch: null });

    const second = await putQueue(suite.worker, name, { endpoint: 'https://hooks.example/jobs' });
    expect(second.config).toEqual({ endpoint: 'https://hooks.example/jobs', ...CONFIG_DEFAULTS });
    const shown = await expectJson(await suite.worker.api(`/v1/queues/${name}`), 200);
    expect(shown.config).toEqual({ endpoint: 'https://hooks.example/jobs', ...CONFIG_DEFAULTS });
  });

  it('keeps the jobs and the pause of a queue whose config is replaced', async () => {
    const name = uniqueQueue('keep');
    await putQueue(suite.worker, name, { endpoint: NOWHERE });
    await expectJson(await suite.worker.api(`/v1/queues/${name}/pause`, { method: 'POST' }), 200);
    const { id } = await enqueue(suite.worker, name, { group: 'g', data: { n: 1 } });
    await putQueue(suite.worker, name, { endpoint: NOWHERE, concurrency: 2 });
    expect((await expectJson(await suite.worker.api(`/v1/queues/${name}/jobs/${id}`), 200)).data).toEqual({ n: 1 });
    // The pause is state, not config: a re-PUT keeps it.
    expect((await expectJson(await suite.worker.api(`/v1/queues/${name}`), 200)).paused).toBe(true);
  });
});

describe('GET /v1/queues/{queue} and GET /v1/queues', () => {
  it('GET one answers {name, config, paused, counts}; counts follow the jobs', async () => {
    const name = uniqueQueue('get');
    await putQueue(suite.worker, name, { endpoint: NOWHERE, concurrency: 4 });
    expect(await expectJson(await suite.worker.api(`/v1/queues/${name}`), 200)).toEqual({
      name,
      config: { endpoint: NOWHERE, ...CONFIG_DEFAULTS, concurrency: 4 },
      paused: false,
      counts: ZERO_COUNTS,
    });

    // Paused, so nothing is dispatched while we count.
    await expectJson(await suite.worker.api(`/v1/queues/${name}/pause`, { method: 'POST' }), 200);
    await enqueue(suite.worker, name, { group: 'a', data: 1 });
    await enqueue(suite.worker, name, { group: 'a', data: 2 });
    await enqueue(suite.worker, name, { group: 'b', data: 3 });
    await enqueue(suite.worker, name, { group: 'c', data: 4, delayMs: 600_000 });
    const body = await expectJson(await suite.worker.api(`/v1/queues/${name}`), 200);
    expect(body.paused).toBe(true);
    // The delayed job is not in its group yet, so c does not count as a group.
    expect(body.counts).toEqual({ waiting: 3, delayed: 1, active: 0, completed: 0, failed: 0, cancelled: 0, expired: 0, groups: 2 });
  });

  it('a config stored before the flow-control fields existed shows them at their defaults', async () => {
    const name = uniqueQueue('old-config');
    await putQueue(suite.worker, name, { endpoint: NOWHERE, concurrency: 4 });
    const meta = queueKeys(name).meta;
    const stored = JSON.parse((await suite.redis.hget<string>(meta, 'config'))!);
    for (const field of ['groupConcurrency', 'rateLimit', 'groupRateLimit', 'dedupWindowMs', 'backpressure']) delete stored[field];
    await suite.redis.hset(meta, { config: JSON.stringify(stored) });
    const shown = await expectJson(await suite.worker.api(`/v1/queues/${name}`), 200);
    expect(shown.config).toEqual({ endpoint: NOWHERE, ...CONFIG_DEFAULTS, concurrency: 4 });
  });

  it('an unknown queue is 404 QUEUE_NOT_FOUND', async () => {
    await expectError(await suite.worker.api(`/v1/queues/${uniqueQueue('nope')}`), 404, 'QUEUE_NOT_FOUND');
  });

  it('GET /v1/queues lists every queue as {name, paused, counts, oldestReady?}', async () => {
    const a = uniqueQueue('list-a');
    const b = uniqueQueue('list-b');
    await putQueue(suite.worker, a, { endpoint: NOWHERE });
    await putQueue(suite.worker, b, { endpoint: NOWHERE });
    await expectJson(await suite.worker.api(`/v1/queues/${b}/pause`, { method: 'POST' }), 200);
    const { id } = await enqueue(suite.worker, b, { group: 'g', data: null, orderMs: 1_700_000_000_000 });

    const body = await expectJson<{ queues: any[] }>(await suite.worker.api('/v1/queues'), 200);
    expect(Object.keys(body)).toEqual(['queues']);
    const byName = new Map(body.queues.map((q) => [q.name, q]));
    expect(byName.get(a)).toEqual({ name: a, paused: false, counts: ZERO_COUNTS });
    // The paused queue's job could start but for the pause: its oldest ready job.
    expect(byName.get(b)).toEqual({
      name: b,
      paused: true,
      counts: { ...ZERO_COUNTS, waiting: 1, groups: 1 },
      oldestReady: { id, orderMs: 1_700_000_000_000 },
    });
  });
});

describe('pause and resume', () => {
  it('answer 200 {name, paused}; a paused queue accepts jobs and delivers them after resume', async () => {
    const endpoint = await startEndpoint();
    try {
      const name = uniqueQueue('pause');
      await putQueue(suite.worker, name, { endpoint: endpoint.url });
      const paused = await suite.worker.api(`/v1/queues/${name}/pause`, { method: 'POST' });
      expect(await expectJson(paused, 200)).toEqual({ name, paused: true });

      const { id, state } = await enqueue(suite.worker, name, { group: 'g', data: { n: 1 } });
      expect(state).toBe('waiting');
      expect((await expectJson(await suite.worker.api(`/v1/queues/${name}/jobs/${id}`), 200)).state).toBe('waiting');

      const resumedAt = Date.now();
      const resumed = await suite.worker.api(`/v1/queues/${name}/resume`, { method: 'POST' });
      expect(await expectJson(resumed, 200)).toEqual({ name, paused: false });
      const [delivery] = await endpoint.waitFor(1);
      expect(delivery!.job.id).toBe(id);
      // Not delivered while paused: the push came after the resume was sent.
      expect(delivery!.at).toBeGreaterThanOrEqual(resumedAt);
    } finally {
      await endpoint.close();
    }
  });

  it('pausing or resuming an unknown queue is 404 QUEUE_NOT_FOUND', async () => {
    const name = uniqueQueue('ghost');
    await expectError(await suite.worker.api(`/v1/queues/${name}/pause`, { method: 'POST' }), 404, 'QUEUE_NOT_FOUND');
    await expectError(await suite.worker.api(`/v1/queues/${name}/resume`, { method: 'POST' }), 404, 'QUEUE_NOT_FOUND');
    // ...and does not bring it into being.
    await expectError(await suite.worker.api(`/v1/queues/${name}`), 404, 'QUEUE_NOT_FOUND');
  });
});

describe('DELETE /v1/queues/{queue}', () => {
  it('answers 204, then the queue is gone: GET 404, not listed, no key left in Redis', async () => {
    const name = uniqueQueue('delete');
    await putQueue(suite.worker, name, { endpoint: NOWHERE, publishTokens: ['publish-token-for-delete-0001'] });
    await expectJson(await suite.worker.api(`/v1/queues/${name}/pause`, { method: 'POST' }), 200);
    await enqueue(suite.worker, name, { group: 'g', data: 1 });
    await enqueue(suite.worker, name, { group: 'h', data: 2, delayMs: 600_000 });
    const repeat = await suite.worker.api(`/v1/queues/${name}/repeats/nightly`, {
      method: 'PUT',
      json: { group: 'g', every: 3_600_000 },
    });
    await expectJson(repeat, 200);

    const res = await suite.worker.api(`/v1/queues/${name}`, { method: 'DELETE' });
    expect(res.status).toBe(204);
    expect(await res.text()).toBe('');

    await expectError(await suite.worker.api(`/v1/queues/${name}`), 404, 'QUEUE_NOT_FOUND');
    const list = await expectJson<{ queues: { name: string }[] }>(await suite.worker.api('/v1/queues'), 200);
    expect(list.queues.map((q) => q.name)).not.toContain(name);
    expect(await snapshotQueue(suite.redis, name)).toEqual({ registered: false });
    // The publish token died with its queue: nobody issued it any more.
    const stale = await suite.worker.api(`/v1/queues/${name}/jobs`, {
      method: 'POST',
      headers: { authorization: 'Bearer publish-token-for-delete-0001' },
      json: { group: 'g' },
    });
    await expectError(stale, 401, 'UNAUTHORIZED');
  });

  it('an unknown queue is 404 QUEUE_NOT_FOUND', async () => {
    const res = await suite.worker.api(`/v1/queues/${uniqueQueue('gone')}`, { method: 'DELETE' });
    await expectError(res, 404, 'QUEUE_NOT_FOUND');
  });
});

describe('GET /health', () => {
  it('is open (no token) and answers {ok: true, redis: "ok"}', async () => {
    const res = await fetch(`${suite.worker.url}/health`);
    expect(await expectJson(res, 200)).toEqual({ ok: true, redis: 'ok' });
  });
});
