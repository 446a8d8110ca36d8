// Events URLs over real HTTP against the Worker in workerd (src/handlers/capabilities.ts): a
// publish token's enqueue answers one per new job; with no Authorization header it opens that
// job's stream and its GET, from any origin, and nothing else (401); it stops opening anything
// once it expires; a queue's publishEvents says whether it is given ("none") and what it shows
// ("state": no result, no error, in GET and in the events; never the data). Jobs end through
// real endpoints; live events reach the hub as a Worker hands them over (its publish RPC).
import { afterAll, describe, expect, it } from 'vitest';
import type { PublishedEvent } from '../../src/core/events/wire';
import { useEndpoints } from '../helpers/endpoint';
import { type SseReader, openSse } from '../helpers/sse-reader';
import { ADMIN_TOKEN, type RunningWorker } from '../helpers/worker';
import { expectError, expectJson, putQueue, quietQueue, settledSnapshot, snapshotQueue, uniqueQueue, useHttpSuite, waitForState } from '../http/support';

const suite = useHttpSuite();
const endpoints = useEndpoints({
  completing: () => ({ headers: { 'content-type': 'application/json' }, body: '{"secret":"for the backend"}' }),
  failing: () => ({ status: 500, headers: { 'groupq-retry': 'false' }, body: 'stack trace with secrets' }),
});

const TOKEN = 'capability-publish-token-01';
const ELSEWHERE = 'https://elsewhere.example';
const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };

/** Enqueues with the publish token (`jobs`: a batch); answers the parsed answer. */
async function publish(queue: string, body: Record<string, unknown>, status = 201) {
  const path = 'jobs' in body ? 'jobs/batch' : 'jobs';
  const res = await suite.worker.api(`/v1/queues/${queue}/${path}`, { method: 'POST', json: body, headers: { authorization: `Bearer ${TOKEN}` } });
  return expectJson(res, status);
}

/** GET of `url` as a page on another origin: no Authorization header. */
const asPage = (url: string, init: RequestInit = {}) => fetch(url, { ...init, headers: { origin: ELSEWHERE, ...init.headers } });

/** The capability of an events URL, and the same query string on another path of the Worker. */
const capOf = (eventsUrl: string) => new URL(eventsUrl).searchParams.get('cap')!;
const withCap = (path: string, eventsUrl: string) => `${suite.worker.url}${path}${path.includes('?') ? '&' : '?'}cap=${capOf(eventsUrl)}`;
const jobPath = (queue: string, id: string) => `/v1/queues/${queue}/jobs/${encodeURIComponent(id)}`;

const readers: SseReader[] = [];
async function follow(url: string, init: RequestInit = {}): Promise<SseReader> {
  const reader = await openSse(url, { ...init, headers: { origin: ELSEWHERE, ...init.headers } });
  readers.push(reader);
  return reader;
}
afterAll(() => {
  for (const reader of readers) reader.close();
});

/** Hands `events` to `queue`'s hub as a Worker does after a script call (test/events/hub.test.ts). */
async function toHub(worker: RunningWorker, queue: string, events: PublishedEvent[]) {
  const ns = await worker.mf.getDurableObjectNamespace('EVENT_HUB');
  const hub = ns.get(ns.idFromName(queue)) as unknown as { publish(events: PublishedEvent[]): Promise<unknown> };
  return hub.publish(events);
}

/** Mints an events URL with the admin token. */
async function mint(queue: string, id: string, body?: Record<string, unknown>) {
  const res = await suite.worker.api(`${jobPath(queue, id)}/events-url`, { method: 'POST', ...(body && { json: body }) });
  return expectJson<{ eventsUrl: string; expiresAt: number }>(res, 200);
}

describe('a publish token\'s enqueue', () => {
  it('answers each new job an eventsUrl under the public URL; a duplicate and the admin get none', async () => {
    const queue = await quietQueue(suite, 'cap-answer', { publishTokens: [TOKEN] });
    const one = await publish(queue, { group: 'g', id: 'mine' });
    expect(one).toEqual({ id: 'pub:mine', state: 'waiting', eventsUrl: expect.any(String) });
    expect(one.eventsUrl).toMatch(new RegExp(`^${suite.worker.url}/v1/queues/${queue}/jobs/pub%3Amine/events\\?cap=[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]{43}$`));

    const batch = await publish(queue, { jobs: [{ group: 'g' }, { group: 'h' }, { group: 'g', id: 'mine' }] });
    const [a, b, dup] = batch.jobs;
    for (const job of [a, b]) expect(new URL(job.eventsUrl).pathname).toBe(`${jobPath(queue, job.id).replace(':', '%3A')}/events`);
    expect(capOf(a.eventsUrl)).not.toBe(capOf(b.eventsUrl));
    // A duplicate names a job the token may not have made: its id, nothing more.
    expect(dup).toEqual({ id: 'pub:mine', duplicate: true });
    expect(await publish(queue, { group: 'g', id: 'mine' }, 200)).toEqual({ id: 'pub:mine', duplicate: true });

    const byAdmin = await expectJson(await suite.worker.api(`/v1/queues/${queue}/jobs`, { method: 'POST', json: { group: 'g' } }), 201);
    expect(byAdmin.eventsUrl).toBeUndefined();
  });

  it('publishEvents "none" gives no eventsUrl; set back to "state", it gives one', async () => {
    const queue = await quietQueue(suite, 'cap-none', { publishTokens: [TOKEN], publishEvents: 'none' });
    expect((await expectJson(await suite.worker.api(`/v1/queues/${queue}`), 200)).config.publishEvents).toBe('none');
    expect(await publish(queue, { group: 'g', id: 'quiet' })).toEqual({ id: 'pub:quiet', state: 'waiting' });
    expect((await publish(queue, { jobs: [{ group: 'g' }] })).jobs[0]).toEqual({ id: expect.any(String), state: 'waiting' });
    await expectJson(await suite.worker.api(`/v1/queues/${queue}`, { method: 'PATCH', json: { publishEvents: null } }), 200);
    expect((await publish(queue, { group: 'g' })).eventsUrl).toEqual(expect.any(String));
    const bad = await suite.worker.api(`/v1/queues/${queue}`, { method: 'PATCH', json: { publishEvents: 'everything' } });
    await expectError(bad, 400, 'VALIDATION_FAILED');
  });
});

describe('an events URL', () => {
  it("opens its job's stream and GET without Authorization, from any origin, never the data", async () => {
    const queue = await quietQueue(suite, 'cap-open', { publishTokens: [TOKEN] });
    const { id, eventsUrl } = await publish(queue, { group: 'g', data: { private: 'input' } });

    const reader = await follow(eventsUrl);
    expect(reader.res.status).toBe(200);
    expect(reader.res.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    expect(reader.res.headers.get('access-control-allow-origin')).toBe('*');
    const [added] = await reader.waitForEvents(1);
    expect(added!.type).toBe('added');
    expect(JSON.parse(added!.data)).toMatchObject({ id, queue, group: 'g', state: 'waiting', attempt: 0 });

    const res = await asPage(withCap(jobPath(queue, id), eventsUrl));
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(res.headers.get('access-control-expose-headers')).toBe('x-request-id');
    expect(await expectJson(res, 200)).toEqual({ id, queue, group: 'g', state: 'waiting', attempts: 0, createdAt: expect.any(Number) });
    // ?waitMs= too: the job as it is then.
    expect((await expectJson(await asPage(withCap(`${jobPath(queue, id)}?waitMs=10`, eventsUrl)), 200)).state).toBe('waiting');
    // The admin token still reads the whole job, and gets no CORS from these routes.
    const whole = await suite.worker.api(`${jobPath(queue, id)}?cap=${capOf(eventsUrl)}`, { headers: { ...admin, origin: ELSEWHERE } });
    expect(whole.headers.get('access-control-allow-origin')).toBeNull();
    expect((await expectJson(whole, 200)).data).toEqual({ private: 'input' });
  });

  it('opens nothing else: another job, the queue stream, every admin route, or used as a bearer token: 401', async () => {
    const queue = await quietQueue(suite, 'cap-scope', { publishTokens: [TOKEN] });
    const other = await quietQueue(suite, 'cap-scope-other');
    const { id, eventsUrl } = await publish(queue, { group: 'g' });
    const { id: next } = await publish(queue, { group: 'g' });
    await suite.worker.api(`/v1/queues/${other}/jobs`, { method: 'POST', json: { group: 'g', id } });
    const before = await settledSnapshot(suite.redis, queue);

    // Routes a capability opens, for another job: refused as a capability (CORS, so a page reads it).
    for (const path of [jobPath(queue, next), `${jobPath(queue, next)}/events`, jobPath(other, id), `${jobPath(other, id)}/events`]) {
      const res = await asPage(withCap(path, eventsUrl));
      expect(res.headers.get('access-control-allow-origin'), path).toBe('*');
      expect((await expectError(res, 401, 'UNAUTHORIZED')).error.details, path).toEqual({ reason: 'capability' });
    }
    // A forged or cut capability opens nothing either.
    const cap = capOf(eventsUrl);
    for (const forged of [`${cap.slice(0, -1)}${cap.endsWith('A') ? 'B' : 'A'}`, cap.split('.')[0]!, 'x'.repeat(2000)]) {
      await expectError(await asPage(`${suite.worker.url}${jobPath(queue, id)}?cap=${forged}`), 401, 'UNAUTHORIZED');
    }
    // Every other route: as a request with no token at all.
    const elsewhere: [string, string][] = [
      ['GET', `/v1/queues/${queue}/events`],
      ['GET', `/v1/queues/${queue}`],
      ['GET', '/v1/queues'],
      ['GET', `/v1/queues/${queue}/jobs`],
      ['PATCH', jobPath(queue, id)],
      ['DELETE', jobPath(queue, id)],
      ['POST', `${jobPath(queue, id)}/cancel`],
      ['POST', `${jobPath(queue, id)}/events-url`],
      ['POST', `/v1/queues/${queue}/jobs`],
      ['GET', `/v1/queues/${queue}/groups/g`],
      ['DELETE', `/v1/queues/${queue}`],
    ];
    for (const [method, path] of elsewhere) {
      const res = await asPage(withCap(path, eventsUrl), { method });
      expect(res.headers.get('access-control-allow-origin'), `${method} ${path}`).toBeNull();
      expect((await expectError(res, 401, 'UNAUTHORIZED')).error.details, `${method} ${path}`).toEqual({ reason: 'missing' });
    }
    // Sent as a bearer token it is a token nobody issued, even on its own job.
    const asBearer = await suite.worker.api(jobPath(queue, id), { headers: { authorization: `Bearer ${cap}` } });
    expect((await expectError(asBearer, 401, 'UNAUTHORIZED')).error.details).toEqual({ reason: 'unrecognised' });
    expect(await snapshotQueue(suite.redis, queue)).toEqual(before);
  });

  it('stops opening anything once it expires; the admin mints one for any job that exists', async () => {
    const queue = await quietQueue(suite, 'cap-expiry', { publishEvents: 'none' });
    await suite.worker.api(`/v1/queues/${queue}/jobs`, { method: 'POST', json: { group: 'g', id: 'j' } });
    const startedAt = Date.now();
    const { eventsUrl, expiresAt } = await mint(queue, 'j', { ttlMs: 1000 });
    expect(expiresAt).toBeGreaterThanOrEqual(startedAt + 1000);
    expect(expiresAt).toBeLessThanOrEqual(Date.now() + 1000);
    expect(eventsUrl).toMatch(new RegExp(`^${suite.worker.url}/v1/queues/${queue}/jobs/j/events\\?cap=`));
    expect((await expectJson(await asPage(withCap(jobPath(queue, 'j'), eventsUrl)), 200)).state).toBe('waiting');
    const reader = await follow(eventsUrl);
    expect((await reader.waitForEvents(1))[0]!.type).toBe('added');

    await new Promise((resolve) => setTimeout(resolve, Math.max(0, expiresAt - Date.now()) + 50));
    for (const url of [withCap(jobPath(queue, 'j'), eventsUrl), eventsUrl]) {
      const res = await asPage(url);
      expect(res.headers.get('access-control-allow-origin')).toBe('*');
      const refused = await expectError(res, 401, 'UNAUTHORIZED');
      expect(refused.error.message).toMatch(/expired/);
      expect(refused.error.details).toEqual({ reason: 'capability' });
    }

    // The default lifetime is 15 minutes; no body at all is the defaults.
    const fresh = await mint(queue, 'j');
    expect(fresh.expiresAt - Date.now()).toBeGreaterThan(14 * 60_000);
    expect(fresh.expiresAt - Date.now()).toBeLessThanOrEqual(15 * 60_000);
    await expectError(await suite.worker.api(`${jobPath(queue, 'none')}/events-url`, { method: 'POST' }), 404, 'JOB_NOT_FOUND');
    await expectError(await suite.worker.api(`/v1/queues/${uniqueQueue('nope')}/jobs/j/events-url`, { method: 'POST' }), 404, 'QUEUE_NOT_FOUND');
    for (const body of [{ ttlMs: 999 }, { ttlMs: 86_400_001 }, { see: 'data' }, { other: 1 }]) {
      await expectError(await suite.worker.api(`${jobPath(queue, 'j')}/events-url`, { method: 'POST', json: body }), 400, 'VALIDATION_FAILED');
    }
    const unauthorized = await fetch(`${suite.worker.url}${jobPath(queue, 'j')}/events-url`, { method: 'POST' });
    await expectError(unauthorized, 401, 'UNAUTHORIZED');
  });
});

describe('what an events URL shows', () => {
  /** A job of a queue that delivers to `endpoint`, enqueued with the publish token, once it ended as `state`. */
  async function endedJob(endpoint: 'completing' | 'failing', state: string, config: Record<string, unknown> = {}) {
    const queue = uniqueQueue('cap-shows');
    await putQueue(suite.worker, queue, { endpoint: endpoints[endpoint].url, publishTokens: [TOKEN], keepCompleted: 10, maxAttempts: 1, ...config });
    const { id, eventsUrl } = await publish(queue, { group: 'g', data: { private: 'input' } });
    const job = await waitForState(suite.worker, queue, id, state);
    return { queue, id, eventsUrl, job };
  }

  /** The one event of an ended job's stream, opened with `eventsUrl`: its name and data. */
  async function endOf(eventsUrl: string) {
    const reader = await follow(eventsUrl);
    await reader.ended;
    expect(reader.events).toHaveLength(1);
    return { type: reader.events[0]!.type, data: JSON.parse(reader.events[0]!.data) };
  }

  it('"state" (the default): no result in GET or in the completed event', async () => {
    const { queue, id, eventsUrl, job } = await endedJob('completing', 'completed');
    expect(job.result).toEqual({ secret: 'for the backend' });
    const seen = await expectJson(await asPage(withCap(jobPath(queue, id), eventsUrl)), 200);
    expect(seen).toEqual({
      id, queue, group: 'g', state: 'completed', attempts: 1,
      createdAt: job.createdAt, startedAt: job.startedAt, finishedAt: job.finishedAt,
    });
    const end = await endOf(eventsUrl);
    expect(end.type).toBe('completed');
    expect(end.data).toEqual({ id, queue, group: 'g', state: 'completed', attempt: 1, at: job.finishedAt });
  });

  it('"state": no error in GET or in the failed event', async () => {
    const { queue, id, eventsUrl, job } = await endedJob('failing', 'failed');
    expect(job.error).toMatch(/stack trace/);
    const seen = await expectJson(await asPage(withCap(jobPath(queue, id), eventsUrl)), 200);
    expect(seen.state).toBe('failed');
    expect(seen).not.toHaveProperty('error');
    const end = await endOf(eventsUrl);
    expect(end.type).toBe('failed');
    expect(end.data).not.toHaveProperty('error');
  });

  it('"result": the result and the error too, never the data', async () => {
    const completed = await endedJob('completing', 'completed', { publishEvents: 'result' });
    const seen = await expectJson(await asPage(withCap(jobPath(completed.queue, completed.id), completed.eventsUrl)), 200);
    expect(seen).toMatchObject({ state: 'completed', result: { secret: 'for the backend' } });
    expect(seen).not.toHaveProperty('data');
    expect((await endOf(completed.eventsUrl)).data.result).toEqual({ secret: 'for the backend' });
    const failed = await endedJob('failing', 'failed', { publishEvents: 'result' });
    expect((await endOf(failed.eventsUrl)).data.error).toMatch(/stack trace/);
  });

  it('"state" on a live stream: the hub\'s events come without their result and error; a "result" URL gets them', async () => {
    const queue = await quietQueue(suite, 'cap-live', { publishTokens: [TOKEN] });
    const { id, eventsUrl } = await publish(queue, { group: 'g' });
    const stateOnly = await follow(eventsUrl);
    const withResult = await follow((await mint(queue, id, { see: 'result' })).eventsUrl);
    await Promise.all([stateOnly.waitForEvents(1), withResult.waitForEvents(1)]);
    const at = Date.now();
    const base = { id, queue, group: 'g', at };
    await toHub(suite.worker, queue, [
      { event: 'retrying', data: { ...base, attempt: 1, state: 'waiting', error: 'boom at line 3', retryAt: at + 1000 } },
      { event: 'completed', data: { ...base, attempt: 2, state: 'completed', result: { secret: 1 }, resultTruncated: false } },
    ]);
    const [, retrying, completed] = await stateOnly.waitForEvents(3);
    expect(JSON.parse(retrying!.data)).toEqual({ ...base, attempt: 1, state: 'waiting', retryAt: at + 1000 });
    expect(JSON.parse(completed!.data)).toEqual({ ...base, attempt: 2, state: 'completed' });
    // Each keeps its id: a resume from it misses nothing.
    expect(retrying!.lastEventId).not.toBe(completed!.lastEventId);
    await stateOnly.ended;
    const full = await withResult.waitForEvents(3);
    expect(JSON.parse(full[1]!.data).error).toBe('boom at line 3');
    expect(JSON.parse(full[2]!.data).result).toEqual({ secret: 1 });
    expect(completed!.lastEventId).toBe(full[2]!.lastEventId);
  });
});
