// The engine inside workerd, as deployed: health and the cron trigger's scheduler pass.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngine } from '../../src/core/engine';
import { createRedis } from '../../src/core/store/redis';
import { testClock } from '../helpers/engine';
import { ADMIN_TOKEN, type PrivateStack, type RunningWorker, startPrivateStack, startWorker } from '../helpers/worker';

describe('the Worker in workerd', () => {
  let stack: PrivateStack;
  let worker: RunningWorker;
  beforeAll(async () => {
    stack = await startPrivateStack();
    worker = await startWorker(stack);
  });
  afterAll(async () => {
    await worker?.dispose();
    await stack?.close();
  });

  it('GET /health answers ok when Redis is reachable', async () => {
    const res = await worker.api('/health');
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ ok: true, redis: 'ok' });
  });

  it('GET /health answers 503 when Redis is not', async () => {
    const broken = await startWorker(stack, { UPSTASH_REDIS_REST_URL: 'http://127.0.0.1:9' });
    try {
      const res = await broken.api('/health');
      expect(res.status).toBe(503);
      expect(await res.json()).toEqual({ ok: false, redis: 'down' });
    } finally {
      await broken.dispose();
    }
  });

  it('a binding that does not parse is a 500 INTERNAL, not "redis down": named to the admin token only, its value never', async () => {
    const anonymous = "groupq: the Worker's bindings are invalid or missing: its log, or an answer to the admin token, names them";
    const answer = async (worker: RunningWorker, path: string, authorization: string) => {
      const res = await worker.api(path, { headers: { authorization } });
      expect(res.status).toBe(500);
      const text = await res.text();
      expect(text).not.toContain('short-token');
      expect(text).not.toContain('bad-url');
      const body = JSON.parse(text) as { error: { code: string; message: string; requestId: string } };
      expect(body.error).toMatchObject({ code: 'INTERNAL', requestId: res.headers.get('x-request-id') });
      return body.error.message;
    };
    // The admin token itself broken: nobody holds a token that could open the details.
    const badToken = await startWorker(stack, { GROUPQ_ADMIN_TOKEN: 'short-token' });
    try {
      for (const path of ['/health', '/v1/queues']) {
        expect(await answer(badToken, path, '')).toBe(anonymous);
        expect(await answer(badToken, path, 'Bearer short-token')).toBe(anonymous);
      }
    } finally {
      await badToken.dispose();
    }
    // Another binding broken: the admin token's answer names it, a stranger's does not.
    const badLevel = await startWorker(stack, { GROUPQ_LOG_LEVEL: 'bad-url' });
    try {
      expect(await answer(badLevel, '/health', '')).toBe(anonymous);
      expect(await answer(badLevel, '/health', 'Bearer publish-token-0000000001')).toBe(anonymous);
      expect(await answer(badLevel, '/v1/queues', `Bearer ${ADMIN_TOKEN}`)).toMatch(/^groupq: invalid or missing bindings: GROUPQ_LOG_LEVEL/);
    } finally {
      await badLevel.dispose();
    }
  });

  it('the cron trigger ticks every queue: a due delayed job is promoted', async () => {
    // Enqueued a minute "ago" with a 1 s delay: due now by the Worker's real clock.
    const clock = testClock(Date.now() - 60_000);
    const redis = createRedis({ url: stack.restUrl, token: stack.restToken });
    const engine = createEngine({ redis, now: clock.now, allowHttpLoopback: true });
    await engine.putQueue('cron', { endpoint: 'http://127.0.0.1:9/jobs' });
    const { id, state } = await engine.enqueue('cron', { group: 'g', data: { n: 1 }, delayMs: 1000 });
    expect(state).toBe('delayed');

    await worker.scheduled();

    expect((await engine.getJob('cron', id)).state).toBe('waiting');
  });
});
