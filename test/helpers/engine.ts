// An engine over the test stack, with a clock the test moves (no sleeps for time).
import { afterAll, beforeAll, expect, onTestFinished } from 'vitest';
import { createEngine, type Engine } from '../../src/core/engine';
import type { ErrorCode } from '../../src/protocol/errors';
import type { QueueConfigInput } from '../../src/protocol/config';
import { createRedis } from '../../src/core/store/redis';
import { createRespClient, type RespClient } from '../../scripts/resp.mjs';
import { stack, uniqueName } from './stack';
import { type PrivateStack, startPrivateStack } from './worker';

/** 2023-11-14T22:13:20Z: a fixed start so tests read the same every run. */
export const T0 = 1_700_000_000_000;

export interface TestClock {
  now(): number;
  advance(ms: number): number;
  set(ms: number): void;
}

export function testClock(start = T0): TestClock {
  let t = start;
  return {
    now: () => t,
    advance: (ms) => (t += ms),
    set: (ms) => {
      t = ms;
    },
  };
}

/** The engine with the production @upstash/redis client, pointed at the test bridge. */
export function testEngine(clock: TestClock = testClock()): Engine {
  const { restUrl, restToken } = stack();
  return createEngine({ redis: createRedis({ url: restUrl, token: restToken }), now: clock.now, allowHttpLoopback: true });
}

/** Creates a queue with a unique name (endpoint unused by the engine) and returns the name. */
export async function createQueue(engine: Engine, config: Partial<QueueConfigInput> = {}, prefix = 'q'): Promise<string> {
  const name = uniqueName(prefix);
  await engine.putQueue(name, { endpoint: 'http://127.0.0.1:9/jobs', ...config });
  return name;
}

/** A fresh clock, engine and queue for one test; the queue is deleted when the test finishes. */
export async function setupQueue(config: Partial<QueueConfigInput> = {}) {
  const clock = testClock();
  const engine = testEngine(clock);
  const q = await createQueue(engine, config);
  onTestFinished(() => engine.deleteQueue(q).catch(() => undefined));
  return { clock, engine, q };
}

export async function rejectsWith(promise: Promise<unknown>, code: ErrorCode): Promise<void> {
  await expect(promise).rejects.toMatchObject({ name: 'QueueError', code });
}

export interface PrivateEngine {
  stack: PrivateStack;
  /** Raw commands on its redis-server (INFO commandstats counts this file's commands alone). */
  admin: RespClient;
  clock: TestClock;
  engine: Engine;
}

/**
 * An engine with a clock the test moves, over a redis-server and bridge of the calling file's
 * own (beforeAll; stopped afterAll), for tests that count commands or read every queue. The
 * returned object is filled in once beforeAll has run.
 */
export function usePrivateEngine(): PrivateEngine {
  const suite = {} as PrivateEngine;
  beforeAll(async () => {
    suite.stack = await startPrivateStack();
    suite.admin = createRespClient({ port: suite.stack.redisPort });
    suite.clock = testClock();
    suite.engine = createEngine({ redis: createRedis({ url: suite.stack.restUrl, token: suite.stack.restToken }), now: suite.clock.now, allowHttpLoopback: true });
  });
  afterAll(async () => {
    suite.admin?.close();
    await suite.stack?.close();
  });
  return suite;
}
