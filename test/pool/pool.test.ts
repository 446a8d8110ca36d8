// A pool of three databases (docs/scaling-out.md): three redis-servers, each behind its own REST
// bridge, and the Worker with the first as UPSTASH_REDIS_REST_* and the others in
// GROUPQ_REDIS_POOL. Each queue lives on the database rendezvous hashing chose when it was created
// (its keys there and nowhere else, the choice recorded on database 0), and works there: jobs
// delivered and completed, delayed ones by the cron, which reads each database's due index. A
// queue from before the pool stays on database 0. When one database is killed (SIGKILL), the
// queues on the others keep enqueueing and delivering, those on it answer 503 REDIS_UNAVAILABLE,
// and once it is back from its append-only file nothing it had accepted is lost (GET /metrics
// meanwhile answers the queues it reaches); the same holds
// for the partitions of one queue spread over the three.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { placePartitions, rendezvous } from '../../src/core/store/pool';
import { fnv1a32, partitionOf } from '../../src/core/store/partitions';
import { type Endpoint, startEndpoint } from '../helpers/endpoint';
import { type Database, nameOn, startDatabase } from '../helpers/pool';
import { type RunningWorker, startWorker } from '../helpers/worker';

vi.setConfig({ testTimeout: 120_000 });


const poolBindings = (databases: Database[]) => ({
  GROUPQ_REDIS_POOL: JSON.stringify(databases.slice(1).map(({ url, token }) => ({ url, token }))),
});


let dir: string;
let databases: Database[];
let endpoint: Endpoint;
let worker: RunningWorker;

const stackOf = (first: Database) => ({ restUrl: first.url, restToken: first.token, redisPort: first.port, close: async () => {} });

async function putQueue(name: string, config: Record<string, unknown> = {}) {
  const res = await worker.api(`/v1/queues/${name}`, { method: 'PUT', json: { endpoint: endpoint.url, keepCompleted: 1000, ...config } });
  expect(res.status, await res.clone().text()).toBe(200);
}

async function enqueue(queue: string, job: Record<string, unknown>) {
  return worker.api(`/v1/queues/${queue}/jobs`, { method: 'POST', json: job });
}

async function completed(queue: string, id: string, { cron = false } = {}) {
  for (let i = 0; i < 400; i++) {
    const res = await worker.api(`/v1/queues/${queue}/jobs/${id}`);
    if (res.status === 200 && ((await res.json()) as { state: string }).state === 'completed') return true;
    if (cron) await worker.scheduled().catch(() => {});
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return false;
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'groupq-pool-'));
  databases = [];
  for (let i = 0; i < 3; i++) databases.push(await startDatabase(path.join(dir, `db${i}`)));
  endpoint = await startEndpoint(() => ({ status: 200 }));
});

afterAll(async () => {
  await worker?.dispose();
  await endpoint?.close();
  for (const database of databases ?? []) await database.close();
  await rm(dir, { recursive: true, force: true });
});

describe('placement by rendezvous hashing, as docs/scaling-out.md states it', () => {
  it("hashes with 32-bit FNV-1a of the UTF-8 bytes (the published test vectors)", () => {
    expect(fnv1a32('')).toBe(0x811c9dc5);
    expect(fnv1a32('a')).toBe(0xe40c292c);
    expect(fnv1a32('foobar')).toBe(0xbf9cf968);
  });

  it('puts a queue on the database d with the highest fnv1a32("<d>:<queue>"); a database added draws only queues to itself', () => {
    const names = Array.from({ length: 3000 }, (_, i) => `queue-${i}`);
    for (const name of names.slice(0, 50)) {
      const scores = [0, 1, 2].map((d) => fnv1a32(`${d}:${name}`));
      expect(rendezvous(name, 3)).toBe(scores.indexOf(Math.max(...scores)));
    }
    const spread = [0, 0, 0];
    for (const name of names) spread[rendezvous(name, 3)]!++;
    for (const count of spread) expect(count).toBeGreaterThan(900); // about a third each
    for (const name of names) {
      const after = rendezvous(name, 4);
      expect([rendezvous(name, 3), 3]).toContain(after);
    }
  });
});

describe('GROUPQ_REDIS_POOL', () => {
  it('that does not parse is a 500 INTERNAL naming it, its tokens never shown', async () => {
    for (const [value, why] of [
      ['{"url":', 'expected JSON'],
      ['[{"url":"not a url","token":"pool-secret-token"}]', 'Invalid URL'],
      ['[{"url":"https://db.example","token":"pool-secret-token","extra":1}]', 'Unrecognized key'],
    ] as const) {
      const misconfigured = await startWorker(stackOf(databases[0]!), { GROUPQ_REDIS_POOL: value });
      try {
        const res = await misconfigured.api('/health');
        expect(res.status).toBe(500);
        const text = await res.text();
        expect(text).toContain('invalid or missing bindings: GROUPQ_REDIS_POOL');
        expect(text).toContain(why);
        expect(text).not.toContain('pool-secret-token');
      } finally {
        await misconfigured.dispose();
      }
    }
  });
});

describe('a pool of three databases', () => {
  it('a queue from before the pool stays on database 0, and keeps working once the pool grew', async () => {
    const legacy = nameOn('legacy', 2);
    worker = await startWorker(stackOf(databases[0]!)); // one database: no placement is recorded
    await putQueue(legacy);
    await worker.dispose();

    worker = await startWorker(stackOf(databases[0]!), poolBindings(databases));
    expect((await enqueue(legacy, { id: 'before-pool', group: 'g' })).status).toBe(201);
    expect(await completed(legacy, 'before-pool')).toBe(true);
    await putQueue(legacy, { keepCompleted: 500 }); // a change records its placement: database 0
    expect(await databases[0]!.hget('gq:placement', legacy)).toBe('0');
    expect(await databases[0]!.has(`gq:{${legacy}}:meta`)).toBe(true);
    expect(await databases[2]!.has(`gq:{${legacy}}:meta`)).toBe(false);
  });

  it('places each new queue by rendezvous hashing, records it, and runs it there', async () => {
    const names = [0, 1, 2].flatMap((database) => [nameOn(`q${database}a-`, database), nameOn(`q${database}b-`, database)]);
    for (const name of names) await putQueue(name);
    for (const name of names) {
      const database = rendezvous(name, 3);
      expect(await databases[0]!.hget('gq:placement', name)).toBe(String(database));
      for (let other = 0; other < 3; other++) expect(await databases[other]!.has(`gq:{${name}}:meta`)).toBe(other === database);
      expect((await enqueue(name, { id: 'now', group: 'g' })).status).toBe(201);
    }
    for (const name of names) expect(await completed(name, 'now')).toBe(true);
    const list = (await (await worker.api('/v1/queues')).json()) as { queues: { name: string }[] };
    expect(list.queues.map((queue) => queue.name)).toEqual(expect.arrayContaining(names));
  });

  it('a queue placed on a database the pool lost answers 500 INTERNAL naming it', async () => {
    const name = nameOn('lost-', 2);
    await putQueue(name);
    const shrunk = await startWorker(stackOf(databases[0]!), poolBindings(databases.slice(0, 2)));
    try {
      const res = await shrunk.api(`/v1/queues/${name}`);
      expect(res.status).toBe(500);
      expect(((await res.json()) as { error: { code: string; message: string } }).error).toEqual({
        code: 'INTERNAL',
        message: `queue ${name} is placed on database 2, outside the pool of 2 (GROUPQ_REDIS_POOL lost a database)`,
        requestId: res.headers.get('x-request-id'),
      });
    } finally {
      await shrunk.dispose();
    }
  });

  it("the cron runs each database's due index: delayed jobs on every database are delivered", async () => {
    const names = [0, 1, 2].map((database) => nameOn(`delayed${database}-`, database));
    for (const name of names) {
      await putQueue(name);
      expect((await enqueue(name, { id: 'later', group: 'g', delayMs: 300 })).status).toBe(201);
      expect(await databases[rendezvous(name, 3)]!.has('gq:due')).toBe(true);
    }
    // Only the cron can deliver them: no request to these queues follows.
    for (const name of names) expect(await completed(name, 'later', { cron: true })).toBe(true);
  });

  it('one database killed: queues on the others go on, its own answer 503; back from its AOF, nothing is lost', async () => {
    const down = nameOn('down-', 1);
    const up = [nameOn('up-', 0), nameOn('up-', 2)];
    for (const name of [down, ...up]) await putQueue(name);
    // Accepted before the kill, never delivered: the queue is paused.
    expect((await worker.api(`/v1/queues/${down}/pause`, { method: 'POST' })).status).toBe(200);
    for (let i = 0; i < 20; i++) expect((await enqueue(down, { id: `kept-${i}`, group: `g${i % 4}` })).status).toBe(201);

    expect(await (await worker.api('/health')).json()).toEqual({ ok: true, redis: 'ok', databases: ['ok', 'ok', 'ok'] });
    await databases[1]!.kill();
    const health = await worker.api('/health');
    expect(health.status).toBe(503);
    expect(await health.json()).toEqual({ ok: false, redis: 'ok', databases: ['ok', 'down', 'ok'] });
    const refused = await enqueue(down, { id: 'while-down', group: 'g' });
    expect(refused.status).toBe(503);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('REDIS_UNAVAILABLE');
    for (const name of up) {
      expect((await enqueue(name, { id: 'during', group: 'g' })).status).toBe(201);
      expect((await enqueue(name, { id: 'during-delayed', group: 'g', delayMs: 200 })).status).toBe(201);
    }
    // GET /metrics answers with the queues it reaches (25 a scrape, the file has more queues);
    // the dead database's are left out.
    let text = '';
    for (let i = 0; i < 5 && !up.every((name) => text.includes(`queue="${name}"`)); i++) {
      const scraped = await worker.api('/metrics');
      expect(scraped.status).toBe(200);
      text = await scraped.text();
    }
    for (const name of up) expect(text).toContain(`groupq_jobs_added_total{queue="${name}",partition="0"} 2`);
    expect(text).not.toContain(`queue="${down}"`);
    // A cron run reads the due index of each database it can reach, and ends well.
    await expect(worker.scheduled()).resolves.toBeUndefined();
    for (const name of up) {
      expect(await completed(name, 'during')).toBe(true);
      expect(await completed(name, 'during-delayed', { cron: true })).toBe(true);
    }

    await databases[1]!.restart();
    expect((await worker.api(`/v1/queues/${down}/resume`, { method: 'POST' })).status).toBe(200);
    for (let i = 0; i < 20; i++) expect(await completed(down, `kept-${i}`, { cron: true })).toBe(true);
    expect(await (await worker.api('/metrics')).text()).toContain(`groupq_jobs_completed_total{queue="${down}",partition="0"} 20`);
    const delivered = endpoint.received.filter((r) => r.job.queue === down).map((r) => r.job.id);
    expect(new Set(delivered)).toEqual(new Set(Array.from({ length: 20 }, (_, i) => `kept-${i}`)));
  });

  it('a partitioned queue with one database killed: its other partitions go on under load, the dead one answers 503; nothing is lost', async () => {
    // A queue of 3 partitions, one on each database; its root (its config) not on the one killed.
    let name = '';
    for (let i = 0; !name; i++) if (rendezvous(`split-${i}`, 3) !== 1) name = `split-${i}`;
    await putQueue(name, { partitions: 3, concurrency: 6 });
    const homes = placePartitions(name, 3, 3);
    const groupsOf = (p: number) => Array.from({ length: 40 }, (_, g) => `g${g}`).filter((g) => partitionOf(g, 3) === p).slice(0, 3);
    const deadGroups = groupsOf(homes.indexOf(1));
    const liveGroups = [0, 1, 2].filter((p) => homes[p] !== 1).flatMap(groupsOf);
    // Accepted before the kill, held until after it: their groups are paused.
    for (const group of deadGroups) expect((await worker.api(`/v1/queues/${name}/groups/${group}/pause`, { method: 'POST' })).status).toBe(200);
    for (let i = 0; i < 12; i++) expect((await enqueue(name, { id: `kept-${i}`, group: deadGroups[i % deadGroups.length] })).status).toBe(201);

    await databases[1]!.kill();
    const refused = await enqueue(name, { id: 'while-down', group: deadGroups[0] });
    expect(refused.status).toBe(503);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('REDIS_UNAVAILABLE');
    // Under load: producers keep enqueueing to the groups of the live partitions.
    const ids = Array.from({ length: 60 }, (_, i) => `live-${i}`);
    await Promise.all([0, 1, 2].map(async (k) => {
      for (let i = k; i < ids.length; i += 3) expect((await enqueue(name, { id: ids[i], group: liveGroups[i % liveGroups.length] })).status).toBe(201);
    }));
    for (const id of ids) expect(await completed(name, id, { cron: true })).toBe(true);

    await databases[1]!.restart();
    for (const group of deadGroups) expect((await worker.api(`/v1/queues/${name}/groups/${group}/resume`, { method: 'POST' })).status).toBe(200);
    for (let i = 0; i < 12; i++) expect(await completed(name, `kept-${i}`, { cron: true })).toBe(true);
    const delivered = new Set(endpoint.received.filter((r) => r.job.queue === name).map((r) => r.job.id));
    expect(delivered).toEqual(new Set([...ids, ...Array.from({ length: 12 }, (_, i) => `kept-${i}`)]));
  });
});
