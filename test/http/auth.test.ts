// HTTP API v1, authorization over HTTP against the Worker in workerd: the admin token opens
// every route; a queue's publish tokens open only that queue's two enqueue routes; anywhere
// else, once revoked, and like any unknown or malformed token, they get the same 401 as a token
// nobody issued, so no answer tells which strings are tokens; lease callbacks need the lease
// token alone; publish tokens are write-only. Every rejected request leaves the queue unchanged.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Endpoint, startEndpoint } from '../helpers/endpoint';
import { ADMIN_TOKEN } from '../helpers/worker';
import {
  enqueue,
  expectError,
  expectJson,
  putQueue,
  settledSnapshot,
  snapshotQueue,
  uniqueQueue,
  useHttpSuite,
  waitForState,
} from './support';

const suite = useHttpSuite();
const NOWHERE = 'http://127.0.0.1:9/jobs';
const TOKEN_Q = 'publish-token-queue-q-0001';
const TOKEN_Q2 = 'publish-token-queue-q-0002';
const TOKEN_R = 'publish-token-queue-r-0001';

let q: string;
let r: string;
beforeAll(async () => {
  q = uniqueQueue('auth-q');
  r = uniqueQueue('auth-r');
  // No events URLs in q's enqueue answers: they are read whole below (test/events reads those URLs).
  await putQueue(suite.worker, q, { endpoint: NOWHERE, publishTokens: [TOKEN_Q, TOKEN_Q2], publishEvents: 'none' });
  await putQueue(suite.worker, r, { endpoint: NOWHERE, publishTokens: [TOKEN_R] });
  // Paused: accepted jobs stay put, so the snapshots below only change when a request writes.
  for (const name of [q, r]) await expectJson(await suite.worker.api(`/v1/queues/${name}/pause`, { method: 'POST' }), 200);
  await enqueue(suite.worker, q, { id: 'x', group: 'g', data: 1 });
  await suite.worker.api(`/v1/queues/${q}/repeats/k`, { method: 'PUT', json: { group: 'g', every: 3_600_000 } });
});

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/** Every admin-only route, against queue `queue` (job x, group g, repeat k exist there). */
function adminRoutes(queue: string): [method: string, path: string, body?: unknown][] {
  return [
    ['GET', '/v1/queues'],
    ['PUT', `/v1/queues/${queue}`, { endpoint: NOWHERE }],
    ['GET', `/v1/queues/${queue}`],
    // Resume first: the queue ends paused, so no delivery races the job routes below.
    ['POST', `/v1/queues/${queue}/resume`],
    ['POST', `/v1/queues/${queue}/pause`],
    ['GET', `/v1/queues/${queue}/jobs`],
    ['GET', `/v1/queues/${queue}/jobs/x`],
    ['PATCH', `/v1/queues/${queue}/jobs/x`, { data: 'changed' }],
    ['POST', `/v1/queues/${queue}/jobs/x/retry`],
    ['POST', `/v1/queues/${queue}/jobs/x/promote`],
    ['GET', `/v1/queues/${queue}/groups`],
    ['GET', `/v1/queues/${queue}/groups/g`],
    ['POST', `/v1/queues/${queue}/groups/g/pause`],
    ['POST', `/v1/queues/${queue}/groups/g/resume`],
    ['PUT', `/v1/queues/${queue}/groups/g/limits`, { concurrency: 2 }],
    ['DELETE', `/v1/queues/${queue}/groups/g/limits`],
    ['GET', `/v1/queues/${queue}/repeats`],
    ['PUT', `/v1/queues/${queue}/repeats/k2`, { group: 'g', every: 60_000 }],
    ['DELETE', `/v1/queues/${queue}/repeats/k`],
    ['DELETE', `/v1/queues/${queue}/jobs/x`],
    ['DELETE', `/v1/queues/${queue}`],
  ];
}

/** A request with exactly these auth headers; `null` sends no authorization header at all. */
function call(method: string, path: string, body: unknown, headers: Record<string, string> | null) {
  if (headers !== null) return suite.worker.api(path, { method, headers, ...(body === undefined ? {} : { json: body }) });
  const init: RequestInit = { method };
  if (body !== undefined) init.headers = { 'content-type': 'application/json' };
  if (body !== undefined) init.body = JSON.stringify(body);
  return fetch(`${suite.worker.url}${path}`, init);
}

describe('admin routes', () => {
  it('no token, a wrong or unknown token, or a non-Bearer header: 401 UNAUTHORIZED, nothing changes', async () => {
    const before = await settledSnapshot(suite.redis, q);
    // details.reason: no bearer token at all, or one that is not recognised.
    const rejected: [Record<string, string> | null, 'missing' | 'unrecognised'][] = [
      [null, 'missing'],
      [{ authorization: '' }, 'missing'],
      [{ authorization: 'Bearer ' }, 'missing'],
      [bearer(`${ADMIN_TOKEN.slice(0, -1)}X`), 'unrecognised'],
      [bearer(ADMIN_TOKEN.slice(0, -1)), 'unrecognised'],
      [bearer('never-issued-token-000000'), 'unrecognised'],
      [{ authorization: ADMIN_TOKEN }, 'missing'],
      [{ authorization: `Basic ${Buffer.from(`admin:${ADMIN_TOKEN}`).toString('base64')}` }, 'missing'],
    ];
    for (const [headers, reason] of rejected) {
      for (const [method, path, body] of adminRoutes(q)) {
        const res = await call(method, path, body, headers);
        const answer = await expectError(res, 401, 'UNAUTHORIZED').catch((error: Error) => {
          throw new Error(`${method} ${path} with ${JSON.stringify(headers)}: ${error.message}`);
        });
        expect(answer.error.details).toEqual({ reason });
        expect(answer.error.message).toMatch(reason === 'missing' ? /no bearer token/ : /not recognised/);
      }
    }
    expect(await snapshotQueue(suite.redis, q)).toEqual(before);
  });

  it('a publish token, even of the queue itself: the same 401 as an unknown token, nothing changes', async () => {
    const before = await settledSnapshot(suite.redis, q);
    const unknown = await expectError(await call('GET', `/v1/queues/${q}`, undefined, bearer('never-issued-token-000000')), 401, 'UNAUTHORIZED');
    for (const token of [TOKEN_Q, TOKEN_R]) {
      for (const [method, path, body] of adminRoutes(q)) {
        const res = await call(method, path, body, bearer(token));
        const answer = await expectError(res, 401, 'UNAUTHORIZED').catch((error: Error) => {
          throw new Error(`${method} ${path} with ${token}: ${error.message}`);
        });
        // Alike but for the request's own id.
        expect({ ...answer.error, requestId: undefined }).toEqual({ ...unknown.error, requestId: undefined });
      }
    }
    expect(await snapshotQueue(suite.redis, q)).toEqual(before);
  });

  it('the admin token opens every route', async () => {
    const queue = uniqueQueue('admin');
    await putQueue(suite.worker, queue, { endpoint: NOWHERE });
    await expectJson(await suite.worker.api(`/v1/queues/${queue}/pause`, { method: 'POST' }), 200);
    await enqueue(suite.worker, queue, { id: 'x', group: 'g', delayMs: 600_000 });
    await suite.worker.api(`/v1/queues/${queue}/repeats/k`, { method: 'PUT', json: { group: 'g', every: 60_000 } });
    const statuses: string[] = [];
    for (const [method, path, body] of adminRoutes(queue)) {
      const res = await call(method, path, body, bearer(ADMIN_TOKEN));
      statuses.push(`${method} ${path.replace(queue, 'Q')} ${res.status}`);
      await res.arrayBuffer();
    }
    // retry of a delayed job is the one refusal (409), and it is about state, not auth.
    expect(statuses).toEqual([
      'GET /v1/queues 200',
      'PUT /v1/queues/Q 200',
      'GET /v1/queues/Q 200',
      'POST /v1/queues/Q/resume 200',
      'POST /v1/queues/Q/pause 200',
      'GET /v1/queues/Q/jobs 200',
      'GET /v1/queues/Q/jobs/x 200',
      'PATCH /v1/queues/Q/jobs/x 200',
      'POST /v1/queues/Q/jobs/x/retry 409',
      'POST /v1/queues/Q/jobs/x/promote 200',
      'GET /v1/queues/Q/groups 200',
      'GET /v1/queues/Q/groups/g 200',
      'POST /v1/queues/Q/groups/g/pause 200',
      'POST /v1/queues/Q/groups/g/resume 200',
      'PUT /v1/queues/Q/groups/g/limits 200',
      'DELETE /v1/queues/Q/groups/g/limits 204',
      'GET /v1/queues/Q/repeats 200',
      'PUT /v1/queues/Q/repeats/k2 200',
      'DELETE /v1/queues/Q/repeats/k 204',
      'DELETE /v1/queues/Q/jobs/x 204',
      'DELETE /v1/queues/Q 204',
    ]);
  });
});

describe('enqueue routes', () => {
  it('a publish token enqueues to its own queue, single and batch', async () => {
    const one = await call('POST', `/v1/queues/${q}/jobs`, { id: 'by-publisher', group: 'p' }, bearer(TOKEN_Q));
    // A publish token's ids live apart from the admin's: its `by-publisher` is the job `pub:by-publisher`.
    expect(await expectJson(one, 201)).toEqual({ id: 'pub:by-publisher', state: 'waiting' });
    const batch = await call('POST', `/v1/queues/${q}/jobs/batch`, { jobs: [{ group: 'p' }, { group: 'p2' }] }, bearer(TOKEN_Q2));
    expect((await expectJson(batch, 201)).jobs).toHaveLength(2);
    expect((await expectJson(await suite.worker.api(`/v1/queues/${q}/jobs/pub:by-publisher`), 200)).group).toBe('p');
  });

  it("another queue's publish token: the same 401 as an unknown token, nothing written", async () => {
    const before = await settledSnapshot(suite.redis, r);
    const one = await call('POST', `/v1/queues/${r}/jobs`, { id: 'intruder', group: 'g' }, bearer(TOKEN_Q));
    expect((await expectError(one, 401, 'UNAUTHORIZED')).error.details).toEqual({ reason: 'unrecognised' });
    const batch = await call('POST', `/v1/queues/${r}/jobs/batch`, { jobs: [{ group: 'g' }] }, bearer(TOKEN_Q));
    expect((await expectError(batch, 401, 'UNAUTHORIZED')).error.details).toEqual({ reason: 'unrecognised' });
    expect(await snapshotQueue(suite.redis, r)).toEqual(before);
  });

  it('no token, an unknown one or one no publish token could be (too short, too long, not visible ASCII): 401, nothing written', async () => {
    const before = await settledSnapshot(suite.redis, r);
    const rejected = [
      [null, 'missing'],
      [{ authorization: '' }, 'missing'],
      [bearer('never-issued-token-000000'), 'unrecognised'],
      [bearer('short-token'), 'unrecognised'],
      [bearer('x'.repeat(257)), 'unrecognised'],
      [bearer('token-with-latin1-\u00e9-000'), 'unrecognised'],
    ] as const;
    for (const [headers, reason] of rejected) {
      const one = await expectError(await call('POST', `/v1/queues/${r}/jobs`, { group: 'g' }, headers), 401, 'UNAUTHORIZED');
      expect(one.error.details).toEqual({ reason });
      const batch = await expectError(await call('POST', `/v1/queues/${r}/jobs/batch`, { jobs: [{ group: 'g' }] }, headers), 401, 'UNAUTHORIZED');
      expect(batch.error.details).toEqual({ reason });
    }
    expect(await snapshotQueue(suite.redis, r)).toEqual(before);
  });

  it('GET shows publish tokens as a count, never their values', async () => {
    const res = await suite.worker.api(`/v1/queues/${q}`);
    const text = await res.clone().text();
    expect((await expectJson(res, 200)).config.publishTokens).toBe(2);
    for (const secret of [TOKEN_Q, TOKEN_Q2]) expect(text).not.toContain(secret);
    expect(text).not.toMatch(/[0-9a-f]{64}/); // nor their hashes
    const list = await (await suite.worker.api('/v1/queues')).text();
    expect(list).not.toContain(TOKEN_Q);
  });

  it('a token left out of a re-PUT stops working (401); the one kept still works', async () => {
    const queue = uniqueQueue('revoke');
    const gone = 'publish-token-revoked-0001';
    const kept = 'publish-token-kept-000001';
    await putQueue(suite.worker, queue, { endpoint: NOWHERE, publishTokens: [gone, kept] });
    await expectJson(await suite.worker.api(`/v1/queues/${queue}/pause`, { method: 'POST' }), 200);
    expect((await call('POST', `/v1/queues/${queue}/jobs`, { group: 'g' }, bearer(gone))).status).toBe(201);

    await putQueue(suite.worker, queue, { endpoint: NOWHERE, publishTokens: [kept] });
    await expectError(await call('POST', `/v1/queues/${queue}/jobs`, { group: 'g' }, bearer(gone)), 401, 'UNAUTHORIZED');
    await expectError(await call('POST', `/v1/queues/${queue}/jobs/batch`, { jobs: [{ group: 'g' }] }, bearer(gone)), 401, 'UNAUTHORIZED');
    expect((await call('POST', `/v1/queues/${queue}/jobs`, { group: 'g' }, bearer(kept))).status).toBe(201);
    // A re-PUT keeps the pause and the jobs: both accepted jobs still wait.
    expect(await expectJson(await suite.worker.api(`/v1/queues/${queue}`), 200)).toMatchObject({ paused: true, counts: { waiting: 2 } });
  });
});

describe('open routes', () => {
  let accepting: Endpoint;
  beforeAll(async () => {
    accepting = await startEndpoint(() => ({ status: 202 }));
  });
  afterAll(async () => {
    await accepting?.close();
  });

  it('GET /health needs no token', async () => {
    expect(await expectJson(await fetch(`${suite.worker.url}/health`), 200)).toEqual({ ok: true, redis: 'ok' });
  });

  it('lease callbacks need no bearer token: the lease token in the body is the authority', async () => {
    const queue = uniqueQueue('lease');
    await putQueue(suite.worker, queue, { endpoint: accepting.url, keepCompleted: 10 });
    const { id } = await enqueue(suite.worker, queue, { group: 'g', data: 1 });
    // Leased before it is pushed: wait for the push itself, which carries the lease.
    const delivered = (await accepting.waitFor(1)).find((d) => d.job.id === id)!.job;
    expect((await waitForState(suite.worker, queue, id, 'active')).id).toBe(id);
    const post = (url: string, body: unknown, headers: Record<string, string> = {}) =>
      fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });

    // A wrong lease is refused as such (409), not as a missing bearer (401).
    await expectError(await post(delivered.callbacks.heartbeat, { lease: 'not-the-lease' }), 409, 'LEASE_LOST');
    const beat = await expectJson(await post(delivered.callbacks.heartbeat, { lease: delivered.lease.token }), 200);
    expect(Object.keys(beat)).toEqual(['expiresAt']);
    // Someone else's bearer token on the request does not matter either.
    const progress = await post(delivered.callbacks.progress, { lease: delivered.lease.token, progress: 50 }, bearer('junk-token-000000000'));
    expect(await expectJson(progress, 200)).toEqual({});
    const done = await post(delivered.callbacks.complete, { lease: delivered.lease.token, result: { ok: 1 } });
    expect(await expectJson(done, 200)).toEqual({ state: 'completed' });
    expect(await expectJson(await suite.worker.api(`/v1/queues/${queue}/jobs/${id}`), 200)).toMatchObject({
      state: 'completed',
      result: { ok: 1 },
    });
  });
});
