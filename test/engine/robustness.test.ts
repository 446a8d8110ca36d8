// Edges a busy deployment meets: oversized acks, callbacks for a queue deleted under them, and
// one broken queue during the cron's pass over the due queues.
import { afterAll, describe, expect, it } from 'vitest';
import { createRespClient } from '../../scripts/resp.mjs';
import { createEngine } from '../../src/core/engine';
import { queueKeys } from '../../src/core/store/keys';
import { Invocation } from '../../src/core/run/invocation';
import { createRedis } from '../../src/core/store/redis';
import { DueTimes } from '../../src/core/run/due-times';
import { runDueQueues } from '../../src/core/run/runner';
import { createSigners } from '../../src/core/push/signing';
import { createQueue, rejectsWith, setupQueue, testClock } from '../helpers/engine';
import { adminClient } from '../helpers/stack';
import { startPrivateStack } from '../helpers/worker';
import { fallbackLog } from '../../src/core/log';

describe('robustness', () => {
  const admin = adminClient();
  afterAll(() => admin.close());

  it('settle refuses more than 1000 outcomes in one call, and changes nothing', async () => {
    const { engine, q } = await setupQueue();
    await engine.enqueue(q, { id: 'a', group: 'g' });
    const [job] = (await engine.reserve(q, 1)).jobs;
    const outcomes = Array.from({ length: 1001 }, () => ({ kind: 'complete' as const, id: job!.id, lease: job!.lease.token }));
    await rejectsWith(engine.settle(q, outcomes, 0), 'VALIDATION_FAILED');
    expect((await engine.getJob(q, 'a')).state).toBe('active');
  });

  it('lease callbacks for a queue deleted under them are LEASE_LOST', async () => {
    const { engine, q } = await setupQueue();
    await engine.enqueue(q, { id: 'a', group: 'g' });
    const [job] = (await engine.reserve(q, 1)).jobs;
    const lease = { id: job!.id, lease: job!.lease.token };
    await engine.deleteQueue(q);
    await rejectsWith(engine.heartbeat(q, lease), 'LEASE_LOST');
    await rejectsWith(engine.progress(q, { ...lease, progress: 50 }), 'LEASE_LOST');
    await rejectsWith(engine.complete(q, lease), 'LEASE_LOST');
    await rejectsWith(engine.fail(q, { ...lease, error: 'x' }), 'LEASE_LOST');
  });

  it("the cron's pass goes on past a queue that fails", async () => {
    // A Redis of its own: the due index is shared by every queue, and other files' queues run
    // on their own clocks.
    const stack = await startPrivateStack();
    const raw = createRespClient({ port: stack.redisPort });
    try {
      const clock = testClock();
      const engine = createEngine({ redis: createRedis({ url: stack.restUrl, token: stack.restToken }), now: clock.now, allowHttpLoopback: true });
      const broken = await createQueue(engine, {}, 'a-broken');
      const healthy = await createQueue(engine, {}, 'b-healthy');
      await engine.enqueue(healthy, { id: 'd', group: 'g', delayMs: 1 });
      await engine.putQueue(broken, { endpoint: 'http://127.0.0.1:9/jobs' }); // its next tick is a full pass
      await raw.call(['SET', queueKeys(broken).delayed, 'not a zset']); // and that pass fails

      clock.advance(1);
      const invocation = new Invocation(clock.now() + 1000, 1000, clock.now);
      const delivery = { signers: createSigners(['whsec_MDEyMzQ1Njc4OWFiY2RlZg==']), publicUrl: 'http://127.0.0.1', now: clock.now };
      const results = await runDueQueues({ engine, invocation, delivery, log: fallbackLog }, new DueTimes(), clock.now());
      expect(results[broken]).toMatchObject({ error: expect.any(String) });
      expect(results[healthy]).toMatchObject({ readyNow: true });
      // Its drain had nowhere to push (port 9): the attempt failed, the job waits for its retry.
      expect((await engine.getJob(healthy, 'd')).attempts).toBe(1);
    } finally {
      raw.close();
      await stack.close();
    }
  });
});
