// The receiver inside workerd, where timers, Date.now() and background work behave as on
// Cloudflare: a Worker whose job function waits on an upstream call (a loopback server the test
// releases) far longer than the queue's timeoutMs. The handler must switch to 202 by itself, keep
// the lease with heartbeats from ctx.waitUntil past the lease's first end while the cron sweeps
// expired leases, and then complete the job with the upstream's answer.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { build } from 'esbuild';
import { Miniflare } from 'miniflare';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../scripts/redis-server.mjs';
import { COMPATIBILITY_DATE } from '../../scripts/worker-stack.mjs';
import { SIGNING_SECRET } from '../helpers/worker';
import { enqueue, getJob, jobInState, poll, putQueue, queueName, useWorker } from '../delivery/support';

/** The endpoint Worker: one createHandler whose function fetches UPSTREAM and returns its text. */
const ENDPOINT_SOURCE = `
import { createHandler } from ${JSON.stringify(path.resolve('src/receiver/index.ts'))};
export default {
  fetch(request, env, ctx) {
    const handle = createHandler(
      async (job) => {
        const answer = await fetch(env.UPSTREAM + '?job=' + job.id);
        return { upstream: await answer.text(), attempt: job.attempt };
      },
      { secret: env.GROUPQ_SIGNING_SECRET, waitUntil: (p) => ctx.waitUntil(p) },
    );
    return handle(request);
  },
};
`;

describe('createHandler in workerd', () => {
  const env = useWorker();
  let endpoint: Miniflare;
  let endpointUrl: string;
  let upstream: http.Server;
  let upstreamUrl: string;
  /** Upstream requests held until the test answers them. */
  const held: http.ServerResponse[] = [];

  beforeAll(async () => {
    upstream = http.createServer((_req, res) => held.push(res));
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/`;
    const bundle = await build({
      stdin: { contents: ENDPOINT_SOURCE, resolveDir: process.cwd(), loader: 'js' },
      bundle: true,
      write: false,
      format: 'esm',
      platform: 'browser',
      conditions: ['workerd', 'worker', 'browser'],
      logLevel: 'error',
    });
    const port = await freePort();
    endpointUrl = `http://127.0.0.1:${port}/`;
    endpoint = new Miniflare({
      modules: [{ type: 'ESModule', path: 'index.mjs', contents: bundle.outputFiles[0]!.text }],
      compatibilityDate: COMPATIBILITY_DATE,
      host: '127.0.0.1',
      port,
      bindings: { GROUPQ_SIGNING_SECRET: SIGNING_SECRET, UPSTREAM: upstreamUrl },
    });
    await endpoint.ready;
  });
  afterAll(async () => {
    await endpoint?.dispose();
    upstream?.closeAllConnections();
    await new Promise((resolve) => upstream?.close(resolve));
  });

  it('switches a slow job to 202, heartbeats it past its first lease, then completes it', async () => {
    const queue = queueName('workerd');
    await putQueue(env.worker, queue, { endpoint: endpointUrl, keepCompleted: 10, timeoutMs: 1000, maxAttempts: 3 });
    const { id } = await enqueue(env.worker, queue, { group: 'g' });
    await poll(async () => (held.length > 0 ? true : undefined), { what: 'the job to call upstream' });
    const first = await getJob(env.worker, queue, id);
    const firstLeaseEnd = first.leaseExpiresAt!;

    await poll(async () => {
      const job = await getJob(env.worker, queue, id);
      expect(job).toMatchObject({ state: 'active', attempts: 1 });
      return Date.now() > firstLeaseEnd + 1_500 && job.leaseExpiresAt! > firstLeaseEnd ? job : undefined;
    }, { pump: env.worker, intervalMs: 100, what: 'the job to outlive its first lease' });
    // No timeout was recorded and nothing was delivered twice: one upstream call so far.
    expect(held).toHaveLength(1);

    held[0]!.end('upstream says hi');
    const done = await jobInState(env.worker, queue, id, 'completed', { pump: env.worker });
    expect(done).toMatchObject({ attempts: 1, result: { upstream: 'upstream says hi', attempt: 1 } });
    expect(done.error).toBeUndefined();
    expect(held).toHaveLength(1);
  });
});
