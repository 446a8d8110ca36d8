// The bridge's emulation of Upstash's cap on commands a second (GROUPQ_BRIDGE_MAX_COMMANDS_PER_S,
// scripts/bridge-throttle.mjs), driven by the production @upstash/redis client, on a clock the
// test moves: a request waits while the commands already run exceed what the cap allowed so far,
// and the commands a script runs count, as Upstash bills them. A request that must wait stays
// unanswered for as long as the clock stands still, so "still waiting" is checked without timing.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Redis } from '@upstash/redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, startRedis } from '../../scripts/redis-server.mjs';
import { maxCommandsFromEnv, startBridge } from '../../scripts/rest-bridge.mjs';

const CAP = 100; // commands a second; the bucket holds a tenth of a second's worth: 10
const TOKEN = 'throttle-test-token';
/** Runs `n` SETs: one EVAL and n commands inside it, 1 + n as Upstash counts. */
const SETS = "for i = 1, tonumber(ARGV[1]) do redis.call('SET', KEYS[1], i) end return 1";

let clock = 0;
let dir: string;
let redisServer: Awaited<ReturnType<typeof startRedis>>;
let bridge: Awaited<ReturnType<typeof startBridge>>;
let client: Redis;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'groupq-throttle-'));
  redisServer = await startRedis({ port: await freePort(), dir, appendonly: false });
  bridge = await startBridge({ port: 0, redisPort: redisServer.port, token: TOKEN, maxCommandsPerSecond: CAP, now: () => clock });
  client = new Redis({ url: bridge.url, token: TOKEN, automaticDeserialization: false, retry: false, enableAutoPipelining: false });
});

afterAll(async () => {
  await bridge?.close();
  await redisServer?.stop();
  await rm(dir, { recursive: true, force: true });
});

/** Whether `promise` is still unsettled after the bridge had time to answer it (the clock stands still meanwhile). */
async function stillWaiting(promise: Promise<unknown>): Promise<boolean> {
  const pending = Symbol('pending');
  // Enough for many answers from a bridge on loopback; a request the throttle holds never ends here.
  const waited = await Promise.race([promise.then(() => null), new Promise((resolve) => setTimeout(() => resolve(pending), 300))]);
  return waited === pending;
}

describe('GROUPQ_BRIDGE_MAX_COMMANDS_PER_S', () => {
  it("counts every command a script runs: a request waits until the cap has paid for them, then runs", async () => {
    clock = 0;
    // Starts with a full bucket (10): the script runs, and leaves it at 10 - (1 + 30) = -21.
    expect(await client.eval(SETS, ['test:throttle:a'], ['30'])).toBe(1);
    const ping = client.ping();
    expect(await stillWaiting(ping)).toBe(true);
    clock += 200; // refills 20 of the 21: still below zero
    expect(await stillWaiting(ping)).toBe(true);
    clock += 10; // the 21st
    expect(await ping).toBe('PONG'); // which leaves -1
    clock += 10;
    expect(await client.get('test:throttle:a')).toBe('30');
  });

  it('within the cap nothing waits, and a pipeline counts each of its commands', async () => {
    clock += 10_000; // a full bucket again
    const pipeline = client.pipeline();
    for (let i = 0; i < 8; i++) pipeline.incr('test:throttle:b');
    expect(await pipeline.exec()).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    // 10 - 8 = 2 left: two commands run at once, the third finds the bucket empty but not below.
    expect(await client.incr('test:throttle:b')).toBe(9);
    expect(await client.incr('test:throttle:b')).toBe(10);
    expect(await client.incr('test:throttle:b')).toBe(11); // admitted at 0, leaves -1
    const held = client.incr('test:throttle:b');
    expect(await stillWaiting(held)).toBe(true);
    clock += 10;
    expect(await held).toBe(12);
  });

  it('takes an integer of at least 1, and nothing when unset', () => {
    expect(maxCommandsFromEnv({})).toBeUndefined();
    expect(maxCommandsFromEnv({ GROUPQ_BRIDGE_MAX_COMMANDS_PER_S: '10000' })).toBe(10_000);
    for (const bad of ['0', '-5', '1.5', 'many']) {
      expect(() => maxCommandsFromEnv({ GROUPQ_BRIDGE_MAX_COMMANDS_PER_S: bad })).toThrow(/GROUPQ_BRIDGE_MAX_COMMANDS_PER_S must be an integer/);
    }
  });
});
