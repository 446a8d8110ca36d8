// The dedup window's cost, measured (issue 10: "at most +2 commands per job that has an id",
// "memory for remembered ids is bounded by the window: measure it"):
//   - bytes per remembered id: MEMORY USAGE of the `dedup` zset (exact, SAMPLES 0) after 10,000
//     jobs with producer-given ids completed (keepCompleted 0, so nothing else of them is left);
//   - Redis commands per job on the lone-job path as a drain runs it (enqueue, settle([], n),
//     settle([complete], n)), without an id and with one: the difference is the window's price;
//   - the same in batches (enqueue 100 jobs per call, settle up to 1000 per call), where the ids
//     a call enqueues or ends cost one command per call.
//   node scripts/run-ts.mjs bench/dedup-memory.ts            readable lines on stdout
//   node scripts/run-ts.mjs bench/dedup-memory.ts --json     one JSON object on stdout
import type { Engine } from '../src/core/engine';
import { queueKeys } from '../src/core/keys';
import { type LeasedJob, placeOf } from '../src/core/leases';
import { commandStats, diffCounts, keyBytes, perUnit, resetStats, round, totalCalls } from './lib/redis-stats';
import { startBenchStack } from './lib/stack';

const IDS = 10_000;
const GROUPS = 1_000;
const BATCH = 500;
const ITERATIONS = 200;
const BATCHED_JOBS = 5_000;
const BATCH_OF = 100;
const json = process.argv.includes('--json');
const log = (line: string) => process.stderr.write(`${line}\n`);

/** Ids as long as the random ones groupq draws (16 characters). */
const idOf = (i: number) => `order-${String(i).padStart(10, '0')}`;

async function completeAll(engine: Engine, queue: string): Promise<void> {
  for (;;) {
    const { jobs } = await engine.settle(queue, [], 1000);
    if (jobs.length === 0) return;
    const outcomes = jobs.map((job: LeasedJob) => ({ kind: 'complete' as const, id: job.id, lease: job.lease.token, place: placeOf(job) }));
    await engine.settle(queue, outcomes, 0);
  }
}

async function bytesPerRememberedId(engine: Engine, admin: Parameters<typeof keyBytes>[0]) {
  const queue = 'bench-dedup-memory';
  await engine.putQueue(queue, { endpoint: 'http://127.0.0.1:9/jobs', concurrency: 1000 });
  const key = queueKeys(queue).dedup;
  const before = await keyBytes(admin, key);
  for (let start = 0; start < IDS; start += BATCH) {
    const jobs = Array.from({ length: BATCH }, (_, i) => ({ id: idOf(start + i), group: `user:${(start + i) % GROUPS}` }));
    await engine.enqueueBatch(queue, jobs);
  }
  await completeAll(engine, queue);
  const remembered = Number(await admin.call(['ZCARD', key]));
  if (remembered !== IDS) throw new Error(`dedup: ${remembered} ids remembered, expected ${IDS}`);
  const after = await keyBytes(admin, key);
  const encoding = String(await admin.call(['OBJECT', 'ENCODING', key]));
  await engine.deleteQueue(queue);
  return { ids: IDS, idLength: idOf(0).length, bytesBefore: before, bytesAfter: after, bytesPerId: round((after - before) / IDS, 1), encoding };
}

/** Commands per lone job (enqueue, then a drain's two settles), with or without a producer-given id. */
async function commandsPerLoneJob(engine: Engine, admin: Parameters<typeof keyBytes>[0], named: boolean) {
  const queue = `bench-dedup-lone-${named ? 'id' : 'no-id'}`;
  await engine.putQueue(queue, { endpoint: 'http://127.0.0.1:9/jobs' });
  await engine.tick(queue); // a new queue's first pass, as in bench/lib/single-job.ts
  await resetStats(admin);
  const before = await commandStats(admin);
  for (let i = 0; i < ITERATIONS; i++) {
    await engine.enqueue(queue, { group: 'user:1', ...(named ? { id: idOf(i) } : {}) });
    const [job] = (await engine.settle(queue, [], 16)).jobs;
    if (!job) throw new Error('lone job: nothing leased');
    const settled = await engine.settle(queue, [{ kind: 'complete', id: job.id, lease: job.lease.token, place: placeOf(job) }], 16);
    if (settled.results[0]?.state !== 'completed') throw new Error('lone job: not completed');
  }
  const counts = diffCounts(before, await commandStats(admin));
  await engine.deleteQueue(queue);
  return { commandsPerJob: round(totalCalls(counts) / ITERATIONS, 3), byCommand: perUnit(counts, ITERATIONS) };
}

/** Commands per job enqueued in batches of BATCH_OF, each completed by settles of up to 1000. */
async function commandsPerBatchedJob(engine: Engine, admin: Parameters<typeof keyBytes>[0], named: boolean) {
  const queue = `bench-dedup-batched-${named ? 'id' : 'no-id'}`;
  await engine.putQueue(queue, { endpoint: 'http://127.0.0.1:9/jobs', concurrency: 1000 });
  await engine.tick(queue);
  await resetStats(admin);
  const before = await commandStats(admin);
  for (let start = 0; start < BATCHED_JOBS; start += BATCH_OF) {
    const jobs = Array.from({ length: BATCH_OF }, (_, i) => ({ group: `user:${(start + i) % GROUPS}`, ...(named ? { id: idOf(start + i) } : {}) }));
    await engine.enqueueBatch(queue, jobs);
    await completeAll(engine, queue); // so that later batches meet remembered ids
  }
  const counts = diffCounts(before, await commandStats(admin));
  await engine.deleteQueue(queue);
  return { commandsPerJob: round(totalCalls(counts) / BATCHED_JOBS, 3) };
}

const stack = await startBenchStack(log);
try {
  const engine = stack.engine();
  log(`dedup: ${IDS} jobs with ids completed, MEMORY USAGE of the dedup zset before and after`);
  const memory = await bytesPerRememberedId(engine, stack.admin);
  log(`dedup: ${ITERATIONS} lone jobs without and with an id`);
  const withoutId = await commandsPerLoneJob(engine, stack.admin, false);
  const withId = await commandsPerLoneJob(engine, stack.admin, true);
  log(`dedup: ${BATCHED_JOBS} jobs in batches of ${BATCH_OF}, without and with ids`);
  const batchedWithoutId = await commandsPerBatchedJob(engine, stack.admin, false);
  const batchedWithId = await commandsPerBatchedJob(engine, stack.admin, true);
  const result = {
    memory,
    withoutId,
    withId,
    extraCommandsPerJobWithId: round(withId.commandsPerJob - withoutId.commandsPerJob, 3),
    batched: { withoutId: batchedWithoutId.commandsPerJob, withId: batchedWithId.commandsPerJob },
  };
  if (json) {
    process.stdout.write(`${JSON.stringify(result)}\n`);
  } else {
    console.log(`bytes per remembered id: ${memory.bytesPerId} (${memory.ids} ids of ${memory.idLength} characters, ${memory.encoding})`);
    console.log(`commands per lone job: ${withoutId.commandsPerJob} without an id, ${withId.commandsPerJob} with one (+${result.extraCommandsPerJobWithId})`);
    console.log(`  with an id, by command: ${JSON.stringify(withId.byCommand)}`);
    console.log(`commands per job in batches of ${BATCH_OF}: ${batchedWithoutId.commandsPerJob} without ids, ${batchedWithId.commandsPerJob} with ids`);
  }
} finally {
  await stack.close();
}
