// Failures of Redis itself reach callers as two codes, never as Redis' message (which holds the
// whole script and its arguments): INTERNAL for a script that failed, REDIS_UNAVAILABLE when
// Redis cannot be reached.
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '../../scripts/redis-server.mjs';
import { startBridge } from '../../scripts/rest-bridge.mjs';
import { createEngine } from '../../src/core/engine';
import { QueueError } from '../../src/protocol/errors';
import { queueKeys } from '../../src/core/store/keys';
import { createRedis } from '../../src/core/store/redis';
import { createQueue, testEngine } from '../helpers/engine';
import { adminClient, stack } from '../helpers/stack';

async function caught(promise: Promise<unknown>): Promise<QueueError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(QueueError);
  return error as QueueError;
}

describe('errors from Redis', () => {
  const admin = adminClient();
  afterAll(() => admin.close());

  it('a script that fails is INTERNAL, with no script text or arguments in the message', async () => {
    const engine = testEngine();
    const queue = await createQueue(engine);
    // Corrupt the queue on purpose: its jobs hash becomes a string.
    await admin.call(['SET', queueKeys(queue).jobs, 'not a hash']);
    const error = await caught(engine.getJob(queue, 'some-id'));
    expect(error.code).toBe('INTERNAL');
    expect(error.status).toBe(500);
    expect(error.message).not.toMatch(/redis\.call|KEYS|some-id|WRONGTYPE/);
    await admin.call(['DEL', queueKeys(queue).jobs]);
    await engine.deleteQueue(queue);
  });

  it('an unreachable Redis is REDIS_UNAVAILABLE (503)', async () => {
    const bridge = await startBridge({ port: 0, redisPort: await freePort(), token: 'token' });
    try {
      const engine = createEngine({ redis: createRedis({ url: bridge.url, token: 'token' }) });
      const error = await caught(engine.enqueue('q', { group: 'g', data: { secret: 'x' } }));
      expect(error.code).toBe('REDIS_UNAVAILABLE');
      expect(error.status).toBe(503);
      expect(error.message).not.toContain('secret');
    } finally {
      await bridge.close();
    }
  });

  it('a wrong REST token is REDIS_UNAVAILABLE, not a leak of the request', async () => {
    const { restUrl } = stack();
    const engine = createEngine({ redis: createRedis({ url: restUrl, token: 'wrong' }) });
    const error = await caught(engine.getQueue('q'));
    expect(error.code).toBe('REDIS_UNAVAILABLE');
  });
});
