// The Worker's structured log (docs/logs.md), read from workerd's output: one JSON line per
// request with its route, status and request id; the id echoed as x-request-id (Cloudflare's
// cf-ray when sent, else generated) and in error bodies; a line per delivery attempt and per
// outcome callback carrying the id of the request or cron run that pushed them, which the
// endpoint gets as groupq-request-id; the cron's line; errors with their cause; and
// GROUPQ_LOG_LEVEL dropping the info lines.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngine } from '../../src/core/engine';
import { createRedis } from '../../src/core/store/redis';
import { testClock } from '../helpers/engine';
import { type Endpoint, startEndpoint } from '../helpers/endpoint';
import { type LogCapture, type LogLine, captureLog } from '../helpers/log-lines';
import { type PrivateStack, type RunningWorker, startPrivateStack, startWorker } from '../helpers/worker';
import { enqueue, expectError, expectJson, putQueue, uniqueQueue } from '../http/support';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const CF_RAY = '8f1c2a3b4d5e6f70-AMS';

let stack: PrivateStack;
let worker: RunningWorker;
let log: LogCapture;
let endpoint: Endpoint;

beforeAll(async () => {
  stack = await startPrivateStack();
  log = captureLog();
  worker = await startWorker(stack, { GROUPQ_LOG_LEVEL: 'info' }, { runtimeOutputTo: log.output });
  endpoint = await startEndpoint();
});

afterAll(async () => {
  await endpoint?.close();
  await worker?.dispose();
  await stack?.close();
});

const requestLine = (requestId: string | null) => (line: LogLine) => line.event === 'request' && line.requestId === requestId;

describe('request lines', () => {
  it('one JSON line per request: method, route pattern, status, duration, request id, queue', async () => {
    const name = uniqueQueue('log-req');
    await putQueue(worker, name, { endpoint: endpoint.url });
    const res = await worker.api(`/v1/queues/${name}`);
    await expectJson(res, 200);
    const id = res.headers.get('x-request-id');
    const line = await log.waitFor(requestLine(id));
    expect(line).toMatchObject({ level: 'info', method: 'GET', route: '/v1/queues/:queue', status: 200, queue: name });
    expect(typeof line.durationMs).toBe('number');
    expect(new Date(line.time).toString()).not.toBe('Invalid Date');
    // The next request's line written means this one's are all written: there is one.
    const next = await worker.api('/health');
    await log.waitFor(requestLine(next.headers.get('x-request-id')));
    expect(log.lines.filter(requestLine(id))).toHaveLength(1);
  });

  it('names the route, never the path: job ids stay out of the route field', async () => {
    const name = uniqueQueue('log-route');
    await putQueue(worker, name, { endpoint: endpoint.url });
    const res = await worker.api(`/v1/queues/${name}/jobs/no-such-job`);
    await expectError(res, 404, 'JOB_NOT_FOUND');
    const line = await log.waitFor(requestLine(res.headers.get('x-request-id')));
    expect(line).toMatchObject({ route: '/v1/queues/:queue/jobs/:id', status: 404, queue: name });
    expect(JSON.stringify(line)).not.toContain('no-such-job');
  });

  it('a request no route takes has no route, and says its path', async () => {
    const res = await worker.api('/v1/nowhere', { method: 'POST' });
    await expectError(res, 404, 'NOT_FOUND');
    const line = await log.waitFor(requestLine(res.headers.get('x-request-id')));
    expect(line).toMatchObject({ method: 'POST', route: null, path: '/v1/nowhere', status: 404 });
  });

  it('a refusal by auth is logged at the route it was meant for', async () => {
    const res = await worker.api(`/v1/queues/${uniqueQueue('log-auth')}/jobs`, { method: 'POST', headers: { authorization: 'Bearer not-a-token-of-ours' }, json: {} });
    await expectError(res, 401, 'UNAUTHORIZED');
    const line = await log.waitFor(requestLine(res.headers.get('x-request-id')));
    expect(line).toMatchObject({ method: 'POST', route: '/v1/queues/:queue/jobs', status: 401 });
  });
});

describe('the request id', () => {
  it("is Cloudflare's cf-ray when the request carries one", async () => {
    const res = await worker.api('/health', { headers: { 'cf-ray': CF_RAY } });
    expect(res.headers.get('x-request-id')).toBe(CF_RAY);
    expect(await log.waitFor(requestLine(CF_RAY))).toMatchObject({ route: '/health', status: 200 });
  });

  it('is generated, new for each request, without a cf-ray or with one that is not a cf-ray', async () => {
    const ids = [];
    for (const headers of [{}, {}, { 'cf-ray': 'x"}{"injected":true' }] as Record<string, string>[]) {
      const res = await worker.api('/health', { headers });
      ids.push(res.headers.get('x-request-id'));
    }
    for (const id of ids) expect(id).toMatch(UUID);
    expect(new Set(ids).size).toBe(3);
  });

  it('is in every error body, the same as the x-request-id header', async () => {
    const res = await worker.api(`/v1/queues/${uniqueQueue('log-missing')}`, { headers: { 'cf-ray': CF_RAY.replace('AMS', 'FRA') } });
    const body = await expectError(res, 404, 'QUEUE_NOT_FOUND');
    expect(body.error.requestId).toBe(CF_RAY.replace('AMS', 'FRA'));
  });

  it('is a header a browser may read: CORS exposes it on the enqueue routes', async () => {
    const name = uniqueQueue('log-cors');
    await putQueue(worker, name, { endpoint: endpoint.url, allowedOrigins: ['https://app.example'] });
    await worker.api(`/v1/queues/${name}/pause`, { method: 'POST' });
    const res = await worker.api(`/v1/queues/${name}/jobs`, { method: 'POST', headers: { origin: 'https://app.example' }, json: { group: 'g' } });
    await expectJson(res, 201);
    expect(res.headers.get('access-control-expose-headers')?.split(/,\s*/)).toContain('x-request-id');
    expect(res.headers.get('x-request-id')).toMatch(UUID);
  });
});

describe('push lines', () => {
  it('a delivery attempt: job, queue, group, attempt, status, duration, and the request id the endpoint got', async () => {
    const name = uniqueQueue('log-deliver');
    await putQueue(worker, name, { endpoint: endpoint.url });
    const before = endpoint.received.length;
    const res = await worker.api(`/v1/queues/${name}/jobs`, { method: 'POST', json: { group: 'user:42', data: { n: 1 } } });
    const { id } = await expectJson<{ id: string }>(res, 201);
    const requestId = res.headers.get('x-request-id')!;
    const [received] = (await endpoint.waitFor(before + 1)).slice(before);
    expect(received!.headers['groupq-request-id']).toBe(requestId);
    const line = await log.waitFor((l) => l.event === 'delivery' && l.job === id);
    expect(line).toMatchObject({ level: 'info', requestId, queue: name, group: 'user:42', attempt: 1, status: 200, result: 'completed' });
    expect(typeof line.durationMs).toBe('number');
  });

  it('a failed attempt is a warning that says what the endpoint answered', async () => {
    const failing = await startEndpoint(() => ({ status: 500, body: 'database is down' }));
    try {
      const name = uniqueQueue('log-fail');
      await putQueue(worker, name, { endpoint: failing.url, maxAttempts: 1 });
      const { id } = await enqueue(worker, name, { group: 'g' });
      const line = await log.waitFor((l) => l.event === 'delivery' && l.job === id);
      expect(line).toMatchObject({ level: 'warn', queue: name, attempt: 1, status: 500, result: 'failed', error: 'HTTP 500: database is down' });
    } finally {
      await failing.close();
    }
  });

  it('an outcome callback: its attempt, and the request id its callback URL got', async () => {
    const outcomes = await startEndpoint();
    try {
      const name = uniqueQueue('log-outcome');
      await putQueue(worker, name, { endpoint: endpoint.url, callbackUrl: outcomes.url });
      const { id } = await enqueue(worker, name, { group: 'g' });
      const [received] = await outcomes.waitFor(1);
      const line = await log.waitFor((l) => l.event === 'outcome' && l.job === id);
      expect(line).toMatchObject({ level: 'info', queue: name, group: 'g', state: 'completed', attempt: 1, result: 'delivered' });
      expect(received!.headers['groupq-request-id']).toBe(line.requestId);
      expect(received!.headers['groupq-outcome']).toBe('completed');
    } finally {
      await outcomes.close();
    }
  });

  it('a cron run logs its own line, and its deliveries carry its cron- id', async () => {
    // Enqueued a minute "ago" with a 1 s delay, behind the Worker's back: only the cron finds it.
    const clock = testClock(Date.now() - 60_000);
    const engine = createEngine({ redis: createRedis({ url: stack.restUrl, token: stack.restToken }), now: clock.now, allowHttpLoopback: true });
    const name = uniqueQueue('log-cron');
    await engine.putQueue(name, { endpoint: endpoint.url });
    const { id } = await engine.enqueue(name, { group: 'g', delayMs: 1000 });
    await worker.scheduled();
    const delivery = await log.waitFor((l) => l.event === 'delivery' && l.job === id);
    expect(delivery.requestId).toMatch(/^cron-[0-9a-f-]{36}$/);
    expect(endpoint.received.find((r) => r.job.id === id)!.headers['groupq-request-id']).toBe(delivery.requestId);
    const run = await log.waitFor((l) => l.event === 'scheduled' && l.requestId === delivery.requestId);
    expect(run).toMatchObject({ level: 'info', failed: 0 });
    expect(run.queues).toBeGreaterThanOrEqual(1);
    expect(typeof run.durationMs).toBe('number');
  });
});

describe('errors and levels', () => {
  it('Redis down: an error line with its cause, and the request line at error', async () => {
    const errors = captureLog();
    const broken = await startWorker(stack, { UPSTASH_REDIS_REST_URL: 'http://127.0.0.1:9', GROUPQ_LOG_LEVEL: 'info' }, { runtimeOutputTo: errors.output });
    try {
      const res = await broken.api('/v1/queues');
      const body = await expectError(res, 503, 'REDIS_UNAVAILABLE');
      const failed = await errors.waitFor((l) => l.event === 'request_failed' && l.requestId === body.error.requestId);
      expect(failed).toMatchObject({ level: 'error', code: 'REDIS_UNAVAILABLE' });
      // The cause, as the runtime's fetch threw it.
      expect(failed.error).toMatchObject({ name: 'Error', message: expect.stringMatching(/\S/) });
      const request = await errors.waitFor(requestLine(body.error.requestId));
      expect(request).toMatchObject({ level: 'error', route: '/v1/queues', status: 503 });
    } finally {
      await broken.dispose();
    }
  });

  it('GROUPQ_LOG_LEVEL=warn drops the info lines and keeps the warnings', async () => {
    const quiet = captureLog();
    const failing = await startEndpoint(() => ({ status: 503 }));
    const warnOnly = await startWorker(stack, { GROUPQ_LOG_LEVEL: 'warn' }, { runtimeOutputTo: quiet.output });
    try {
      const name = uniqueQueue('log-warn');
      await putQueue(warnOnly, name, { endpoint: failing.url, maxAttempts: 1 });
      await expectError(await warnOnly.api(`/v1/queues/${name}/jobs/none`), 404, 'JOB_NOT_FOUND');
      const { id } = await enqueue(warnOnly, name, { group: 'g' });
      // The failed attempt is pushed after the requests were answered, their lines written (or not).
      expect(await quiet.waitFor((l) => l.event === 'delivery' && l.job === id)).toMatchObject({ level: 'warn', status: 503 });
      expect(quiet.lines.filter((l) => l.level === 'info' || l.level === 'debug')).toEqual([]);
    } finally {
      await warnOnly.dispose();
      await failing.close();
    }
  });
});
