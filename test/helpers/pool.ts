// Pool tests' parts: databases that can be killed and restarted, and queue names that land where
// a test wants them (rendezvous hashing, src/core/store/pool.ts, decides where a new queue lives).
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { freePort, startRedis } from '../../scripts/redis-server.mjs';
import { createRespClient } from '../../scripts/resp.mjs';
import { startBridge } from '../../scripts/rest-bridge.mjs';
import { rendezvous } from '../../src/core/store/pool';
import { type RunningWorker, startWorker } from './worker';

/** The first `<prefix><n>` that rendezvous hashing puts on `database` of a pool of `size`. */
export function nameOn(prefix: string, database: number, size = 3): string {
  for (let i = 0; ; i++) if (rendezvous(`${prefix}${i}`, size) === database) return `${prefix}${i}`;
}

type RedisServer = Awaited<ReturnType<typeof startRedis>>;

/** One database of the pool: a durable redis-server (restartable on its port) behind a bridge. */
export async function startDatabase(dir: string) {
  const port = await freePort();
  const token = randomBytes(16).toString('hex');
  const start = async () => {
    const server = await startRedis({ port, dir, appendonly: true });
    const admin = createRespClient({ port });
    // Every acknowledged write is on disk before the reply: a SIGKILL loses nothing acked.
    await admin.call(['CONFIG', 'SET', 'appendfsync', 'always']);
    admin.close();
    return server;
  };
  let server: RedisServer = await start();
  const bridge = await startBridge({ port: 0, redisPort: port, token });
  return {
    url: bridge.url,
    token,
    port,
    /** Whether the database holds `key` (a raw EXISTS on its redis-server). */
    async has(key: string): Promise<boolean> {
      const client = createRespClient({ port });
      try {
        return Number(await client.call(['EXISTS', key])) === 1;
      } finally {
        client.close();
      }
    },
    async hget(key: string, field: string): Promise<string | null> {
      const client = createRespClient({ port });
      try {
        const value = await client.call(['HGET', key, field]);
        return value === null ? null : String(value);
      } finally {
        client.close();
      }
    },
    async kill() {
      server.process.kill('SIGKILL');
      await server.exited;
    },
    async restart() {
      server = await start();
    },
    async close() {
      await bridge.close();
      await server.stop();
    },
  };
}
export type Database = Awaited<ReturnType<typeof startDatabase>>;

/** A pool of `count` durable databases in folders of a temporary directory, and a Worker over it (database 0 its UPSTASH_REDIS_REST_* one). */
export async function startPoolWorker(count = 3): Promise<{ databases: Database[]; worker: RunningWorker; close(): Promise<void> }> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'groupq-pool-'));
  const databases: Database[] = [];
  for (let i = 0; i < count; i++) databases.push(await startDatabase(path.join(dir, `db${i}`)));
  const [first] = databases as [Database];
  const worker = await startWorker({ restUrl: first.url, restToken: first.token, redisPort: first.port, close: async () => {} }, {
    GROUPQ_REDIS_POOL: JSON.stringify(databases.slice(1).map(({ url, token }) => ({ url, token }))),
  });
  return {
    databases,
    worker,
    async close() {
      await worker.dispose();
      for (const database of databases) await database.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
