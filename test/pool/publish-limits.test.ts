// A partitioned queue whose partitions live on three databases counts each publish client once,
// on the queue (docs/scaling-out.md#split-limits): its publish windows are at the queue's root,
// on the root's database alone, and many concurrent publishes from one client get exactly
// publishRateLimit.max jobs in, whatever partitions and databases their groups fall in.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { sha256Hex } from '../../src/protocol/ids';
import { rateKey, tokenRateKey } from '../../src/core/store/keys';
import { placePartitions, rendezvous } from '../../src/core/store/pool';
import { type Database, startDatabase } from '../helpers/pool';
import { type RunningWorker, startWorker } from '../helpers/worker';

vi.setConfig({ testTimeout: 120_000 });

const TOKEN = 'pool-publish-token-0001';
let dir: string;
let databases: Database[];
let worker: RunningWorker;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'groupq-pool-publish-'));
  databases = [];
  for (let i = 0; i < 3; i++) databases.push(await startDatabase(path.join(dir, `db${i}`)));
  const [first] = databases;
  const stack = { restUrl: first!.url, restToken: first!.token, redisPort: first!.port, close: async () => {} };
  const pool = JSON.stringify(databases.slice(1).map(({ url, token }) => ({ url, token })));
  worker = await startWorker(stack, { GROUPQ_REDIS_POOL: pool });
});

afterAll(async () => {
  await worker?.dispose();
  for (const database of databases ?? []) await database.close();
  await rm(dir, { recursive: true, force: true });
});

it('8 partitions over 3 databases: 60 concurrent publishes from one client get exactly max in, counted on the root', async () => {
  const queue = `pubpool-${Date.now().toString(36)}`;
  const config = { endpoint: 'http://127.0.0.1:9/jobs', partitions: 8, concurrency: 8, publishTokens: [TOKEN], publishRateLimit: { max: 20, periodMs: 60_000 } };
  const put = await worker.api(`/v1/queues/${queue}`, { method: 'PUT', json: config });
  expect(put.status, await put.clone().text()).toBe(200);
  expect((await worker.api(`/v1/queues/${queue}/pause`, { method: 'POST' })).status).toBe(200);
  // The partitions are spread: more than one database holds some.
  expect(new Set(placePartitions(queue, 8, 3)).size).toBeGreaterThan(1);

  const headers = { authorization: `Bearer ${TOKEN}` };
  const sent = await Promise.all(
    Array.from({ length: 60 }, (_, i) => worker.api(`/v1/queues/${queue}/jobs`, { method: 'POST', json: { group: `g${i}` }, headers })),
  );
  const statuses = sent.map((res) => res.status);
  expect(statuses.filter((status) => status === 201)).toHaveLength(20);
  expect(statuses.filter((status) => status === 429)).toHaveLength(40);
  const counts = (await (await worker.api(`/v1/queues/${queue}`)).json()) as { counts: { waiting: number } };
  expect(counts.counts.waiting).toBe(20);

  // The windows live on the root's database and nowhere else (local development: one client).
  const root = rendezvous(queue, 3);
  for (const [d, database] of databases.entries()) {
    expect(await database.has(rateKey(queue, 'local'))).toBe(d === root);
  }
  expect(await databases[root]!.has(tokenRateKey(queue, await sha256Hex(TOKEN)))).toBe(true);
});
