// A deployed Worker (GROUPQ_ALLOW_HTTP_LOOPBACK off) without GROUPQ_PUBLIC_URL refuses to start
// rather than build callback URLs from whatever Host a request names: every request answers 500
// with an error naming the binding, before any Redis command, and the cron trigger fails. Local
// development (GROUPQ_ALLOW_HTTP_LOOPBACK on) may go without it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRespClient } from '../../scripts/resp.mjs';
import { type PrivateStack, type RunningWorker, startPrivateStack, startWorker } from '../helpers/worker';

describe('GROUPQ_PUBLIC_URL', () => {
  let stack: PrivateStack;
  beforeAll(async () => {
    stack = await startPrivateStack();
  });
  afterAll(async () => {
    await stack?.close();
  });

  async function withWorker(bindings: Record<string, string>, run: (worker: RunningWorker) => Promise<void>) {
    const worker = await startWorker(stack, bindings);
    try {
      await run(worker);
    } finally {
      await worker.dispose();
    }
  }

  it('missing on a deployed Worker: every request is 500 naming it, nothing reaches Redis, and the cron throws', async () => {
    const redis = createRespClient({ port: stack.redisPort });
    try {
      const commands = async () => {
        const info = String(await redis.call(['INFO', 'commandstats']));
        return [...info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)].filter(([, name]) => name !== 'info').reduce((sum, [, , n]) => sum + Number(n), 0);
      };
      await withWorker({ GROUPQ_PUBLIC_URL: '', GROUPQ_ALLOW_HTTP_LOOPBACK: 'false' }, async (worker) => {
        const before = await commands();
        for (const [method, path, body] of [
          ['GET', '/health'],
          ['GET', '/v1/queues'],
          ['PUT', '/v1/queues/q', { endpoint: 'https://jobs.example/hook' }],
          ['POST', '/v1/queues/q/jobs', { group: 'g' }],
          ['OPTIONS', '/v1/queues/q/jobs'],
        ] as const) {
          const res = await worker.api(path, { method, ...(body ? { json: body } : {}), headers: { host: 'evil.example', 'content-type': 'application/json' } });
          expect(res.status, `${method} ${path}`).toBe(500);
          const answer = (await res.json()) as { error: { code: string; message: string } };
          expect(answer.error.code).toBe('INTERNAL');
          expect(answer.error.message).toMatch(/GROUPQ_PUBLIC_URL/);
        }
        const cron = await (await worker.mf.getWorker()).scheduled({ cron: '* * * * *' });
        expect(cron.outcome).toBe('exception');
        expect(await commands()).toBe(before);
      });
    } finally {
      redis.close();
    }
  });

  it('missing in local development (GROUPQ_ALLOW_HTTP_LOOPBACK=true): the Worker runs', async () => {
    await withWorker({ GROUPQ_PUBLIC_URL: '', GROUPQ_ALLOW_HTTP_LOOPBACK: 'true' }, async (worker) => {
      const res = await worker.api('/health');
      expect(await res.json()).toEqual({ ok: true, redis: 'ok' });
      await worker.scheduled();
    });
  });
});
