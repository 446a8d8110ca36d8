// The OpenAPI contract as a suite of its own, run against any groupq that answers HTTP: every
// operation is called, its successes and its typical refusals, and each answer must be one the
// document describes (contract.ts); the last test asks that every operation was seen. The
// Worker in workerd (responses.test.ts) and the Node server under `npm run dev`
// (test/server/contract.test.ts) both run it, so the two runtimes are held to one contract.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import generated from '../../src/protocol/api/openapi.generated.json';
import { type Endpoint, startEndpoint } from '../helpers/endpoint';
import { openSse } from '../helpers/sse-reader';
import { uniqueQueue } from '../http/support';
import { OPERATIONS, checkAnswer, checkEvents, seen } from './contract';

/** The groupq under test. */
export interface ContractTarget {
  /** Its origin, e.g. http://127.0.0.1:8787. */
  url: string;
  /** A token that opens every admin route. */
  adminToken: string;
}

const PUBLISH_TOKEN = 'openapi-publish-token-0001';
const APP = 'https://app.example';

interface Call {
  json?: unknown;
  /** Bearer token; null sends none. @default the admin token */
  token?: string | null;
  headers?: Record<string, string>;
  body?: string;
}

/**
 * Declares the contract's tests against `target()`, read once the caller's beforeAll has run
 * (the target is started there).
 */
export function describeContract(target: () => ContractTarget): void {
  let accepting: Endpoint;
  let failing: Endpoint;
  /** Where outcome callbacks go (a cancelled job's, say). */
  let outcomes: Endpoint;
  beforeAll(async () => {
    // One suite per file: what it saw is its own target's.
    seen.clear();
    accepting = await startEndpoint(() => ({ status: 202 }));
    failing = await startEndpoint(() => ({ status: 500, headers: { 'groupq-retry': 'false' }, body: 'boom' }));
    outcomes = await startEndpoint();
  });
  afterAll(async () => {
    await Promise.all([accepting?.close(), failing?.close(), outcomes?.close()]);
  });

  /** Calls the target, checks the answer against the document, and answers status and body. */
  async function call(method: string, path: string, { json, token = target().adminToken, headers = {}, body }: Call = {}) {
    const h = new Headers(headers);
    if (token !== null) h.set('authorization', `Bearer ${token}`);
    if (json !== undefined) h.set('content-type', 'application/json');
    const url = new URL(path, target().url).href;
    const res = await fetch(url, { method, headers: h, body: json === undefined ? body : JSON.stringify(json) });
    return { status: res.status, headers: res.headers, body: (await checkAnswer(method, url, res)) as any };
  }

  /** Polls the job's GET until it is in `state`. */
  async function waitForState(queue: string, id: string, state: string, timeoutMs = 15_000) {
    const deadline = Date.now() + timeoutMs;
    let last: unknown;
    while (Date.now() < deadline) {
      const answer = await call('GET', `/v1/queues/${queue}/jobs/${encodeURIComponent(id)}`);
      if (answer.status === 200 && answer.body.state === state) return answer.body;
      last = { status: answer.status, body: answer.body };
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(`job ${id} never became ${state}; last seen ${JSON.stringify(last)}`);
  }

  describe('the open pages', () => {
    it('GET /, /health, /metrics, /openapi.json and the dashboard answer as documented', async () => {
      expect((await call('GET', '/', { token: null })).status).toBe(200);
      expect((await call('GET', '/health', { token: null })).body).toEqual({ ok: true, redis: 'ok' });
      expect((await call('GET', '/metrics')).status).toBe(200);
      expect((await call('GET', '/metrics', { token: null })).status).toBe(401);
      const served = await call('GET', '/openapi.json', { token: null });
      expect(served.body).toEqual(generated);
      const again = await call('GET', '/openapi.json', { token: null, headers: { 'if-none-match': served.headers.get('etag')! } });
      expect(again.status).toBe(304);
      for (const path of ['/dashboard', '/dashboard/', '/dashboard/app.js', '/dashboard/app.css']) {
        const page = await call('GET', path, { token: null });
        expect(page.status).toBe(200);
        expect((await call('GET', path, { token: null, headers: { 'if-none-match': page.headers.get('etag')! } })).status).toBe(304);
      }
    });
  });

  describe('queues, jobs, groups and repeats', () => {
    it('answers every admin route as documented, successes and refusals', async () => {
      const queue = uniqueQueue('openapi');
      const Q = `/v1/queues/${queue}`;
      expect((await call('GET', Q)).status).toBe(404);
      const config = { endpoint: accepting.url, publishTokens: [PUBLISH_TOKEN], allowedOrigins: [APP], callbackUrl: outcomes.url };
      expect((await call('PUT', Q, { json: config })).status).toBe(200);
      expect((await call('PUT', Q, { json: { endpoint: 'ftp://x' } })).status).toBe(400);
      expect((await call('GET', Q)).body.config.publishTokens).toBe(1);
      expect((await call('GET', '/v1/queues')).status).toBe(200);
      expect((await call('GET', '/v1/queues', { token: null })).status).toBe(401);
      expect((await call('POST', `${Q}/pause`)).body).toEqual({ name: queue, paused: true });

      // Enqueue: created, duplicate (admin, then a publish token), a batch, refusals, preflights.
      expect((await call('POST', `${Q}/jobs`, { json: { group: 'g', id: 'a', data: { n: 1 } } })).status).toBe(201);
      expect((await call('POST', `${Q}/jobs`, { json: { group: 'g', id: 'a' } })).body).toMatchObject({ id: 'a', duplicate: true });
      // A publish token's ids are its own (prefixed): its duplicate answers the id only.
      const published = await call('POST', `${Q}/jobs`, { json: { group: 'g', id: 'p' }, token: PUBLISH_TOKEN });
      expect(published.status).toBe(201);
      expect((await call('POST', `${Q}/jobs`, { json: { group: 'g', id: 'p' }, token: PUBLISH_TOKEN })).body).toEqual({ id: published.body.id, duplicate: true });
      expect((await call('POST', `${Q}/jobs`, { json: { group: 'g', delayMs: 5 }, token: PUBLISH_TOKEN })).status).toBe(403);
      expect((await call('POST', `${Q}/jobs`, { body: 'nope', headers: { 'content-type': 'text/plain' } })).status).toBe(415);
      expect((await call('POST', `${Q}/jobs`, { body: '{', headers: { 'content-type': 'application/json' } })).status).toBe(400);
      const batch = await call('POST', `${Q}/jobs/batch`, { json: { jobs: [{ group: 'g', id: 'b' }, { group: 'h', id: 'c', delayMs: 3_600_000 }] } });
      expect(batch.body.jobs.map((job: { state: string }) => job.state)).toEqual(['waiting', 'delayed']);
      const preflight = { token: null, headers: { origin: APP, 'access-control-request-method': 'POST' } };
      expect((await call('OPTIONS', `${Q}/jobs`, preflight)).headers.get('access-control-allow-origin')).toBe(APP);
      expect((await call('OPTIONS', `${Q}/jobs/batch`, preflight)).status).toBe(204);

      // Jobs.
      expect((await call('GET', `${Q}/jobs?state=waiting&limit=1`)).body.cursor).not.toBeNull();
      expect((await call('GET', `${Q}/jobs?state=nope`)).status).toBe(400);
      expect((await call('GET', `${Q}/jobs/a?waitMs=0`)).body).toMatchObject({ id: 'a', state: 'waiting', data: { n: 1 } });
      expect((await call('GET', `${Q}/jobs/zz`)).status).toBe(404);
      expect((await call('PATCH', `${Q}/jobs/a`, { json: { data: { n: 2 } } })).body.data).toEqual({ n: 2 });
      expect((await call('POST', `${Q}/jobs/c/promote`)).body.state).toBe('waiting');
      expect((await call('POST', `${Q}/jobs/c/promote`)).status).toBe(409);
      expect((await call('POST', `${Q}/jobs/c/retry`)).status).toBe(409);
      expect((await call('POST', `${Q}/jobs/c/cancel`)).body).toEqual({ id: 'c', state: 'cancelled' });
      expect((await call('DELETE', `${Q}/jobs/b`)).status).toBe(204);
      expect((await call('DELETE', `${Q}/jobs?state=cancelled`)).body).toEqual({ count: 1, done: true });
      expect((await call('POST', `${Q}/jobs/retry`, { json: { state: 'failed' } })).body).toEqual({ count: 0, done: true });

      // Groups.
      expect((await call('GET', `${Q}/groups?limit=10`)).body.groups).toHaveLength(1);
      expect((await call('GET', `${Q}/groups/g`)).body).toMatchObject({ group: 'g', limits: null });
      expect((await call('GET', `${Q}/groups/none`)).status).toBe(404);
      expect((await call('POST', `${Q}/groups/g/pause`)).body).toEqual({ group: 'g', state: 'paused' });
      expect((await call('POST', `${Q}/groups/g/resume`)).status).toBe(200);
      const limits = { concurrency: 2, rateLimit: { max: 5, periodMs: 1000 } };
      expect((await call('PUT', `${Q}/groups/g/limits`, { json: limits })).body).toEqual({ group: 'g', limits });
      expect((await call('GET', `${Q}/groups/g`)).body.limits).toEqual(limits);
      expect((await call('DELETE', `${Q}/groups/g/limits`)).status).toBe(204);

      // Repeats.
      expect((await call('PUT', `${Q}/repeats/nightly`, { json: { group: 'g', pattern: '0 3 * * *', data: 1 } })).body.key).toBe('nightly');
      expect((await call('GET', `${Q}/repeats`)).body.repeats).toHaveLength(1);
      expect((await call('DELETE', `${Q}/repeats/nightly`)).status).toBe(204);
      expect((await call('DELETE', `${Q}/repeats/nightly`)).status).toBe(404);

      // The queue as a whole.
      expect((await call('GET', `${Q}/metrics`)).body.minutes).toHaveLength(60);
      expect((await call('GET', `${Q}/partitions`)).body.partitions).toEqual([expect.objectContaining({ partition: 0, database: 0 })]);
      // One database: no other to move to (test/pool/move.test.ts moves partitions in a pool).
      expect((await call('POST', `${Q}/partitions/0/move`, { json: { database: 1 } })).status).toBe(400);
      expect((await call('POST', `${Q}/repair`)).status).toBe(200);
      expect((await call('POST', `${Q}/resume`)).body.paused).toBe(false);
      expect((await call('PATCH', Q, { json: { maxAttempts: 4 } })).body.config.maxAttempts).toBe(4);
      expect((await call('PATCH', Q, { json: { maxAttempts: 'four' } })).status).toBe(400);
      expect((await call('DELETE', Q)).status).toBe(204);
      expect((await call('PATCH', Q, { json: { maxAttempts: 4 } })).status).toBe(404);

      // Paths with no route, and a known path asked with another method.
      expect((await call('GET', '/v1/nothing')).status).toBe(404);
      expect((await call('POST', Q)).status).toBe(405);
    });
  });

  describe('lease callbacks', () => {
    it('heartbeat, progress, complete and fail answer as documented', async () => {
      const queue = uniqueQueue('openapi-lease');
      const Q = `/v1/queues/${queue}`;
      await call('PUT', Q, { json: { endpoint: accepting.url, maxAttempts: 1 } });
      const before = accepting.received.length;
      await call('POST', `${Q}/jobs`, { json: { group: 'g', id: 'x' } });
      await call('POST', `${Q}/jobs`, { json: { group: 'h', id: 'y' } });
      const delivered = (await accepting.waitFor(before + 2)).slice(before).map((r) => r.job);
      const lease = (id: string) => delivered.find((job) => job.id === id)!.lease.token;
      expect((await call('POST', `${Q}/jobs/x/heartbeat`, { token: null, json: { lease: lease('x'), extendMs: 60_000 } })).status).toBe(200);
      expect((await call('POST', `${Q}/jobs/x/progress`, { token: null, json: { lease: lease('x'), progress: 50 } })).body).toEqual({});
      expect((await call('POST', `${Q}/jobs/x/complete`, { token: null, json: { lease: lease('x'), result: { ok: 1 } } })).body).toEqual({ state: 'completed' });
      expect((await call('POST', `${Q}/jobs/x/complete`, { token: null, json: { lease: lease('x') } })).status).toBe(409);
      expect((await call('POST', `${Q}/jobs/y/fail`, { token: null, json: { lease: lease('y'), error: 'no' } })).body).toEqual({ state: 'failed' });
      await waitForState(queue, 'y', 'failed');
      const job = await call('GET', `${Q}/jobs/y`);
      expect(job.body.history).toHaveLength(1);
      expect((await call('POST', `${Q}/jobs/y/retry`)).body.state).not.toBe('failed');
    });

    it('a job that failed for good is retried in bulk', async () => {
      const queue = uniqueQueue('openapi-failed');
      const Q = `/v1/queues/${queue}`;
      await call('PUT', Q, { json: { endpoint: failing.url, maxAttempts: 1 } });
      await call('POST', `${Q}/jobs`, { json: { group: 'g', id: 'f' } });
      await waitForState(queue, 'f', 'failed');
      await call('POST', `${Q}/pause`);
      expect((await call('POST', `${Q}/jobs/retry`, { json: { state: 'failed' } })).body).toEqual({ count: 1, done: true });
    });
  });

  describe('the event streams', () => {
    it('answer as documented: a finished job\'s stream, its resume after the end, and refusals', async () => {
      const queue = uniqueQueue('openapi-events');
      const Q = `/v1/queues/${queue}`;
      await call('PUT', Q, { json: { endpoint: accepting.url } });
      await call('POST', `${Q}/pause`);
      await call('POST', `${Q}/jobs`, { json: { group: 'g', id: 'e' } });
      await call('POST', `${Q}/jobs/e/cancel`);
      // A live stream never ends, so only its refusals can be read whole here (test/events reads the streams).
      expect((await call('GET', `/v1/queues/${uniqueQueue('none')}/events`)).status).toBe(404);
      expect((await call('GET', `${Q}/events`, { token: null })).status).toBe(401);
      expect((await call('GET', `${Q}/events?lastEventId=x`)).status).toBe(400);
      // The stream of a job that has ended is its end alone.
      const ended = await call('GET', `${Q}/jobs/e/events`);
      expect(ended.status).toBe(200);
      const id = /^id: (.+)$/m.exec(ended.body as string)![1]!;
      expect((await call('GET', `${Q}/jobs/e/events`, { headers: { 'last-event-id': id } })).status).toBe(204);
      expect((await call('GET', `${Q}/jobs/none/events`)).status).toBe(404);
      // An events URL, minted by the admin: it opens the job's GET (what a capability sees) and stream, and nothing else.
      const minted = await call('POST', `${Q}/jobs/e/events-url`, { json: { ttlMs: 60_000, see: 'result' } });
      expect(minted.status).toBe(200);
      const { search } = new URL(minted.body.eventsUrl);
      expect((await call('GET', `${Q}/jobs/e${search}`, { token: null })).body).toMatchObject({ id: 'e', state: 'cancelled' });
      expect((await call('GET', `${Q}/jobs/e/events${search}`, { token: null })).status).toBe(200);
      expect((await call('GET', `${Q}/jobs/f${search}`, { token: null })).status).toBe(401);
      expect((await call('POST', `${Q}/jobs/e/events-url`)).status).toBe(200);
      expect((await call('POST', `${Q}/jobs/none/events-url`)).status).toBe(404);
      expect((await call('POST', `${Q}/jobs/e/events-url`, { json: { ttlMs: 1 } })).status).toBe(400);
    });

    it("an ended job's event carries the data the document says: completed with its result, failed with its error", async () => {
      const queue = uniqueQueue('openapi-ended');
      const Q = `/v1/queues/${queue}`;
      await call('PUT', Q, { json: { endpoint: accepting.url, maxAttempts: 1, keepCompleted: 10 } });
      const before = accepting.received.length;
      await call('POST', `${Q}/jobs`, { json: { group: 'g', id: 'done' } });
      await call('POST', `${Q}/jobs`, { json: { group: 'h', id: 'lost' } });
      const delivered = (await accepting.waitFor(before + 2)).slice(before).map((r) => r.job);
      const lease = (id: string) => delivered.find((job) => job.id === id)!.lease.token;
      await call('POST', `${Q}/jobs/done/progress`, { token: null, json: { lease: lease('done'), progress: { step: 1 } } });
      await call('POST', `${Q}/jobs/done/complete`, { token: null, json: { lease: lease('done'), result: { total: 3 } } });
      await call('POST', `${Q}/jobs/lost/fail`, { token: null, json: { lease: lease('lost'), error: 'out of stock' } });
      // Each stream is the job's end alone, its data checked against the document (contract.ts).
      const done = await call('GET', `${Q}/jobs/done/events`);
      expect(done.body).toMatch(/^event: completed$/m);
      expect(done.body).toContain('"result":{"total":3}');
      const lost = await call('GET', `${Q}/jobs/lost/events`);
      expect(lost.body).toMatch(/^event: failed$/m);
      expect(lost.body).toContain('"error":"out of stock"');
      // What a capability that sees states only reads: the same event without the result.
      const { search } = new URL((await call('POST', `${Q}/jobs/done/events-url`)).body.eventsUrl);
      const seen = await call('GET', `${Q}/jobs/done/events${search}`, { token: null });
      expect(seen.body).toMatch(/^event: completed$/m);
      expect(seen.body).not.toContain('result');
    });

    it("live streams carry a job's events as it runs, each as documented: the queue's and the job's", async () => {
      const queue = uniqueQueue('openapi-live');
      const Q = `/v1/queues/${queue}`;
      await call('PUT', Q, { json: { endpoint: accepting.url, keepCompleted: 10 } });
      await call('POST', `${Q}/pause`);
      await call('POST', `${Q}/jobs`, { json: { group: 'g', id: 'live' } });
      // Opened while the job waits, so each sees what follows live (through the hub of the runtime).
      const open = (path: string) => openSse(new URL(path, target().url).href, { headers: { authorization: `Bearer ${target().adminToken}` } });
      const streams = { queueEvents: await open(`${Q}/events`), jobEvents: await open(`${Q}/jobs/live/events`) };
      try {
        for (const { res } of Object.values(streams)) {
          expect(res.status).toBe(200);
          expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
        }
        const before = accepting.received.length;
        await call('POST', `${Q}/resume`);
        const [delivered] = (await accepting.waitFor(before + 1)).slice(before).map((r) => r.job);
        const lease = delivered!.lease.token;
        await call('POST', `${Q}/jobs/live/progress`, { token: null, json: { lease, progress: 50 } });
        await call('POST', `${Q}/jobs/live/complete`, { token: null, json: { lease, result: { live: true } } });
        const names = (events: typeof streams.queueEvents.events) =>
          events.filter((event) => event.type !== 'gap' && JSON.parse(event.data).id === 'live').map((event) => event.type);
        for (const [operationId, stream] of Object.entries(streams)) {
          const deadline = Date.now() + 15_000;
          while (!names(stream.events).includes('completed') && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
          // The job's run, in order, after what the stream may have told of it first.
          expect(names(stream.events).slice(-3), operationId).toEqual(['active', 'progress', 'completed']);
          expect(stream.events.filter((event) => event.type === 'gap'), operationId).toEqual([]);
          checkEvents(operationId, stream.events);
        }
      } finally {
        for (const stream of Object.values(streams)) stream.close();
      }
    });
  });

  describe('the document', () => {
    it('was exercised whole: every operation answered at least once, as documented', () => {
      expect([...seen].sort()).toEqual(OPERATIONS.map((op) => op.operationId).sort());
    });
  });
}
