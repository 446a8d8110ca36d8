// HTTP API v1, CORS over HTTP against the Worker in workerd: only the two enqueue routes answer
// CORS, and only for origins in the queue's allowedOrigins (preflight 204 with the allow
// headers; the actual POST carries access-control-allow-origin, error answers included, so a
// browser can read why it was refused). Everything else never sends access-control-* headers.
import { beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN } from '../helpers/worker';
import { expectError, expectJson, putQueue, uniqueQueue, useHttpSuite } from './support';

const suite = useHttpSuite();
const APP = 'https://app.example';
const TOKEN = 'publish-token-for-cors-0001';

let queue: string;
let closed: string;
beforeAll(async () => {
  queue = uniqueQueue('cors');
  closed = uniqueQueue('nocors');
  await putQueue(suite.worker, queue, {
    endpoint: 'http://127.0.0.1:9/jobs',
    allowedOrigins: [APP, 'http://localhost:5173'],
    publishTokens: [TOKEN],
  });
  await putQueue(suite.worker, closed, { endpoint: 'http://127.0.0.1:9/jobs', publishTokens: ['publish-token-closed-0001'] });
  for (const name of [queue, closed]) await expectJson(await suite.worker.api(`/v1/queues/${name}/pause`, { method: 'POST' }), 200);
});

/** A browser's preflight for a POST with a bearer token and a JSON body. */
function preflight(path: string, origin: string) {
  return fetch(`${suite.worker.url}${path}`, {
    method: 'OPTIONS',
    headers: {
      origin,
      'access-control-request-method': 'POST',
      'access-control-request-headers': 'authorization, content-type',
    },
  });
}

function corsHeaders(res: Response): string[] {
  const names: string[] = [];
  res.headers.forEach((_value, name) => names.push(name));
  return names.filter((name) => name.startsWith('access-control-'));
}

const listOf = (value: string | null) => (value ?? '').split(',').map((part) => part.trim().toLowerCase());

describe('preflight (OPTIONS)', () => {
  for (const route of ['jobs', 'jobs/batch']) {
    it(`/v1/queues/{queue}/${route} from an allowed origin: 204 with the allow headers`, async () => {
      for (const origin of [APP, 'http://localhost:5173']) {
        const res = await preflight(`/v1/queues/${queue}/${route}`, origin);
        expect(res.status).toBe(204);
        expect(res.headers.get('access-control-allow-origin')).toBe(origin);
        expect(listOf(res.headers.get('access-control-allow-methods'))).toContain('post');
        const allowed = listOf(res.headers.get('access-control-allow-headers'));
        expect(allowed).toContain('authorization');
        expect(allowed).toContain('content-type');
        // One origin per answer, so shared caches must key on Origin.
        expect(listOf(res.headers.get('vary'))).toContain('origin');
      }
    });

    it(`/v1/queues/{queue}/${route} from any other origin: no access-control-* headers`, async () => {
      for (const origin of ['https://evil.example', 'http://app.example', 'https://app.example:8443', 'https://sub.app.example', 'null']) {
        const res = await preflight(`/v1/queues/${queue}/${route}`, origin);
        expect(corsHeaders(res)).toEqual([]);
      }
      // A queue that allows no origin, and a queue that does not exist, answer no CORS either.
      expect(corsHeaders(await preflight(`/v1/queues/${closed}/${route}`, APP))).toEqual([]);
      expect(corsHeaders(await preflight(`/v1/queues/${uniqueQueue('ghost')}/${route}`, APP))).toEqual([]);
    });
  }
});

describe('the enqueue itself', () => {
  const post = (path: string, body: string, headers: Record<string, string>) =>
    fetch(`${suite.worker.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });

  it('a POST from an allowed origin carries access-control-allow-origin (single and batch)', async () => {
    const one = await post(`/v1/queues/${queue}/jobs`, '{"group":"browser"}', { origin: APP, authorization: `Bearer ${TOKEN}` });
    expect(one.headers.get('access-control-allow-origin')).toBe(APP);
    expect((await expectJson(one, 201)).state).toBe('waiting');
    const batch = await post(`/v1/queues/${queue}/jobs/batch`, '{"jobs":[{"group":"browser"}]}', {
      origin: APP,
      authorization: `Bearer ${TOKEN}`,
    });
    expect(batch.headers.get('access-control-allow-origin')).toBe(APP);
    expect((await expectJson(batch, 201)).jobs).toHaveLength(1);
  });

  it('error answers to an allowed origin carry it too: 401 and 400', async () => {
    const noToken = await post(`/v1/queues/${queue}/jobs`, '{"group":"g"}', { origin: APP });
    expect(noToken.headers.get('access-control-allow-origin')).toBe(APP);
    await expectError(noToken, 401, 'UNAUTHORIZED');

    const otherQueues = await post(`/v1/queues/${queue}/jobs`, '{"group":"g"}', {
      origin: APP,
      authorization: 'Bearer publish-token-closed-0001',
    });
    expect(otherQueues.headers.get('access-control-allow-origin')).toBe(APP);
    await expectError(otherQueues, 401, 'UNAUTHORIZED');

    const invalid = await post(`/v1/queues/${queue}/jobs`, '{"group":""}', { origin: APP, authorization: `Bearer ${TOKEN}` });
    expect(invalid.headers.get('access-control-allow-origin')).toBe(APP);
    await expectError(invalid, 400, 'VALIDATION_FAILED');

    const malformed = await post(`/v1/queues/${queue}/jobs/batch`, '{"jobs":[', { origin: APP, authorization: `Bearer ${TOKEN}` });
    expect(malformed.headers.get('access-control-allow-origin')).toBe(APP);
    await expectError(malformed, 400, 'BAD_JSON');
  });

  it('a POST from another origin gets no access-control-* headers', async () => {
    const res = await post(`/v1/queues/${queue}/jobs`, '{"group":"g"}', { origin: 'https://evil.example', authorization: `Bearer ${TOKEN}` });
    expect(corsHeaders(res)).toEqual([]);
    await res.arrayBuffer();
    const toClosed = await post(`/v1/queues/${closed}/jobs`, '{"group":"g"}', { origin: APP, authorization: `Bearer ${ADMIN_TOKEN}` });
    expect(corsHeaders(toClosed)).toEqual([]);
    await toClosed.arrayBuffer();
  });
});

describe('every other route', () => {
  it('never answers CORS, even to an origin the queue allows', async () => {
    const admin = { origin: APP, authorization: `Bearer ${ADMIN_TOKEN}` };
    const requests: [string, string][] = [
      ['OPTIONS', `/v1/queues/${queue}`],
      ['OPTIONS', '/v1/queues'],
      ['OPTIONS', `/v1/queues/${queue}/jobs/some-id`],
      ['OPTIONS', `/v1/queues/${queue}/jobs/some-id/complete`],
      ['OPTIONS', `/v1/queues/${queue}/groups`],
      ['OPTIONS', '/health'],
      ['GET', `/v1/queues/${queue}`],
      ['GET', `/v1/queues/${queue}/jobs`],
      ['POST', `/v1/queues/${queue}/pause`],
      ['GET', '/health'],
    ];
    for (const [method, path] of requests) {
      const res = await fetch(`${suite.worker.url}${path}`, {
        method,
        headers: method === 'OPTIONS' ? { ...admin, 'access-control-request-method': 'GET' } : admin,
      });
      await res.arrayBuffer();
      expect({ method, path, cors: corsHeaders(res) }).toEqual({ method, path, cors: [] });
    }
  });
});
