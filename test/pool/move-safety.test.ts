// Moves that are safe against themselves (docs/scaling-out.md#one-move-at-a-time): a Worker on
// three redis-servers and, beside it, engines in this process standing for other isolates (one
// of them the mover a test stops at a step of its move, as a Worker dying there would). A second
// move of a partition under way answers 409 MOVE_IN_PROGRESS while producers enqueue and the
// Worker delivers, and nothing is lost; the copy matches the original key for key, each group's
// zset included. A move cut off right after the placement switch finishes when the same call is
// made again; one cut off after the new copy is live lets isolates that knew the old placement
// follow at once, holds the partition until its lease runs out, and is then taken over and
// finished. A partition of large jobs moves in pages bounded by bytes: in one page, its 12 MiB
// would pass the 10 MiB a request to the database may carry (scripts/rest-bridge.mjs).
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createRespClient } from '../../scripts/resp.mjs';
import { createEngine } from '../../src/core/engine';
import { MOVE_LEASE_MS } from '../../src/core/engine/move-lease';
import { partitionOf } from '../../src/core/store/partitions';
import { Placements, poolRunner } from '../../src/core/store/pool';
import { createRedis } from '../../src/core/store/redis';
import { type Endpoint, startEndpoint } from '../helpers/endpoint';
import { type Database, startPoolWorker } from '../helpers/pool';
import { ADMIN_TOKEN, type RunningWorker } from '../helpers/worker';
import { GroupqClient } from '../../src/client';

vi.setConfig({ testTimeout: 120_000 });

let pool: Awaited<ReturnType<typeof startPoolWorker>>;
let databases: Database[];
let endpoint: Endpoint;
let worker: RunningWorker;
/** Ids the endpoint completed (a job delivered again after a lease ran out counts once). */
const done = new Set<string>();

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

beforeAll(async () => {
  pool = await startPoolWorker();
  ({ databases, worker } = pool);
  endpoint = await startEndpoint(async ({ job }) => {
    await sleep(1 + Math.floor(Math.random() * 4));
    done.add(`${job.queue}/${job.id}`);
    return { status: 200 };
  });
});

afterAll(async () => {
  await pool?.close();
  await endpoint?.close();
});

/** Another isolate: an engine in this process over the same databases, with its own placements. */
function isolate(now: () => number = Date.now) {
  return createEngine({ redis: poolRunner(databases.map(({ url, token }) => createRedis({ url, token })), new Placements(3), false), allowHttpLoopback: true, now });
}

async function putQueue(name: string, config: Record<string, unknown> = {}) {
  const res = await worker.api(`/v1/queues/${name}`, { method: 'PUT', json: { endpoint: endpoint.url, keepCompleted: 10_000, ...config } });
  expect(res.status, await res.clone().text()).toBe(200);
}

type Answer = { error?: { code: string; details?: { database?: number } } } & Record<string, unknown>;

async function post(route: string, json: unknown = {}): Promise<{ status: number; body: Answer }> {
  const res = await worker.api(route, { method: 'POST', json });
  return { status: res.status, body: (await res.json()) as Answer };
}

/** A call the API may answer 503 while a partition moves: tried again after a moment. */
async function until2xx(route: string, json: unknown): Promise<void> {
  for (;;) {
    const { status, body } = await post(route, json);
    if (status < 300) return;
    expect(status, JSON.stringify(body)).toBe(503);
    expect(body.error?.code).toBe('PARTITION_MOVING');
    await sleep(50);
  }
}

const databaseOf = async (tag: string) => Number((await databases[0]!.hget('gq:placement', tag)) ?? 0);

/** What `database` holds of partition `tag`: each key but the transient strings, its entries in a canonical order. */
async function dump(database: Database, tag: string): Promise<Record<string, unknown>> {
  const client = createRespClient({ port: database.port });
  // Replies come raw (bulk strings as Buffers): made text here, as nested as they come.
  const text = (reply: unknown): unknown => (Array.isArray(reply) ? reply.map(text) : reply === null ? null : String(reply));
  const redis = { call: async (args: string[]) => text(await client.call(args)) };
  try {
    const keys: string[] = [];
    let cursor = '0';
    do {
      const [next, batch] = (await redis.call(['SCAN', cursor, 'MATCH', `gq:{${tag}}:*`, 'COUNT', '1000'])) as [string, string[]];
      keys.push(...batch);
      cursor = next;
    } while (cursor !== '0');
    const out: Record<string, unknown> = {};
    for (const key of keys.sort()) {
      const type = String(await redis.call(['TYPE', key]));
      if (type === 'hash') {
        const flat = (await redis.call(['HGETALL', key])) as string[];
        out[key] = Object.fromEntries(Array.from({ length: flat.length / 2 }, (_, i) => [flat[2 * i], flat[2 * i + 1]]).sort(([a], [b]) => (a! < b! ? -1 : 1)));
      } else if (type === 'zset') {
        out[key] = await redis.call(['ZRANGE', key, '0', '-1', 'WITHSCORES']);
      } else if (type === 'set') {
        out[key] = ((await redis.call(['SMEMBERS', key])) as string[]).sort();
      }
    }
    return out;
  } finally {
    client.close();
  }
}

/** Waits until every one of `ids` of `queue` has completed, firing the cron meanwhile. */
async function allDone(queue: string, ids: string[]): Promise<void> {
  for (let i = 0; i < 1200 && !ids.every((id) => done.has(`${queue}/${id}`)); i++) {
    if (i % 5 === 0) await worker.scheduled().catch(() => {});
    await sleep(50);
  }
  expect(ids.filter((id) => !done.has(`${queue}/${id}`))).toEqual([]);
}

/** The old database keeps of a partition moved away only its meta, saying where it went. */
async function expectOnlyStub(database: Database, tag: string, at: number): Promise<void> {
  expect(Object.keys(await dump(database, tag))).toEqual([`gq:{${tag}}:meta`]);
  expect(await database.hget(`gq:{${tag}}:meta`, 'move')).toBe(`at ${at}`);
  expect(await database.hget(`gq:{${tag}}:meta`, 'config')).toBeNull();
}

describe('one move of a partition at a time', () => {
  it('under load, a second move while one is under way answers 409 MOVE_IN_PROGRESS; nothing is lost, the copy matches key for key', async () => {
    const queue = 'twice';
    const GROUPS = 12;
    const PER_GROUP = 40;
    await putQueue(queue, { partitions: 2, concurrency: 4, timeoutMs: 2000 });
    const ids: string[] = [];
    let producing = true;
    const producer = (async () => {
      for (let n = 0; n < PER_GROUP; n += 4) {
        const jobs = Array.from({ length: GROUPS }, (_, g) => [0, 1, 2, 3].map((k) => ({ id: `g${g}-${n + k}`, group: `g${g}`, data: { n: n + k } }))).flat();
        await until2xx(`/v1/queues/${queue}/jobs/batch`, { jobs });
        ids.push(...jobs.map((job) => job.id));
        await sleep(15);
      }
      producing = false;
    })();
    const cron = (async () => {
      while (producing) {
        await worker.scheduled().catch(() => {});
        await sleep(200);
      }
    })();
    while (done.size < 50) await sleep(20);

    // A group of partition 0 paused: its zset is sure to hold jobs while the partition moves.
    const held = Array.from({ length: GROUPS }, (_, g) => `g${g}`).find((group) => partitionOf(group, 2) === 0)!;
    expect((await post(`/v1/queues/${queue}/groups/${held}/pause`)).status).toBe(200);
    const tag = `${queue}:0`;
    const from = await databaseOf(tag);
    const to = (from + 1) % 3;
    const seconds: { status: number; code?: string; database?: number }[] = [];
    let copies: [Record<string, unknown>, Record<string, unknown>] | null = null;
    const moved = await isolate().movePartition(queue, '0', { database: to }, {
      afterStep: async (step) => {
        if (step !== 'copy') return;
        // Both copies are fenced here: nothing changes them while they are compared.
        copies = [await dump(databases[from]!, tag), await dump(databases[to]!, tag)];
        // Two more moves of the same partition, to the same database and to another, at once.
        const answers = await Promise.all([to, 3 - from - to].map((database) => post(`/v1/queues/${queue}/partitions/0/move`, { database })));
        for (const { status, body } of answers) seconds.push({ status, code: body.error?.code, database: body.error?.details?.database });
      },
    });
    expect(moved).toMatchObject({ partition: 0, database: to });
    // Each names where the move under way goes.
    expect(seconds).toEqual([
      { status: 409, code: 'MOVE_IN_PROGRESS', database: to },
      { status: 409, code: 'MOVE_IN_PROGRESS', database: to },
    ]);
    const [original, copy] = copies!;
    expect(original[`gq:{${tag}}:g:${held}`]).toBeDefined();
    expect(copy).toEqual(original);
    expect((await post(`/v1/queues/${queue}/groups/${held}/resume`)).status).toBe(200);

    // Two moves back, sent at once: one moves it (the other 409, or 200 once the first is done).
    const both = await Promise.all([0, 1].map(() => post(`/v1/queues/${queue}/partitions/0/move`, { database: from })));
    for (const { status, body } of both) {
      if (status === 200) expect(body).toMatchObject({ partition: 0, database: from });
      else expect({ status, code: body.error?.code }).toEqual({ status: 409, code: 'MOVE_IN_PROGRESS' });
    }
    expect(both.some(({ status }) => status === 200)).toBe(true);
    await producer;
    await cron;

    await allDone(queue, ids);
    expect(ids).toHaveLength(GROUPS * PER_GROUP);
    expect(await databaseOf(tag)).toBe(from);
    await expectOnlyStub(databases[to]!, tag, from);
    const info = (await (await worker.api(`/v1/queues/${queue}`)).json()) as { counts: Record<string, number> };
    expect(info.counts).toMatchObject({ waiting: 0, active: 0, delayed: 0, completed: GROUPS * PER_GROUP, failed: 0 });
    // No group is left with jobs, in meta or in a zset, on any database; no move holds a lease.
    for (const database of databases) {
      for (const p of [0, 1]) {
        const keys = Object.keys(await dump(database, `${queue}:${p}`));
        expect(keys.filter((key) => key.includes('}:g:'))).toEqual([]);
      }
    }
    expect(await databases[0]!.hget('gq:moves', tag)).toBeNull();
  });
});

describe('the client', () => {
  it('follows a move of the same partition to the same database until it ends; one to another database is MOVE_IN_PROGRESS', async () => {
    const queue = 'followed';
    await putQueue(queue, { partitions: 2, concurrency: 4 });
    const tag = `${queue}:0`;
    const from = await databaseOf(tag);
    const [target, elsewhere] = [0, 1, 2].filter((d) => d !== from) as [number, number];
    // Another caller's move to `target` holds the partition's lease (move-lock.lua's field).
    const control = createRedis({ url: databases[0]!.url, token: databases[0]!.token });
    await control.hset('gq:moves', { [tag]: `other-mover ${Date.now() + 60_000} ${target}` });
    const client = new GroupqClient({ url: worker.url, token: ADMIN_TOKEN }).queue(queue);

    await expect(client.movePartition(0, elsewhere)).rejects.toMatchObject({ code: 'MOVE_IN_PROGRESS', details: { database: target } });
    let settled = false;
    const followed = client.movePartition(0, target).finally(() => (settled = true));
    await sleep(3000);
    expect(settled).toBe(false); // still following: the other move has not ended
    // The other move ends (its lease goes) without having moved anything: the call made again moves it.
    await control.hdel('gq:moves', tag);
    expect(await followed).toMatchObject({ partition: 0, database: target });
    expect(await databaseOf(tag)).toBe(target);
  });
});

describe('a move cut off', () => {
  it('right after the placement switch: the same call made again finishes it and leaves no old copy', async () => {
    const queue = 'cut-switch';
    await putQueue(queue);
    expect((await post(`/v1/queues/${queue}/pause`)).status).toBe(200);
    const ids = Array.from({ length: 300 }, (_, i) => `j${i}`);
    const jobs = ids.map((id, i) => ({ id, group: `g${i % 10}`, data: { i } }));
    expect((await post(`/v1/queues/${queue}/jobs/batch`, { jobs })).status).toBe(201);
    const from = await databaseOf(queue);
    const to = (from + 2) % 3;
    const before = await dump(databases[from]!, queue);
    const other = isolate();
    expect((await other.getQueue(queue)).counts.waiting).toBe(300);

    await expect(
      isolate().movePartition(queue, '0', { database: to }, {
        afterStep: (step) => {
          if (step === 'switch') throw new Error('cut off');
        },
      }),
    ).rejects.toThrow('cut off');
    expect(await databaseOf(queue)).toBe(to);
    // Both copies are fenced: calls wait (503) until the move is finished.
    await expect(other.enqueue(queue, { id: 'late', group: 'g0' })).rejects.toMatchObject({ code: 'PARTITION_MOVING' });

    const again = await post(`/v1/queues/${queue}/partitions/0/move`, { database: to });
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    expect(again.body).toMatchObject({ partition: 0, database: to, counts: { waiting: 300 } });
    await expectOnlyStub(databases[from]!, queue, to);
    const after = await dump(databases[to]!, queue);
    const meta = `gq:{${queue}}:meta`;
    expect({ ...after, [meta]: null }).toEqual({ ...before, [meta]: null });
    expect((after[meta] as Record<string, string>).move).toBeUndefined();

    // The isolate that knew the old placement writes to the new one; every job runs.
    await other.enqueue(queue, { id: 'late', group: 'g0' });
    expect(await databases[to]!.has(`gq:{${queue}}:jobs`)).toBe(true);
    expect((await post(`/v1/queues/${queue}/resume`)).status).toBe(200);
    await allDone(queue, [...ids, 'late']);
  });

  it('after the new copy is live: isolates that knew the old placement follow at once; the lease holds off another move until it runs out, then the same call finishes it', async () => {
    const queue = 'cut-live';
    await putQueue(queue);
    expect((await post(`/v1/queues/${queue}/pause`)).status).toBe(200);
    const ids = Array.from({ length: 100 }, (_, i) => `j${i}`);
    expect((await post(`/v1/queues/${queue}/jobs/batch`, { jobs: ids.map((id, i) => ({ id, group: `g${i % 5}` })) })).status).toBe(201);
    const from = await databaseOf(queue);
    const to = (from + 1) % 3;
    const other = isolate();
    expect((await other.getQueue(queue)).counts.waiting).toBe(100);

    // The mover stops after unfencing the new copy, as if its Worker had died there; its clock
    // is ours until it is let go.
    let skew = 0;
    let resume!: () => void;
    const stopped = new Promise<void>((resolve) => (resume = resolve));
    let reached!: () => void;
    const atStop = new Promise<void>((resolve) => (reached = resolve));
    const first = isolate(() => Date.now() + skew).movePartition(queue, '0', { database: to }, {
      afterStep: async (step) => {
        if (step !== 'unfence') return;
        reached();
        await stopped;
      },
    });
    await atStop;

    // The old copy is still there, fenced; an isolate that knew it reads the record and follows.
    expect(await databases[from]!.has(`gq:{${queue}}:jobs`)).toBe(true);
    await other.enqueue(queue, { id: 'followed', group: 'g0' });
    expect(await databases[to]!.hget(`gq:{${queue}}:jobs`, 'followed')).not.toBeNull();
    expect(await databases[from]!.hget(`gq:{${queue}}:jobs`, 'followed')).toBeNull();

    // Its lease has not run out: another move is refused.
    const refused = await post(`/v1/queues/${queue}/partitions/0/move`, { database: to });
    expect({ status: refused.status, code: refused.body.error?.code }).toEqual({ status: 409, code: 'MOVE_IN_PROGRESS' });
    // Once it has run out, the same call takes the lease over and finishes the move.
    const later = await isolate(() => Date.now() + MOVE_LEASE_MS + 1000).movePartition(queue, '0', { database: to });
    expect(later).toMatchObject({ partition: 0, database: to, counts: { waiting: 101 } });
    await expectOnlyStub(databases[from]!, queue, to);

    // The first mover, let go past its lease, finds it taken over and writes nothing more.
    skew = 10 * MOVE_LEASE_MS;
    resume();
    await expect(first).rejects.toMatchObject({ code: 'MOVE_IN_PROGRESS' });
    expect(await databases[to]!.hget(`gq:{${queue}}:meta`, 'move')).toBeNull();
    expect((await post(`/v1/queues/${queue}/resume`)).status).toBe(200);
    await allDone(queue, [...ids, 'followed']);
  });
});

describe('pages bounded by bytes', () => {
  it('a partition of 48 jobs of 250 KiB (12 MiB) moves, each job whole', async () => {
    const queue = 'large';
    await putQueue(queue);
    expect((await post(`/v1/queues/${queue}/pause`)).status).toBe(200);
    const payload = (i: number) => `${i}:`.padEnd(250 * 1024, String.fromCharCode(97 + (i % 26)));
    for (let b = 0; b < 6; b++) {
      const jobs = Array.from({ length: 8 }, (_, k) => ({ id: `big-${b * 8 + k}`, group: `g${k % 3}`, data: payload(b * 8 + k) }));
      expect((await post(`/v1/queues/${queue}/jobs/batch`, { jobs })).status).toBe(201);
    }
    const from = await databaseOf(queue);
    const to = (from + 1) % 3;
    const before = await dump(databases[from]!, queue);
    const res = await post(`/v1/queues/${queue}/partitions/0/move`, { database: to });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ database: to, counts: { waiting: 48 } });
    await expectOnlyStub(databases[from]!, queue, to);
    const after = await dump(databases[to]!, queue);
    const jobsKey = `gq:{${queue}}:jobs`;
    expect(after[jobsKey]).toEqual(before[jobsKey]);
    for (const i of [0, 17, 47]) {
      const job = (await (await worker.api(`/v1/queues/${queue}/jobs/big-${i}`)).json()) as { data: string };
      expect(job.data).toBe(payload(i));
    }
  });
});
