// GET /v1/queues/{queue}/jobs/{id}?waitMs=N while Redis goes away: the answer is 503
// REDIS_UNAVAILABLE with a Retry-After, as for any read that cannot reach Redis, so that a
// client retries it (a 500 says "do not"). The Worker runs in workerd against a redis-server of
// this file's own, which the test stops in the middle of the wait. Every other 503 says when to
// come back too.
import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, startRedis } from '../../scripts/redis-server.mjs';
import { startBridge } from '../../scripts/rest-bridge.mjs';
import { queueKeys } from '../../src/core/store/keys';
import { type RunningWorker, startWorker } from '../helpers/worker';
import { expectError, expectJson, pausedQueue, uniqueQueue } from './support';

/**
 * Resolves once Redis has run a plain HGET of `field` in `key` (a wait's look at its job), read
 * from MONITOR, which shows each command as the server runs it (a script's own say `lua]`): a
 * signal that the wait is under way, where a fixed pause would guess how fast it starts.
 */
async function watchForHget(port: number, key: string, field: string): Promise<{ seen: Promise<void>; close(): void }> {
  const socket = net.connect(port, '127.0.0.1');
  socket.on('error', () => {}); // the test stops this Redis: the watch ends with it
  const wanted = `"hget" "${key}" "${field}"`.toLowerCase();
  let buffered = '';
  let started: () => void = () => {};
  let found: () => void = () => {};
  const monitoring = new Promise<void>((resolve) => (started = resolve));
  const seen = new Promise<void>((resolve) => (found = resolve));
  socket.on('data', (chunk) => {
    const lines = (buffered + chunk.toString('utf8')).split('\r\n');
    buffered = lines.pop()!;
    for (const line of lines) {
      if (line === '+OK') started();
      else if (!line.includes('lua]') && line.toLowerCase().includes(wanted)) found();
    }
  });
  socket.write('MONITOR\r\n');
  await monitoring;
  return { seen, close: () => socket.destroy() };
}

describe('?waitMs when Redis fails during the wait', () => {
  let dir: string;
  let redis: Awaited<ReturnType<typeof startRedis>>;
  let bridge: Awaited<ReturnType<typeof startBridge>>;
  let worker: RunningWorker;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'groupq-wait-down-'));
    redis = await startRedis({ port: await freePort(), dir, appendonly: false });
    const token = randomBytes(16).toString('hex');
    bridge = await startBridge({ port: 0, redisPort: redis.port, token });
    worker = await startWorker({ restUrl: bridge.url, restToken: token, redisPort: redis.port, close: async () => {} });
  });
  afterAll(async () => {
    await worker?.dispose();
    await bridge?.close();
    await redis?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('answers 503 REDIS_UNAVAILABLE with Retry-After, not 500', async () => {
    const queue = uniqueQueue('waitdown');
    await pausedQueue(worker, queue);
    await expectJson(await worker.api(`/v1/queues/${queue}/jobs`, { method: 'POST', json: { id: 'j', group: 'g' } }), 201);
    const watch = await watchForHget(redis.port, queueKeys(queue).jobs, 'j');
    const waiting = worker.api(`/v1/queues/${queue}/jobs/j?waitMs=20000`);
    // The wait has looked at the job at least once (it polls each second) before Redis goes.
    await watch.seen;
    watch.close();
    await redis.stop();
    const res = await waiting;
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    const body = await expectError(res, 503, 'REDIS_UNAVAILABLE');
    expect(body.error.message).toBe('redis is unavailable');
  });

  it('says when to come back on every 503: reads, writes and /health', async () => {
    await redis.stop();
    const answers = [
      await worker.api('/v1/queues/any-queue'),
      await worker.api('/v1/queues/any-queue/jobs', { method: 'POST', json: { group: 'g' } }),
      await worker.api('/v1/queues/any-queue', { method: 'PATCH', json: { concurrency: 2 } }),
      await fetch(`${worker.url}/health`),
    ];
    for (const res of answers) {
      expect(res.status).toBe(503);
      expect(res.headers.get('retry-after')).toBe('1');
    }
  });
});
