// A Redis that dies (SIGKILL) and restarts from its append-only file in the middle of work:
// nothing accepted is lost (G3). Calls made while it is down fail with REDIS_UNAVAILABLE; leases
// that were in flight either completed before the crash or expire and are retried.
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, startRedis } from '../../scripts/redis-server.mjs';
import { createRespClient } from '../../scripts/resp.mjs';
import { startBridge } from '../../scripts/rest-bridge.mjs';
import { createEngine } from '../../src/core/engine';
import { QueueError } from '../../src/protocol/errors';
import type { LeasedJob } from '../../src/core/engine/leases';
import { createRedis } from '../../src/core/store/redis';
import { testClock } from '../helpers/engine';

type RedisProcess = Awaited<ReturnType<typeof startRedis>>;

describe('Redis restart with AOF in the middle of work', () => {
  let dir: string;
  let port: number;
  let redis: RedisProcess;
  let bridge: Awaited<ReturnType<typeof startBridge>>;
  const token = randomBytes(16).toString('hex');

  async function startDurableRedis(): Promise<RedisProcess> {
    const started = await startRedis({ port, dir, appendonly: true });
    const admin = createRespClient({ port });
    // Every acknowledged write is on disk before the reply: a SIGKILL loses nothing acked.
    await admin.call(['CONFIG', 'SET', 'appendfsync', 'always']);
    admin.close();
    return started;
  }

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'groupq-restart-'));
    port = await freePort();
    redis = await startDurableRedis();
    bridge = await startBridge({ port: 0, redisPort: port, token });
  });

  afterAll(async () => {
    await bridge.close();
    await redis.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('loses no job across a crash and restart', async () => {
    const clock = testClock();
    const engine = createEngine({ redis: createRedis({ url: bridge.url, token }), now: clock.now, allowHttpLoopback: true });
    const queue = 'restart';
    await engine.putQueue(queue, { endpoint: 'http://127.0.0.1:9/jobs', concurrency: 10, keepCompleted: 10_000 });
    const ids = Array.from({ length: 400 }, (_, i) => `job-${i}`);
    await engine.enqueueBatch(queue, ids.map((id, i) => ({ id, group: `g${i % 25}`, data: { i } })));

    const completed = new Set<string>();
    let held: LeasedJob[] = (await engine.reserve(queue, 10)).jobs;
    let unavailable = 0;
    let crashed = false;
    for (let round = 0; completed.size < ids.length; round++) {
      expect(round, 'jobs left behind after the restart').toBeLessThan(500);
      if (!crashed && completed.size >= 150) {
        crashed = true;
        redis.process.kill('SIGKILL');
        await new Promise((resolve) => redis.process.once('exit', resolve));
        // While Redis is down every call fails clearly, and the held leases stay held.
        const error = await engine.reserve(queue, 1).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(QueueError);
        expect((error as QueueError).code).toBe('REDIS_UNAVAILABLE');
        unavailable++;
        redis = await startDurableRedis();
      }
      try {
        const settled = await engine.settle(
          queue,
          held.map((job) => ({ kind: 'complete' as const, id: job.id, lease: job.lease.token })),
          10,
        );
        for (const result of settled.results) if (result.state === 'completed') completed.add(result.id);
        held = settled.jobs;
      } catch (error) {
        if (!(error instanceof QueueError && error.code === 'REDIS_UNAVAILABLE')) throw error;
        unavailable++;
        held = [];
      }
      if (held.length === 0 && completed.size < ids.length) {
        // Leases whose outcome was lost expire and come back through the tick.
        clock.advance(35_001);
        await engine.tick(queue);
        held = (await engine.reserve(queue, 10)).jobs;
      }
    }

    expect(crashed).toBe(true);
    expect(unavailable).toBeGreaterThan(0);
    expect([...completed].sort()).toEqual([...ids].sort());
    const counts = (await engine.getQueue(queue)).counts;
    expect(counts).toMatchObject({ waiting: 0, active: 0, delayed: 0, completed: ids.length, groups: 0 });
  });
});
