// Edges a busy deployment meets: oversized acks, callbacks for a queue deleted under them, and
// one broken queue during the cron's pass over all of them.
import { afterAll, describe, expect, it } from 'vitest';
import { queueKeys } from '../../src/core/keys';
import { Invocation } from '../../src/core/invocation';
import { DueTimes, runQueues } from '../../src/core/runner';
import { createSigner } from '../../src/core/signing';
import { createQueue, rejectsWith, setupQueue, testClock, testEngine } from '../helpers/engine';
import { adminClient } from '../helpers/stack';

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
    const clock = testClock();
    const engine = testEngine(clock);
    const broken = await createQueue(engine, {}, 'a-broken');
    const healthy = await createQueue(engine, {}, 'b-healthy');
    await engine.enqueue(healthy, { id: 'd', group: 'g', delayMs: 1 });
    await engine.putQueue(broken, { endpoint: 'http://127.0.0.1:9/jobs' }); // its next tick is a full pass
    await admin.call(['SET', queueKeys(broken).delayed, 'not a zset']); // and that pass fails

    // Only these two: other test files' queues share this Redis and run on their own clocks.
    clock.advance(1);
    const invocation = new Invocation(clock.now(), 1000, clock.now);
    const delivery = { signer: createSigner(['whsec_MDEyMzQ1Njc4OWFiY2RlZg==']), publicUrl: 'http://127.0.0.1', now: clock.now };
    const results = await runQueues({ engine, invocation, delivery }, new DueTimes(), [broken, healthy], clock.now());
    expect(results[broken]).toMatchObject({ error: expect.any(String) });
    expect(results[healthy]).toMatchObject({ readyDue: true });
    expect((await engine.getJob(healthy, 'd')).state).toBe('waiting');

    await admin.call(['DEL', queueKeys(broken).delayed]);
    await engine.deleteQueue(broken);
    await engine.deleteQueue(healthy);
  });
});
