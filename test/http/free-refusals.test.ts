// Requests anyone can send without a credential cost Redis nothing (docs/security.md#what-costs-nothing): bogus
// bearer tokens on admin and enqueue routes, CORS preflights, lease callbacks with a lease token
// no lease could have, and callback bodies over the callbacks' cap are refused by the Worker
// alone. Enqueue routes read the queue's config once per isolate for CONFIG_CACHE_MS (a queue that
// does not exist included), so only the first such request reads Redis. Counted with INFO
// commandstats on the stack's own redis-server (script-internal commands included); the
// Worker's cron does not run unless a test fires it, so any command would be the requests'.
// Nothing here waits for the count to "stop moving": a refusal starts no work after its answer
// (only the service's writes do, src/core/run/service.ts), and Redis counts a command before
// it answers it, so the count read once every answer is in is the requests' whole cost.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRespClient } from '../../scripts/resp.mjs';
import { CONFIG_CACHE_MS } from '../../src/core/store/config-cache';
import { ADMIN_TOKEN } from '../helpers/worker';
import { expectError, expectJson, putQueue, uniqueQueue, useHttpSuite } from './support';

const suite = useHttpSuite();
const APP = 'https://app.example';
const TOKEN = 'publish-token-free-0000001';
const NOWHERE = 'http://127.0.0.1:9/jobs';

let redis: ReturnType<typeof createRespClient>;
let queue: string;
beforeAll(async () => {
  redis = createRespClient({ port: suite.stack.redisPort });
  queue = await strangersQueue();
});
afterAll(() => redis?.close());

/** A paused queue that takes publish tokens from APP: nothing runs on it, nothing has read its config yet. */
async function strangersQueue(): Promise<string> {
  const name = uniqueQueue('free');
  await putQueue(suite.worker, name, { endpoint: NOWHERE, allowedOrigins: [APP], publishTokens: [TOKEN] });
  await expectJson(await suite.worker.api(`/v1/queues/${name}/pause`, { method: 'POST' }), 200);
  return name;
}

/** Every command the server has run (INFO's own calls left out: they are the measuring). */
async function commands(): Promise<number> {
  const info = String(await redis.call(['INFO', 'commandstats']));
  let total = 0;
  for (const [, name, calls] of info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) if (name !== 'info') total += Number(calls);
  return total;
}

const bogus = () => `bogus-${randomBytes(12).toString('hex')}`;
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const open = (path: string, init: RequestInit) => fetch(`${suite.worker.url}${path}`, init);
const post = (path: string, body: string, headers: Record<string, string> = {}) =>
  open(path, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });

/**
 * Sends `requests` and answers how many Redis commands they cost, after checking each answer
 * with `check`. Every earlier request has been answered, and none of them runs anything after
 * its answer (see the top of the file): the count before is not moving.
 */
async function costOf(requests: (() => Promise<Response>)[], check: (res: Response, i: number) => Promise<void>): Promise<number> {
  const before = await commands();
  const answers = await Promise.all(requests.map((send) => send()));
  for (const [i, res] of answers.entries()) await check(res, i);
  return (await commands()) - before;
}

/**
 * Checks that `requests` to `names` cost nothing past the first read of each one's config. A
 * first request per name reads it: the names are new, so nothing has read it before (admin
 * routes never do). The cache then keeps it CONFIG_CACHE_MS from when it was read, which is
 * after `since` by the Worker's clock too. A machine slow enough that the requests end past that
 * may read each config again, at most once per CONFIG_CACHE_MS, each read costing what the first
 * did: that much is the cache working, and allowed; any other command fails the test. (On any
 * machine that sends them within CONFIG_CACHE_MS, the allowance is 0.)
 */
async function costPastFirstReads(
  names: string[],
  since: number,
  requests: (() => Promise<Response>)[],
  check: (res: Response, i: number) => Promise<void>,
): Promise<void> {
  const firstReads = await costOf(
    names.map((name) => () => post(`/v1/queues/${name}/jobs`, '{}', bearer(bogus()))),
    async (res) => void (await expectError(res, 401, 'UNAUTHORIZED')),
  );
  expect(firstReads, 'the first request to each name reads its config').toBeGreaterThan(0);
  const cost = await costOf(requests, check);
  const rereads = Math.floor((Date.now() - since) / CONFIG_CACHE_MS);
  expect(cost, `${rereads} expiries of the cached configs could have passed`).toBeLessThanOrEqual(firstReads * rereads);
}

describe('requests without a credential cost no Redis command', () => {
  it('bogus, malformed and publish tokens on admin routes: 401, no command', async () => {
    const routes: [string, string][] = [
      ['GET', '/v1/queues'],
      ['GET', `/v1/queues/${queue}`],
      ['PUT', `/v1/queues/${queue}`],
      ['DELETE', `/v1/queues/${queue}`],
      ['GET', `/v1/queues/${queue}/jobs/x`],
    ];
    const tokens = [bogus(), bogus(), TOKEN, 'short', ADMIN_TOKEN.slice(0, -1)];
    const requests = routes.flatMap(([method, path]) =>
      tokens.map((token) => () => open(path, { method, headers: { ...bearer(token), 'content-type': 'application/json' }, body: method === 'PUT' ? '{}' : undefined })),
    );
    expect(requests).toHaveLength(25);
    const cost = await costOf(requests, async (res) => {
      expect((await expectError(res, 401, 'UNAUTHORIZED')).error.details).toEqual({ reason: 'unrecognised' });
    });
    expect(cost).toBe(0);
  });

  it('bogus and malformed tokens on enqueue routes, of a queue and of one that does not exist: 401, no command past the first', async () => {
    const since = Date.now();
    const names = [await strangersQueue(), uniqueQueue('ghost')];
    const requests = names.flatMap((name) =>
      [bogus(), bogus(), bogus(), 'short', 'x'.repeat(300)].flatMap((token) => [
        () => post(`/v1/queues/${name}/jobs`, JSON.stringify({ group: 'g' }), bearer(token)),
        () => post(`/v1/queues/${name}/jobs/batch`, JSON.stringify({ jobs: [{ group: 'g' }] }), { ...bearer(token), origin: APP }),
      ]),
    );
    expect(requests).toHaveLength(20);
    await costPastFirstReads(names, since, requests, async (res) => {
      await expectError(res, 401, 'UNAUTHORIZED');
    });
  });

  it('CORS preflights, from allowed origins and others, of a queue and of one that does not exist: 204, no command past the first', async () => {
    const since = Date.now();
    const names = [await strangersQueue(), uniqueQueue('ghost')];
    const requests = names.flatMap((name) =>
      [APP, 'https://evil.example'].flatMap((origin) =>
        ['jobs', 'jobs/batch'].flatMap((route) =>
          [1, 2].map(() => () =>
            open(`/v1/queues/${name}/${route}`, {
              method: 'OPTIONS',
              headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type' },
            }),
          ),
        ),
      ),
    );
    expect(requests.length).toBe(16);
    await costPastFirstReads(names, since, requests, async (res, i) => {
      expect(res.status).toBe(204);
      // The first four are the queue's own origin: it is allowed, the rest never are.
      expect(res.headers.get('access-control-allow-origin')).toBe(i < 4 ? APP : null);
      await res.arrayBuffer();
    });
  });

  it('lease callbacks with a lease token no lease could have: 409 LEASE_LOST (400 when not a token at all), no command', async () => {
    const leases = ['not-the-lease', '0123', 'ABCDEF0123456789', '0123456789abcdeg', 'z'.repeat(64)];
    const bodies = leases.flatMap((lease) => [
      ['heartbeat', { lease }],
      ['progress', { lease, progress: 1 }],
      ['complete', { lease, result: { ok: 1 } }],
      ['fail', { lease, error: 'boom' }],
    ]) as [string, { lease: string }][];
    bodies.push(['complete', { lease: 'a'.repeat(65) }]);
    const requests = bodies.map(([action, body]) => () => post(`/v1/queues/${queue}/jobs/x/${action}`, JSON.stringify(body)));
    expect(requests).toHaveLength(21);
    const cost = await costOf(requests, async (res, i) => {
      if (i < 20) await expectError(res, 409, 'LEASE_LOST');
      else await expectError(res, 400, 'VALIDATION_FAILED');
    });
    expect(cost).toBe(0);
  });

  it('callback bodies over 80 KiB, announced or not, with a well-formed lease token: 413, no command', async () => {
    const big = JSON.stringify({ lease: '0123456789abcdef', result: 'r'.repeat(81 * 1024) });
    const requests = ['heartbeat', 'progress', 'complete', 'fail'].flatMap((action) =>
      [1, 2, 3, 4, 5].map((n) => () => {
        const path = `/v1/queues/${queue}/jobs/x/${action}`;
        if (n % 2 === 1) return post(path, big);
        // Streamed: no content-length, so the cap is found while reading.
        const stream = new ReadableStream({
          start(controller) {
            controller.enqueue(new TextEncoder().encode(big));
            controller.close();
          },
        });
        return open(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: stream, duplex: 'half' } as RequestInit);
      }),
    );
    const cost = await costOf(requests, async (res) => {
      expect((await expectError(res, 413, 'PAYLOAD_TOO_LARGE')).error.details).toEqual({ maxBodyBytes: 80 * 1024 });
    });
    expect(cost).toBe(0);
  });

  it('the count sees what a credentialed request costs (the measuring works)', async () => {
    const cost = await costOf([() => suite.worker.api(`/v1/queues/${queue}`)], async (res) => {
      await expectJson(res, 200);
    });
    expect(cost).toBeGreaterThan(0);
  });
});

describe('the cached config', () => {
  it('a PUT takes effect at once in the isolate that served it: a token added works, a token dropped is refused', async () => {
    const name = uniqueQueue('fresh');
    const added = 'publish-token-added-000001';
    await putQueue(suite.worker, name, { endpoint: NOWHERE, publishTokens: [TOKEN] });
    await expectJson(await suite.worker.api(`/v1/queues/${name}/pause`, { method: 'POST' }), 200);
    // Read and cached: the new token is not in it yet.
    await expectError(await post(`/v1/queues/${name}/jobs`, JSON.stringify({ group: 'g' }), bearer(added)), 401, 'UNAUTHORIZED');
    expect((await post(`/v1/queues/${name}/jobs`, JSON.stringify({ group: 'g' }), bearer(TOKEN))).status).toBe(201);

    await putQueue(suite.worker, name, { endpoint: NOWHERE, publishTokens: [added] });
    expect((await post(`/v1/queues/${name}/jobs`, JSON.stringify({ group: 'g' }), bearer(added))).status).toBe(201);
    await expectError(await post(`/v1/queues/${name}/jobs`, JSON.stringify({ group: 'g' }), bearer(TOKEN)), 401, 'UNAUTHORIZED');
  });

  it('a queue created after its absence was cached takes jobs at once, and one deleted refuses its tokens at once', async () => {
    const name = uniqueQueue('later');
    await expectError(await post(`/v1/queues/${name}/jobs`, JSON.stringify({ group: 'g' }), bearer(TOKEN)), 401, 'UNAUTHORIZED');
    await putQueue(suite.worker, name, { endpoint: NOWHERE, publishTokens: [TOKEN] });
    await expectJson(await suite.worker.api(`/v1/queues/${name}/pause`, { method: 'POST' }), 200);
    expect((await post(`/v1/queues/${name}/jobs`, JSON.stringify({ group: 'g' }), bearer(TOKEN))).status).toBe(201);
    expect((await suite.worker.api(`/v1/queues/${name}`, { method: 'DELETE' })).status).toBe(204);
    await expectError(await post(`/v1/queues/${name}/jobs`, JSON.stringify({ group: 'g' }), bearer(TOKEN)), 401, 'UNAUTHORIZED');
  });
});
