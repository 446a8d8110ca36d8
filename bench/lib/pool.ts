// `npm run bench -- --pool`: scale-out over a pool of databases (docs/scaling-out.md), on one
// machine. Each database is a redis-server behind its own REST bridge capped at CAP commands a
// second (GROUPQ_BRIDGE_MAX_COMMANDS_PER_S, counted as Upstash counts them), low enough that this
// 2-core machine is not the limit: the cap is, as Upstash's is for one database. The Worker (one
// workerd) gets the pool; 12 queues whose names rendezvous hashing spreads evenly over 2 and over
// 3 databases share 1,008 groups; 6,000 jobs are enqueued in batches of 500 by 4 producers and
// pushed to a loopback endpoint. For 1, 2 and 3 databases it reports jobs/s (first batch sent ->
// last job arrived), Redis commands per job (INFO commandstats of every database), each
// database's share of them, and what an idle cron pass costs on each database.
import { mkdtemp, rm } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { freePort, startRedis } from '../../scripts/redis-server.mjs';
import { createRespClient } from '../../scripts/resp.mjs';
import { startBridge } from '../../scripts/rest-bridge.mjs';
import { startMiniflareWorker } from '../../scripts/worker-stack.mjs';
import { rendezvous } from '../../src/core/store/pool';
import { request, startEndpoint } from './e2e-stack';
import { commandStats, resetStats, round } from './redis-stats';
import { fmt, table } from './report';
import { makePayload, sleep } from './workload';

export const POOL = { sizes: [1, 2, 3], capPerDatabase: 2_000, queues: 12, groupsPerQueue: 84, jobs: 6_000, batchSize: 500, producers: 4, payloadBytes: 100 } as const;

export interface PoolRow {
  databases: number;
  jobsPerSecond: number;
  /** Commands on every database over the run, per job. */
  commandsPerJob: number;
  /** Each database's part of those commands (sums to 1). */
  shareByDatabase: number[];
  /** The largest share over the fair one (1 / databases): 1 is perfectly even. */
  maxOverFairShare: number;
  /** One cron pass with nothing due: commands on each database. */
  idleCommandsByDatabase: number[];
  /** Cron runs fired because deliveries stalled (0: the enqueue requests' drains did it all). */
  scheduledRuns: number;
}

export interface PoolResult {
  benchmark: 'groupq-pool';
  startedAt: string;
  config: typeof POOL & { queueNames: string[] };
  rows: PoolRow[];
  /** jobs/s with 3 databases over jobs/s with 1. */
  speedup3: number;
  /** Commands per job with 3 databases over 1 (1: no extra cost). */
  commandsPerJobRatio3: number;
}

/**
 * 12 names that rendezvous hashing spreads evenly: 4, 4 and 4 over 3 databases, 6 and 6 over 2.
 * A name on database 0 or 1 of three is on the same one of two (rendezvous keeps the winner when
 * another database goes), so the even split over 2 comes from database 2's four: two and two.
 */
function evenNames(): string[] {
  const want: Record<string, number> = { '0:0': 4, '1:1': 4, '2:0': 2, '2:1': 2 };
  const names: string[] = [];
  for (let i = 0; names.length < 12; i++) {
    const name = `pool-${i}`;
    const cell = `${rendezvous(name, 3)}:${rendezvous(name, 2)}`;
    if ((want[cell] ?? 0) === 0) continue;
    want[cell]!--;
    names.push(name);
  }
  return names;
}

async function startDatabase(dir: string, token: string) {
  const port = await freePort();
  const server = await startRedis({ port, dir, appendonly: false });
  const bridge = await startBridge({ port: 0, redisPort: port, token, maxCommandsPerSecond: POOL.capPerDatabase });
  const admin = createRespClient({ port });
  return {
    url: bridge.url,
    admin,
    requests: () => bridge.stats.requests,
    async close() {
      admin.close();
      await bridge.close();
      await server.stop();
    },
  };
}

const totalOf = (counts: Record<string, number>) => Object.values(counts).reduce((sum, n) => sum + n, 0);

async function runSize(size: number, names: string[], log: (line: string) => void): Promise<PoolRow> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'groupq-bench-pool-'));
  const token = randomBytes(16).toString('hex');
  const databases: Awaited<ReturnType<typeof startDatabase>>[] = [];
  const closers: (() => Promise<unknown>)[] = [() => rm(dir, { recursive: true, force: true })];
  try {
    for (let i = 0; i < size; i++) {
      const database = await startDatabase(path.join(dir, `db${i}`), token);
      databases.push(database);
      closers.push(() => database.close());
    }
    const endpoint = await startEndpoint();
    closers.push(() => endpoint.close());
    const adminToken = randomBytes(24).toString('hex');
    const runtimeOutputTo = new Writable({ write: (chunk, _encoding, done) => void process.stderr.write(chunk, () => done()) });
    const worker = await startMiniflareWorker(
      { restUrl: databases[0]!.url, restToken: token },
      {
        GROUPQ_ADMIN_TOKEN: adminToken,
        GROUPQ_SIGNING_SECRET: `whsec_${randomBytes(32).toString('base64')}`,
        GROUPQ_REDIS_POOL: JSON.stringify(databases.slice(1).map(({ url }) => ({ url, token }))),
      },
      { runtimeOutputTo },
    );
    closers.push(() => worker.dispose());
    const agent = new http.Agent({ keepAlive: true });
    closers.push(async () => agent.destroy());
    const api = async (apiPath: string, method: string, json: unknown, status: number) => {
      const res = await request(agent, `${worker.url}${apiPath}`, method, { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' }, JSON.stringify(json));
      if (res.status !== status) throw new Error(`pool: ${method} ${apiPath} answered ${res.status}: ${(await res.text()).slice(0, 200)}`);
    };
    const quiet = async () => {
      let last = -1;
      for (;;) {
        const seen = databases.reduce((sum, database) => sum + database.requests(), 0) + endpoint.order.length;
        if (seen === last) return;
        last = seen;
        await sleep(500);
      }
    };
    const commandsByDatabase = () => Promise.all(databases.map(async ({ admin }) => totalOf(await commandStats(admin))));
    const resetAll = () => Promise.all(databases.map(({ admin }) => resetStats(admin)));

    for (const name of names) await api(`/v1/queues/${name}`, 'PUT', { endpoint: endpoint.url, concurrency: 100 }, 200);
    // A new queue is due at once: two passes take that, the third finds nothing due.
    await worker.scheduled();
    await worker.scheduled();
    await quiet();
    await resetAll();
    await worker.scheduled();
    const idleCommandsByDatabase = await commandsByDatabase();

    const jobs = Array.from({ length: POOL.jobs }, (_, i) => {
      const queue = i % names.length;
      return { queue: names[queue]!, id: `j${i}`, group: `g${Math.floor(i / names.length) % POOL.groupsPerQueue}`, data: makePayload(i, POOL.payloadBytes) };
    });
    // Round robin over the queues: each queue's first batch, then each one's second, ...
    const byQueue = names.map((name) => jobs.filter((job) => job.queue === name).map(({ id, group, data }) => ({ id, group, data })));
    const batches: { queue: string; jobs: (typeof byQueue)[number] }[] = [];
    for (let from = 0; from < Math.max(...byQueue.map((mine) => mine.length)); from += POOL.batchSize) {
      names.forEach((queue, q) => {
        const slice = byQueue[q]!.slice(from, from + POOL.batchSize);
        if (slice.length > 0) batches.push({ queue, jobs: slice });
      });
    }
    await quiet();
    await resetAll();
    endpoint.reset();
    log(`pool: ${size} database(s), ${POOL.jobs} jobs over ${names.length} queues, cap ${POOL.capPerDatabase} commands/s each`);
    const startedAt = performance.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: POOL.producers }, async () => {
        for (let batch = batches[next++]; batch; batch = batches[next++]) await api(`/v1/queues/${batch.queue}/jobs/batch`, 'POST', { jobs: batch.jobs }, 201);
      }),
    );
    let scheduledRuns = 0;
    let seen = 0;
    let since = performance.now();
    while (endpoint.arrivals.size < POOL.jobs) {
      await sleep(20);
      if (endpoint.order.length !== seen) {
        seen = endpoint.order.length;
        since = performance.now();
      } else if (performance.now() - since > 2_000) {
        if (++scheduledRuns > 30) throw new Error(`pool: ${POOL.jobs - endpoint.arrivals.size} jobs never arrived`);
        await worker.scheduled();
        since = performance.now();
      }
    }
    const lastArrival = Math.max(...[...endpoint.arrivals.values()].map((arrival) => arrival.at));
    await quiet();
    const commands = await commandsByDatabase();
    const total = commands.reduce((sum, n) => sum + n, 0);
    const shareByDatabase = commands.map((n) => round(n / total, 3));
    return {
      databases: size,
      jobsPerSecond: round(POOL.jobs / ((lastArrival - startedAt) / 1000), 0),
      commandsPerJob: round(total / POOL.jobs, 2),
      shareByDatabase,
      maxOverFairShare: round(Math.max(...shareByDatabase) * size, 2),
      idleCommandsByDatabase,
      scheduledRuns,
    };
  } finally {
    for (const close of closers.reverse()) await close().catch(() => {});
  }
}

export async function runPool(log: (line: string) => void): Promise<PoolResult> {
  const startedAt = new Date().toISOString();
  const queueNames = evenNames();
  const rows: PoolRow[] = [];
  for (const size of POOL.sizes) rows.push(await runSize(size, queueNames, log));
  const one = rows[0]!;
  const three = rows[rows.length - 1]!;
  return {
    benchmark: 'groupq-pool',
    startedAt,
    config: { ...POOL, queueNames },
    rows,
    speedup3: round(three.jobsPerSecond / one.jobsPerSecond, 2),
    commandsPerJobRatio3: round(three.commandsPerJob / one.commandsPerJob, 3),
  };
}

export function formatPool(r: PoolResult): string {
  const c = r.config;
  return [
    `pool: ${fmt(c.jobs)} jobs over ${c.queues} queues (${fmt(c.queues * c.groupsPerQueue)} groups), batches of ${c.batchSize} from ${c.producers} producers; ` +
      `each database capped at ${fmt(c.capPerDatabase)} commands/s`,
    '',
    table(
      r.rows.map((row) => [
        String(row.databases),
        fmt(row.jobsPerSecond),
        fmt(row.commandsPerJob, 2),
        row.shareByDatabase.map((share) => `${fmt(share * 100, 1)}%`).join(' / '),
        fmt(row.maxOverFairShare, 2),
        row.idleCommandsByDatabase.join(' / '),
        String(row.scheduledRuns),
      ]),
      ['databases', 'jobs/s', 'commands/job', 'share of commands', 'max / fair share', 'idle pass commands', 'cron runs fired'],
    ),
    '',
    `3 databases: ${fmt(r.speedup3, 2)}x the jobs/s of 1; commands per job ${fmt(r.commandsPerJobRatio3, 3)}x`,
  ].join('\n');
}
