// What strangers' calls cost a pool of three databases, counted with INFO commandstats on each
// redis-server (script-internal commands included; the cron never runs unless a test fires it):
// - calls to queue names that do not exist (lease callbacks, enqueues): the isolate remembers for
//   a moment that a name has no placement, so calls repeated meanwhile read no placement again,
//   and a queue created meanwhile is found (at once by the isolate that created it);
// - anonymous GET /health: answered from the isolate's last check (a second), never naming a
//   database; the admin token checks now and names each one.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createRespClient } from '../../scripts/resp.mjs';
import { HEALTH_CACHE_MS } from '../../src/handlers/health';
import { UNPLACED_MS } from '../../src/core/store/pool';
import { type Endpoint, startEndpoint } from '../helpers/endpoint';
import { type Database, nameOn, startPoolWorker } from '../helpers/pool';
import type { RunningWorker } from '../helpers/worker';

vi.setConfig({ testTimeout: 120_000 });

let pool: Awaited<ReturnType<typeof startPoolWorker>>;
let databases: Database[];
let endpoint: Endpoint;
let worker: RunningWorker;

beforeAll(async () => {
  pool = await startPoolWorker();
  ({ databases, worker } = pool);
  endpoint = await startEndpoint(() => ({ status: 200 }));
});

afterAll(async () => {
  await pool?.close();
  await endpoint?.close();
});

/** Commands each database has run, by name (INFO's own calls left out: they are the measuring). */
async function commandStats(): Promise<Map<string, number>[]> {
  return Promise.all(
    databases.map(async ({ port }) => {
      const client = createRespClient({ port });
      try {
        const info = String(await client.call(['INFO', 'commandstats']));
        const stats = new Map<string, number>();
        for (const [, name, calls] of info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) if (name !== 'info') stats.set(name!, Number(calls));
        return stats;
      } finally {
        client.close();
      }
    }),
  );
}

const total = (stats: Map<string, number>[]) => stats.reduce((sum, each) => sum + [...each.values()].reduce((a, b) => a + b, 0), 0);

/**
 * What `send` cost: commands by name on each database. Complete once its answers are in: the
 * calls measured here (refusals, /health) leave no work running after their answer, and Redis
 * counts a command before it replies.
 */
async function costOf(send: () => Promise<void>): Promise<Map<string, number>[]> {
  const before = await commandStats();
  await send();
  const after = await commandStats();
  return after.map((stats, i) => new Map([...stats].map(([name, calls]) => [name, calls - (before[i]!.get(name) ?? 0)] as const).filter(([, calls]) => calls > 0)));
}

const post = (route: string, json: unknown, headers: Record<string, string> = {}) => worker.api(route, { method: 'POST', json, headers });

// First in the file: its count of commands holds only while nothing else runs on the databases
// (the next test's queue goes on delivering after it ends).
describe('GET /health, anonymous', () => {
  it('anonymous: ok or not, no database named, from a check a second old at most; a burst costs one check a second', async () => {
    const anonymous = () => fetch(`${worker.url}/health`);
    expect(await (await anonymous()).json()).toEqual({ ok: true, redis: 'ok' });
    const started = Date.now();
    const cost = await costOf(async () => {
      const answers = await Promise.all(Array.from({ length: 40 }, anonymous));
      for (const res of answers) expect(await res.json()).toEqual({ ok: true, redis: 'ok' });
    });
    // One command on each database per check; a check at most every HEALTH_CACHE_MS (the burst
    // may straddle a few windows on a slow machine: their number is bounded by how long it took).
    const windows = Math.ceil((Date.now() - started) / HEALTH_CACHE_MS) + 1;
    for (const stats of cost) expect([...stats.values()].reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(windows);
  });
});

describe('queue names without a placement', () => {
  it('lease callbacks and enqueues to made-up names: repeated, they read no placement; a queue created meanwhile is found at once', async () => {
    const calls = async (names: string[]) => {
      for (const name of names) {
        const heartbeat = await worker.api(`/v1/queues/${name}/jobs/x/heartbeat`, { method: 'POST', json: { lease: '0123456789abcdef' }, headers: { authorization: '' } });
        expect(heartbeat.status).toBe(409); // LEASE_LOST: no lease of that token, wherever it is asked
        const enqueue = await post(`/v1/queues/${name}/jobs`, { group: 'g' });
        expect(enqueue.status).toBe(404);
      }
    };
    // Scripts loaded first (a script's first call on a database may cost an EVAL more).
    await calls(['warm-up']);
    const names = Array.from({ length: 8 }, (_, i) => `made-up-${i}`);
    const others = Array.from({ length: 8 }, (_, i) => `made-up-again-${i}`);
    const once = await costOf(() => calls(names));
    // Each name is looked up on the control database (HGET gq:placement): the scripts that
    // refuse the calls read with HMGET.
    expect(once[0]!.get('hget')).toBe(names.length);
    // Made again right away (within the UNPLACED_MS an absence is trusted), the calls read no
    // placement: the second round costs what the same calls cost with one database (the
    // scripts that refuse them). A machine so slow that the rounds outlive UNPLACED_MS may
    // read each name once more per UNPLACED_MS that passed, and no more.
    const started = Date.now();
    const twice = await costOf(async () => {
      await calls(others);
      await calls(others);
    });
    const rereads = Math.floor((Date.now() - started) / UNPLACED_MS) * others.length;
    expect(twice[0]!.get('hget')).toBeGreaterThanOrEqual(others.length);
    expect(twice[0]!.get('hget')).toBeLessThanOrEqual(others.length + rereads);
    expect(total(twice)).toBe(2 * total(once) - 2 * others.length + twice[0]!.get('hget')!);

    // A name remembered as unplaced, then created by this isolate: found at once, where it lives.
    const name = nameOn('made-up-later-', 2);
    expect((await post(`/v1/queues/${name}/jobs`, { group: 'g' })).status).toBe(404);
    const put = await worker.api(`/v1/queues/${name}`, { method: 'PUT', json: { endpoint: endpoint.url } });
    expect(put.status).toBe(200);
    expect((await post(`/v1/queues/${name}/jobs`, { id: 'first', group: 'g' })).status).toBe(201);
    expect(await databases[2]!.hget(`gq:{${name}}:jobs`, 'first')).not.toBeNull();
  });
});

describe('GET /health', () => {
  it('with the admin token it checks now and names every database; one down is 503 both ways, named only to the admin', async () => {
    expect(await (await worker.api('/health')).json()).toEqual({ ok: true, redis: 'ok', databases: ['ok', 'ok', 'ok'] });
    await databases[2]!.kill();
    try {
      const admin = await worker.api('/health');
      expect(admin.status).toBe(503);
      expect(admin.headers.get('retry-after')).toBe('1');
      expect(await admin.json()).toEqual({ ok: false, redis: 'ok', databases: ['ok', 'ok', 'down'] });
      // Anonymous: within a second the isolate checks again, and says only that it is not ok.
      let res = await fetch(`${worker.url}/health`);
      for (let i = 0; i < 100 && res.status === 200; i++) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        res = await fetch(`${worker.url}/health`);
      }
      expect(res.status).toBe(503);
      expect(res.headers.get('retry-after')).toBe('1');
      expect(await res.json()).toEqual({ ok: false, redis: 'down' });
      // A token that is not the admin's is anonymous.
      expect(await (await fetch(`${worker.url}/health`, { headers: { authorization: 'Bearer not-the-admin-token' } })).json()).toEqual({ ok: false, redis: 'down' });
    } finally {
      await databases[2]!.restart();
    }
  });
});
