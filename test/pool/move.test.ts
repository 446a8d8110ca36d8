// Moving partitions between the databases of a pool while the queue runs
// (docs/scaling-out.md#moving-a-partition): a Worker on three redis-servers, a queue of 4
// partitions taking jobs from producers and delivering them to a loopback endpoint, and every
// partition moved to another database half way. Nothing is lost, each group's jobs run one at a
// time in their order, the queue's concurrency holds, and afterwards each partition's keys are on
// its new database only. An engine that learned the old placements (another isolate) is told,
// and writes where the partitions are now.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngine } from '../../src/core/engine';
import { Placements, poolRunner } from '../../src/core/store/pool';
import { createRedis } from '../../src/core/store/redis';
import { type Endpoint, startEndpoint } from '../helpers/endpoint';
import { type Database, startDatabase } from '../helpers/pool';
import { type RunningWorker, startWorker } from '../helpers/worker';

const QUEUE = 'moving';
const PARTITIONS = 4;
const CONCURRENCY = 8;
const GROUPS = 24;
const PER_GROUP = 50;
const JOBS = GROUPS * PER_GROUP;

let dir: string;
let databases: Database[];
let endpoint: Endpoint;
let worker: RunningWorker;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'groupq-move-'));
  databases = [];
  for (let i = 0; i < 3; i++) databases.push(await startDatabase(path.join(dir, `db${i}`)));
  endpoint = await startEndpoint();
  const pool = databases.slice(1).map(({ url, token }) => ({ url, token }));
  worker = await startWorker({ restUrl: databases[0]!.url, restToken: databases[0]!.token, redisPort: databases[0]!.port, close: async () => {} }, {
    GROUPQ_REDIS_POOL: JSON.stringify(pool),
  });
});

afterAll(async () => {
  await worker?.dispose();
  await endpoint?.close();
  for (const database of databases ?? []) await database.close();
  await rm(dir, { recursive: true, force: true });
});

/** A call the API may answer 503 while a partition moves: tried again after its Retry-After. */
async function untilNot503(call: () => Promise<Response>): Promise<Response> {
  for (;;) {
    const res = await call();
    if (res.status !== 503) return res;
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('PARTITION_MOVING');
    expect(res.headers.get('retry-after')).toBe('1');
    await sleep(100);
  }
}

interface Partition {
  partition: number;
  database: number;
  counts: { completed: number };
}

async function partitions(): Promise<Partition[]> {
  return ((await (await worker.api(`/v1/queues/${QUEUE}/partitions`)).json()) as { partitions: Partition[] }).partitions;
}

describe('moving partitions while the queue runs', () => {
  it(`moves all ${PARTITIONS} partitions under load: nothing lost, groups in order and one at a time, concurrency held`, async () => {
    const spans: { id: string; group: string; n: number; start: number; end: number }[] = [];
    let inFlight = 0;
    let maxInFlight = 0;
    endpoint.handle(async ({ job }) => {
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      const start = performance.now();
      await sleep(2 + Math.floor(Math.random() * 6));
      spans.push({ id: job.id, group: job.group, n: (job.data as { n: number }).n, start, end: performance.now() });
      inFlight--;
      return { status: 200 };
    });
    const put = await worker.api(`/v1/queues/${QUEUE}`, {
      method: 'PUT',
      json: { endpoint: endpoint.url, partitions: PARTITIONS, concurrency: CONCURRENCY, keepCompleted: JOBS, timeoutMs: 2000 },
    });
    expect(put.status, await put.clone().text()).toBe(200);

    // Another isolate: it learns where every partition is before the moves.
    const other = createEngine({
      redis: poolRunner(databases.map(({ url, token }) => createRedis({ url, token })), new Placements(3), false),
      allowHttpLoopback: true,
    });
    expect((await other.getQueue(QUEUE)).config.partitions).toBe(PARTITIONS);

    let producing = true;
    const producer = (async () => {
      for (let n = 0; n < PER_GROUP; n += 5) {
        const jobs = Array.from({ length: GROUPS }, (_, g) => [0, 1, 2, 3, 4].map((k) => ({ id: `g${g}-${n + k}`, group: `g${g}`, data: { n: n + k } }))).flat();
        const res = await untilNot503(() => worker.api(`/v1/queues/${QUEUE}/jobs/batch`, { method: 'POST', json: { jobs } }));
        expect(res.status).toBe(201);
        await sleep(20);
      }
      producing = false;
    })();
    const cron = (async () => {
      while (producing || spans.length < JOBS) {
        await worker.scheduled().catch(() => {});
        await sleep(300);
      }
    })();

    while (spans.length < JOBS / 4) await sleep(20);
    const before = await partitions();
    const moves: { partition: number; from: number; to: number }[] = [];
    for (const { partition, database } of before) {
      const to = (database + 1) % 3;
      const res = await worker.api(`/v1/queues/${QUEUE}/partitions/${partition}/move`, { method: 'POST', json: { database: to } });
      expect(res.status, await res.clone().text()).toBe(200);
      expect(await res.json()).toMatchObject({ partition, database: to });
      moves.push({ partition, from: database, to });
    }
    await producer;
    for (let i = 0; i < 600 && new Set(spans.map((s) => s.id)).size < JOBS; i++) await sleep(100);
    producing = false;
    await cron;

    // Nothing lost; each job completed once it was delivered; each group in order, one at a time.
    const done = new Set(spans.map((s) => s.id));
    expect(done.size).toBe(JOBS);
    const after = await partitions();
    expect(after.map((p) => p.database)).toEqual(moves.map((m) => m.to));
    expect(after.reduce((sum, p) => sum + p.counts.completed, 0)).toBe(JOBS);
    for (let g = 0; g < GROUPS; g++) {
      const mine = spans.filter((s) => s.group === `g${g}`).sort((a, b) => a.start - b.start);
      const firsts = mine.filter((s, i) => mine.findIndex((t) => t.id === s.id) === i).map((s) => s.n);
      expect(firsts).toEqual(Array.from({ length: PER_GROUP }, (_, n) => n));
      for (let i = 1; i < mine.length; i++) expect(mine[i]!.start).toBeGreaterThanOrEqual(mine[i - 1]!.end);
    }
    expect(maxInFlight).toBeLessThanOrEqual(CONCURRENCY);

    // Each partition's keys are on its new database; the old one keeps only where it went.
    for (const { partition, from, to } of moves) {
      const tag = `${QUEUE}:${partition}`;
      expect(await databases[to]!.has(`gq:{${tag}}:jobs`)).toBe(true);
      expect(await databases[from]!.has(`gq:{${tag}}:jobs`)).toBe(false);
      expect(await databases[from]!.hget(`gq:{${tag}}:meta`, 'move')).toBe(`at ${to}`);
      expect(await databases[from]!.hget(`gq:{${tag}}:meta`, 'config')).toBeNull();
    }

    // The other isolate still believed the old placements: told, it writes where they are now.
    await other.enqueueBatch(QUEUE, Array.from({ length: GROUPS }, (_, g) => ({ id: `late-${g}`, group: `g${g}`, data: { n: PER_GROUP } })));
    for (const { partition, from, to } of moves) {
      const tag = `${QUEUE}:${partition}`;
      expect(await databases[from]!.has(`gq:{${tag}}:jobs`)).toBe(false);
      expect(await databases[to]!.has(`gq:{${tag}}:jobs`)).toBe(true);
    }
    expect((await other.getJob(QUEUE, 'late-0')).group).toBe('g0');
  }, 120_000);

  it('refuses a move to a database the pool lacks, of a partition the queue lacks, and without a body', async () => {
    const put = await worker.api('/v1/queues/small', { method: 'PUT', json: { endpoint: endpoint.url, partitions: 2 } });
    expect(put.status).toBe(200);
    for (const [partition, body] of [[0, { database: 3 }], [2, { database: 1 }], [0, {}]] as const) {
      const res = await worker.api(`/v1/queues/small/partitions/${partition}/move`, { method: 'POST', json: body });
      expect(res.status).toBe(400);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('VALIDATION_FAILED');
    }
    // Moving a partition where it is already changes nothing.
    const [first] = await (async () => ((await (await worker.api('/v1/queues/small/partitions')).json()) as { partitions: Partition[] }).partitions)();
    const res = await worker.api(`/v1/queues/small/partitions/0/move`, { method: 'POST', json: { database: first!.database } });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ partition: 0, database: first!.database });
  });
});
