// `npm run bench -- --pool`: scale-out over a pool of databases (docs/scaling-out.md), on one
// machine. Each database is a redis-server behind its own REST bridge capped at CAP commands a
// second (GROUPQ_BRIDGE_MAX_COMMANDS_PER_S, counted as Upstash counts them), low enough that this
// 2-core machine is not the limit: the cap is, as Upstash's is for one database. The Worker (one
// workerd) gets the pool; one hot queue of 1,008 groups, in 12 partitions (and, as the baseline,
// in one), takes 12,000 jobs in batches of 500 from 4 producers, pushed to a loopback endpoint.
// For each run it reports jobs/s (first batch sent -> last job arrived), Redis commands per job
// (INFO commandstats of every database), each database's share of them, and what an idle cron
// pass costs on each database; then what moving a partition of 100,000 waiting jobs costs.
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
import { request, startEndpoint } from './e2e-stack';
import { commandStats, resetStats, round } from './redis-stats';
import { fmt, table } from './report';
import { makePayload, sleep } from './workload';

export const POOL = {
  runs: [
    { databases: 1, partitions: 1 },
    { databases: 1, partitions: 12 },
    { databases: 2, partitions: 12 },
    { databases: 3, partitions: 12 },
  ],
  capPerDatabase: 1_500,
  groups: 1_008,
  jobs: 12_000,
  batchSize: 500,
  producers: 4,
  payloadBytes: 100,
  concurrency: 120,
} as const;

const QUEUE = 'hot';

export interface PoolRow {
  databases: number;
  partitions: number;
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

/** What moving one partition of waiting jobs to another database cost (no cap: the time is the work's). */
export interface MoveCost {
  jobs: number;
  groups: number;
  /** From the request to its answer. */
  ms: number;
  /** REST calls to both databases (what the Worker's subrequest budget counts). */
  calls: number;
  /** Redis commands on both databases, script-internal ones included. */
  commands: number;
}

export interface PoolResult {
  benchmark: 'groupq-pool';
  startedAt: string;
  config: typeof POOL;
  rows: PoolRow[];
  move: MoveCost;
  /** jobs/s with 3 databases (12 partitions) over jobs/s with 1 database and 1 partition. */
  speedup3: number;
  /** Commands per job with 3 databases (12 partitions) over 1 database and 1 partition (1: no extra cost). */
  commandsPerJobRatio3: number;
}

async function startDatabase(dir: string, token: string, cap: number | undefined) {
  const port = await freePort();
  const server = await startRedis({ port, dir, appendonly: false });
  const bridge = await startBridge({ port: 0, redisPort: port, token, maxCommandsPerSecond: cap });
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

/**
 * `size` databases (each capped at `cap` commands/s, none when undefined), an endpoint and the
 * Worker with the pool; `closers` undo it all, in reverse.
 */
async function startPool(size: number, cap: number | undefined, closers: (() => Promise<unknown>)[]) {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'groupq-bench-pool-'));
  closers.push(() => rm(dir, { recursive: true, force: true }));
  const token = randomBytes(16).toString('hex');
  const databases: Awaited<ReturnType<typeof startDatabase>>[] = [];
  for (let i = 0; i < size; i++) {
    const database = await startDatabase(path.join(dir, `db${i}`), token, cap);
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
    return res;
  };
  const commandsByDatabase = () => Promise.all(databases.map(async ({ admin }) => totalOf(await commandStats(admin))));
  const resetAll = () => Promise.all(databases.map(({ admin }) => resetStats(admin)));
  return { databases, endpoint, worker, api, commandsByDatabase, resetAll };
}

async function runSize(size: number, partitions: number, log: (line: string) => void): Promise<PoolRow> {
  const closers: (() => Promise<unknown>)[] = [];
  try {
    const { databases, endpoint, worker, api, commandsByDatabase, resetAll } = await startPool(size, POOL.capPerDatabase, closers);
    const quiet = async () => {
      let last = -1;
      for (;;) {
        const seen = databases.reduce((sum, database) => sum + database.requests(), 0) + endpoint.order.length;
        if (seen === last) return;
        last = seen;
        await sleep(500);
      }
    };
    await api(`/v1/queues/${QUEUE}`, 'PUT', { endpoint: endpoint.url, concurrency: POOL.concurrency, partitions }, 200);
    // A new queue is due at once: two passes take that, the third finds nothing due.
    await worker.scheduled();
    await worker.scheduled();
    await quiet();
    await resetAll();
    await worker.scheduled();
    const idleCommandsByDatabase = await commandsByDatabase();

    const jobs = Array.from({ length: POOL.jobs }, (_, i) => ({ id: `j${i}`, group: `tenant-${i % POOL.groups}`, data: makePayload(i, POOL.payloadBytes) }));
    const batches: (typeof jobs)[] = [];
    for (let from = 0; from < jobs.length; from += POOL.batchSize) batches.push(jobs.slice(from, from + POOL.batchSize));
    await quiet();
    await resetAll();
    endpoint.reset();
    log(`pool: ${size} database(s), ${POOL.jobs} jobs, one queue of ${partitions} partition(s), cap ${POOL.capPerDatabase} commands/s each`);
    const startedAt = performance.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: POOL.producers }, async () => {
        for (let batch = batches[next++]; batch; batch = batches[next++]) await api(`/v1/queues/${QUEUE}/jobs/batch`, 'POST', { jobs: batch }, 201);
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
      partitions,
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

export const MOVE = { jobs: 100_000, groups: 1_000, batchSize: 1_000, payloadBytes: 100 } as const;

/** Moves a paused queue's only partition, holding MOVE.jobs waiting jobs, to the other database of two. */
async function runMove(log: (line: string) => void): Promise<MoveCost> {
  const closers: (() => Promise<unknown>)[] = [];
  try {
    const { databases, endpoint, api, commandsByDatabase, resetAll } = await startPool(2, undefined, closers);
    await api(`/v1/queues/${QUEUE}`, 'PUT', { endpoint: endpoint.url }, 200);
    await api(`/v1/queues/${QUEUE}/pause`, 'POST', {}, 200);
    log(`move: enqueueing ${MOVE.jobs} jobs over ${MOVE.groups} groups`);
    for (let from = 0; from < MOVE.jobs; from += MOVE.batchSize) {
      const jobs = Array.from({ length: MOVE.batchSize }, (_, k) => ({ id: `m${from + k}`, group: `tenant-${(from + k) % MOVE.groups}`, data: makePayload(from + k, MOVE.payloadBytes) }));
      await api(`/v1/queues/${QUEUE}/jobs/batch`, 'POST', { jobs }, 201);
    }
    const listed = (await (await api(`/v1/queues/${QUEUE}/partitions`, 'GET', undefined, 200)).json()) as { partitions: { database: number }[] };
    const from = listed.partitions[0]!.database;
    await resetAll();
    const callsBefore = databases.reduce((sum, db) => sum + db.requests(), 0);
    const startedAt = performance.now();
    const moved = (await (await api(`/v1/queues/${QUEUE}/partitions/0/move`, 'POST', { database: 1 - from }, 200)).json()) as { counts: { waiting: number } };
    const ms = performance.now() - startedAt;
    if (moved.counts.waiting !== MOVE.jobs) throw new Error(`move: ${moved.counts.waiting} jobs waiting after the move, not ${MOVE.jobs}`);
    const calls = databases.reduce((sum, db) => sum + db.requests(), 0) - callsBefore;
    const commands = (await commandsByDatabase()).reduce((sum, n) => sum + n, 0);
    return { jobs: MOVE.jobs, groups: MOVE.groups, ms: round(ms, 0), calls, commands };
  } finally {
    for (const close of closers.reverse()) await close().catch(() => {});
  }
}

export async function runPool(log: (line: string) => void): Promise<PoolResult> {
  const startedAt = new Date().toISOString();
  const rows: PoolRow[] = [];
  for (const { databases, partitions } of POOL.runs) rows.push(await runSize(databases, partitions, log));
  const one = rows[0]!;
  const three = rows[rows.length - 1]!;
  return {
    benchmark: 'groupq-pool',
    startedAt,
    config: POOL,
    rows,
    move: await runMove(log),
    speedup3: round(three.jobsPerSecond / one.jobsPerSecond, 2),
    commandsPerJobRatio3: round(three.commandsPerJob / one.commandsPerJob, 3),
  };
}

export function formatPool(r: PoolResult): string {
  const c = r.config;
  return [
    `pool: ${fmt(c.jobs)} jobs to one queue of ${fmt(c.groups)} groups, batches of ${c.batchSize} from ${c.producers} producers; ` +
      `each database capped at ${fmt(c.capPerDatabase)} commands/s`,
    '',
    table(
      r.rows.map((row) => [
        String(row.databases),
        String(row.partitions),
        fmt(row.jobsPerSecond),
        fmt(row.commandsPerJob, 2),
        row.shareByDatabase.map((share) => `${fmt(share * 100, 1)}%`).join(' / '),
        fmt(row.maxOverFairShare, 2),
        row.idleCommandsByDatabase.join(' / '),
        String(row.scheduledRuns),
      ]),
      ['databases', 'partitions', 'jobs/s', 'commands/job', 'share of commands', 'max / fair share', 'idle pass commands', 'cron runs fired'],
    ),
    '',
    `3 databases, 12 partitions: ${fmt(r.speedup3, 2)}x the jobs/s of 1 database and 1 partition; commands per job ${fmt(r.commandsPerJobRatio3, 3)}x`,
    `moving a partition of ${fmt(r.move.jobs)} waiting jobs over ${fmt(r.move.groups)} groups (no cap): ${fmt(r.move.ms)} ms, ` +
      `${fmt(r.move.calls)} calls, ${fmt(r.move.commands)} commands`,
  ].join('\n');
}
