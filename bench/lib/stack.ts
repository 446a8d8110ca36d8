// The benchmark's private stack: a fresh redis-server (AOF on, as local production-like use) in a
// temporary directory, the Upstash REST bridge in front of it, and a raw admin connection for
// INFO/CONFIG. Nothing here is shared with the test suite or `npm run dev`.
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { freePort, startRedis } from '../../scripts/redis-server.mjs';
import { createRespClient, type RespClient } from '../../scripts/resp.mjs';
import { startBridge } from '../../scripts/rest-bridge.mjs';
import { createEngine, type Engine } from '../../src/core/engine';
import { createRedis } from '../../src/core/store/redis';
import { sourceOf } from '../../src/core/store/scripts';
import { scripts } from '../../src/lua/scripts.generated';

export interface BenchStack {
  admin: RespClient;
  redisPort: number;
  /**
   * A new engine with its own production @upstash/redis client (its own REST connection pool use);
   * `now` replaces its clock (a run that must see a window pass without waiting for it).
   */
  engine(now?: () => number): Engine;
  /** Stops the bridge and Redis and removes the data directory; safe to call twice. */
  close(): Promise<void>;
}

export async function startBenchStack(log: (line: string) => void): Promise<BenchStack> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'groupq-bench-'));
  const token = randomBytes(24).toString('hex');
  let redis: Awaited<ReturnType<typeof startRedis>> | undefined;
  let bridge: Awaited<ReturnType<typeof startBridge>> | undefined;
  let admin: RespClient | undefined;
  let closed = false;

  async function close() {
    if (closed) return;
    closed = true;
    admin?.close();
    await bridge?.close();
    await redis?.stop();
    await rm(dir, { recursive: true, force: true });
  }

  try {
    redis = await startRedis({ port: await freePort(), dir, appendonly: true });
    bridge = await startBridge({ port: 0, redisPort: redis.port, token });
    admin = createRespClient({ port: redis.port });
    log(`redis-server on 127.0.0.1:${redis.port} (data in ${dir}), REST bridge at ${bridge.url}`);
    // Load every script up front so no measured window pays a NOSCRIPT miss and EVAL fallback
    // (through the bridge, which takes Upstash's allow-key-locking flag as Upstash does).
    const loader = createRedis({ url: bridge.url, token });
    for (const script of Object.values(scripts)) {
      const sha = await loader.scriptLoad(sourceOf(script, true));
      if (sha !== script.sha1) throw new Error(`script ${script.name}: SCRIPT LOAD gave ${sha}, bundle says ${script.sha1}`);
    }
  } catch (error) {
    await close();
    throw error;
  }

  const url = bridge.url;
  return {
    admin,
    redisPort: redis.port,
    engine: (now = Date.now) => createEngine({ redis: createRedis({ url, token }), now, allowHttpLoopback: true }),
    close,
  };
}
