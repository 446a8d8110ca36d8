// HTTP API v1, errors that are not about the request's content, over HTTP against the Worker in
// workerd: unknown routes (404 NOT_FOUND in the one error shape), and Redis out of reach (503
// REDIS_UNAVAILABLE, whose answer must not leak the script, its arguments or key names: the
// @upstash/redis error message holds the whole command).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, type RunningWorker, startWorker } from '../helpers/worker';
import { expectError, expectJson, putQueue, uniqueQueue, useHttpSuite } from './support';

const suite = useHttpSuite();

describe('unknown routes', () => {
  it('answer 404 NOT_FOUND in the one error shape, with or without a token', async () => {
    const queue = uniqueQueue('routes');
    await putQueue(suite.worker, queue, { endpoint: 'http://127.0.0.1:9/jobs' });
    const requests: [string, string][] = [
      ['GET', '/nope'],
      ['POST', '/nope'],
      ['GET', '/v1'],
      ['GET', '/v2/queues'],
      ['GET', `/v1/queues/${queue}/unknown`],
      ['GET', `/v1/queues/${queue}/jobs/x/y/z`],
    ];
    for (const [method, path] of requests) {
      for (const authorization of [`Bearer ${ADMIN_TOKEN}`, null]) {
        const res = await fetch(`${suite.worker.url}${path}`, {
          method,
          headers: authorization === null ? {} : { authorization },
        });
        const body = await expectError(res, 404, 'NOT_FOUND').catch((error: Error) => {
          throw new Error(`${method} ${path}: ${error.message}`);
        });
        expect(body.error.message).toContain(path);
      }
    }
  });

  it('a known path with a method it does not take: 405 METHOD_NOT_ALLOWED, Allow lists the methods it takes', async () => {
    const queue = uniqueQueue('methods');
    await putQueue(suite.worker, queue, { endpoint: 'http://127.0.0.1:9/jobs' });
    const requests: [string, string, string][] = [
      ['POST', '/v1/queues', 'GET, HEAD'],
      ['POST', `/v1/queues/${queue}`, 'DELETE, GET, HEAD, PATCH, PUT'],
      ['PUT', `/v1/queues/${queue}/jobs/x`, 'DELETE, GET, HEAD, PATCH'],
      ['GET', `/v1/queues/${queue}/jobs/x/retry`, 'POST'],
      ['DELETE', `/v1/queues/${queue}/groups/g`, 'GET, HEAD'],
      ['PUT', `/v1/queues/${queue}/jobs`, 'DELETE, GET, HEAD, OPTIONS, POST'],
      ['POST', '/health', 'GET, HEAD'],
      ['DELETE', '/', 'GET, HEAD'],
    ];
    for (const [method, path, allow] of requests) {
      for (const authorization of [`Bearer ${ADMIN_TOKEN}`, null]) {
        const res = await fetch(`${suite.worker.url}${path}`, { method, headers: authorization === null ? {} : { authorization } });
        expect(res.headers.get('allow'), `${method} ${path}`).toBe(allow);
        const body = await expectError(res, 405, 'METHOD_NOT_ALLOWED');
        expect(body.error.details).toEqual({ allow: allow.split(', ') });
      }
    }
    // Nothing was done on the way: the queue is still there, unpaused.
    expect(await expectJson(await suite.worker.api(`/v1/queues/${queue}`), 200)).toMatchObject({ paused: false });
  });
});

describe('GET /', () => {
  it('answers 200 without a token, pointing at the dashboard, /health and the docs', async () => {
    const body = await expectJson(await fetch(`${suite.worker.url}/`), 200);
    expect(body).toEqual({ name: 'groupq', dashboard: '/dashboard', health: '/health', api: '/v1/queues', openapi: '/openapi.json', docs: '/reference' });
    expect((await fetch(`${suite.worker.url}${body.dashboard}`)).status).toBe(200);
    // The docs are the project's own: the reference page and the document it renders.
    for (const path of [body.docs, body.openapi]) expect((await fetch(`${suite.worker.url}${path}`)).status).toBe(200);
  });
});

describe('Redis out of reach', () => {
  // A second Worker whose Upstash URL is a closed port on loopback.
  let broken: RunningWorker;
  beforeAll(async () => {
    broken = await startWorker(suite.stack, { UPSTASH_REDIS_REST_URL: 'http://127.0.0.1:9' });
  });
  afterAll(async () => {
    await broken?.dispose();
  });

  /** What must never reach a client: script text, Redis commands, key names, the Redis URL. */
  const LEAKS = [/redis\.call/i, /evalsha/i, /\beval\b/i, /gq:/, /KEYS\[/, /ARGV/, /127\.0\.0\.1:9\b/, /upstash/i];

  it('admin routes answer 503 REDIS_UNAVAILABLE without script, arguments or key names', async () => {
    const queue = 'unreachable-queue';
    const requests: [string, string, unknown?][] = [
      ['GET', '/v1/queues'],
      ['PUT', `/v1/queues/${queue}`, { endpoint: 'http://127.0.0.1:9/jobs', publishTokens: ['publish-token-unreached-01'] }],
      ['GET', `/v1/queues/${queue}`],
      ['POST', `/v1/queues/${queue}/pause`],
      ['DELETE', `/v1/queues/${queue}`],
      ['GET', `/v1/queues/${queue}/jobs?state=failed`],
      ['GET', `/v1/queues/${queue}/jobs/secret-job-id`],
      ['PATCH', `/v1/queues/${queue}/jobs/secret-job-id`, { data: { password: 'hunter2' } }],
      ['GET', `/v1/queues/${queue}/groups/tenant-7`],
      ['PUT', `/v1/queues/${queue}/repeats/nightly`, { group: 'g', every: 60_000 }],
      ['POST', `/v1/queues/${queue}/jobs`, { group: 'tenant-7', data: { password: 'hunter2' } }],
      ['POST', `/v1/queues/${queue}/jobs/batch`, { jobs: [{ group: 'tenant-7', data: { password: 'hunter2' } }] }],
    ];
    for (const [method, path, json] of requests) {
      const res = await broken.api(path, { method, ...(json === undefined ? {} : { json }) });
      const text = await res.clone().text();
      const body = await expectError(res, 503, 'REDIS_UNAVAILABLE').catch((error: Error) => {
        throw new Error(`${method} ${path}: ${error.message}`);
      });
      expect(body.error.details).toBeUndefined();
      for (const leak of [...LEAKS, /hunter2/, /secret-job-id/, /tenant-7/]) {
        expect(text, `${method} ${path}`).not.toMatch(leak);
      }
    }
  });

  it('a publish token (checked against Redis) and a lease callback meet the same 503', async () => {
    const publish = await broken.api('/v1/queues/q/jobs', {
      method: 'POST',
      headers: { authorization: 'Bearer publish-token-unreached-01' },
      json: { group: 'g' },
    });
    await expectError(publish, 503, 'REDIS_UNAVAILABLE');
    const callback = await fetch(`${broken.url}/v1/queues/q/jobs/j/complete`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ lease: '5e1ec7ed0123abcd' }),
    });
    const text = await callback.clone().text();
    await expectError(callback, 503, 'REDIS_UNAVAILABLE');
    for (const leak of LEAKS) expect(text).not.toMatch(leak);
    expect(text).not.toContain('5e1ec7ed0123abcd');
  });

  it('the checks that need no Redis still come first: 401 without a token, 400 for a bad body', async () => {
    await expectError(await fetch(`${broken.url}/v1/queues`), 401, 'UNAUTHORIZED');
    const bad = await broken.api('/v1/queues/bad!name', { method: 'PUT', json: { endpoint: 'http://127.0.0.1:9/jobs' } });
    await expectError(bad, 400, 'VALIDATION_FAILED');
  });

  it('GET /health says so: 503 {ok: false, redis: "down"}', async () => {
    expect(await expectJson(await fetch(`${broken.url}/health`), 503)).toEqual({ ok: false, redis: 'down' });
  });

  it('a REST endpoint that refuses the token is unavailable too, and leaks nothing', async () => {
    const refused = await startWorker(suite.stack, { UPSTASH_REDIS_REST_TOKEN: 'not-the-bridge-token' });
    try {
      const res = await refused.api('/v1/queues/some-queue');
      const text = await res.clone().text();
      await expectError(res, 503, 'REDIS_UNAVAILABLE');
      for (const leak of LEAKS) expect(text).not.toMatch(leak);
    } finally {
      await refused.dispose();
    }
  });
});
