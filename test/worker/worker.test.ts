// The engine inside workerd, as deployed: health and the cron trigger's scheduler pass.
import type { Miniflare } from 'miniflare';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createQueue, testClock, testEngine } from '../helpers/engine';
import { startWorker } from '../helpers/worker';

describe('the Worker in workerd', () => {
  let worker: Miniflare;
  beforeAll(async () => {
    worker = await startWorker();
  });
  afterAll(() => worker.dispose());

  it('GET /health answers ok when Redis is reachable', async () => {
    const res = await worker.dispatchFetch('http://groupq.test/health');
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ ok: true, redis: 'ok' });
  });

  it('GET /health answers 503 when Redis is not', async () => {
    const broken = await startWorker({ UPSTASH_REDIS_REST_URL: 'http://127.0.0.1:9' });
    try {
      const res = await broken.dispatchFetch('http://groupq.test/health');
      expect(res.status).toBe(503);
      expect(await res.json()).toEqual({ ok: false, redis: 'down' });
    } finally {
      await broken.dispose();
    }
  });

  it('the cron trigger ticks every queue: a due delayed job is promoted', async () => {
    // Enqueued a minute "ago" with a 1 s delay: due now by the Worker's real clock.
    const clock = testClock(Date.now() - 60_000);
    const engine = testEngine(clock);
    const queue = await createQueue(engine);
    const { id, state } = await engine.enqueue(queue, { group: 'g', data: { n: 1 }, delayMs: 1000 });
    expect(state).toBe('delayed');

    const fetcher = await worker.getWorker();
    await fetcher.scheduled({ cron: '* * * * *' });

    expect((await engine.getJob(queue, id)).state).toBe('waiting');
    await engine.deleteQueue(queue);
  });
});
