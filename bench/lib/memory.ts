// Metric 4: Redis memory per waiting job. used_memory (INFO memory) is read on a quiet server
// before and after enqueueing `jobs` waiting jobs to a fresh queue; MEMORY USAGE of each key of
// the queue splits the cost by structure (job records, group zsets, the ready index).
import { groupKey, queueKeys } from '../../src/core/store/keys';
import type { BenchStack } from './stack';
import { QUIET_MS, keyBytes, keyEncoding, quietUsedMemory, round } from './redis-stats';
import { chunk, makeJobs } from './workload';

export interface MemoryOptions {
  jobs: number;
  groups: number;
  payloadBytes: number;
  batchSize: number;
}

export interface MemoryResult {
  bytesPerWaitingJob: number;
  usedMemoryBefore: number;
  usedMemoryAfter: number;
  /** used_memory_dataset (used_memory minus Redis' bookkeeping: clients, buffers, ...) per job. */
  datasetBytesPerWaitingJob: number;
  memoryPurge: boolean;
  /** MEMORY USAGE (exact) summed per structure, per job, with the encoding Redis chose. */
  byStructure: Record<string, { bytesPerJob: number; encoding: string; keys: number }>;
  /** One stored job record: the `jobs` hash value (state JSON, newline, payload). */
  sampleRecord: { bytes: number; stateJson: string; payloadBytes: number };
  sampleGroupMemberBytes: number;
}

const QUEUE = 'bench-memory';

export async function runMemory(stack: BenchStack, options: MemoryOptions, log: (line: string) => void): Promise<MemoryResult> {
  const { jobs, groups, payloadBytes, batchSize } = options;
  const admin = stack.admin;
  const engine = stack.engine();
  const k = queueKeys(QUEUE);
  await engine.putQueue(QUEUE, { endpoint: 'http://127.0.0.1:9/jobs' });
  const batches = chunk(makeJobs(jobs, groups, payloadBytes), batchSize);

  log(`memory: used_memory before and after ${jobs} waiting jobs (quiet ${QUIET_MS} ms + MEMORY PURGE each side)`);
  // Redis keeps each script it ran, once: run enqueue before the first reading, so that what the
  // jobs cost is not mixed with the one-time size of the script that wrote them.
  await engine.putQueue(`${QUEUE}-warm`, { endpoint: 'http://127.0.0.1:9/jobs' });
  await engine.enqueueBatch(`${QUEUE}-warm`, makeJobs(2, 1, payloadBytes));
  await engine.deleteQueue(`${QUEUE}-warm`);
  const before = await quietUsedMemory(admin);
  let firstId = '';
  for (const batch of batches) {
    const results = await engine.enqueueBatch(QUEUE, batch);
    firstId ||= results[0]!.id;
  }
  const after = await quietUsedMemory(admin);

  const byStructure: MemoryResult['byStructure'] = {};
  const measure = async (name: string, keys: string[]) => {
    let bytes = 0;
    for (const key of keys) bytes += await keyBytes(admin, key);
    byStructure[name] = { bytesPerJob: round(bytes / jobs, 1), encoding: await keyEncoding(admin, keys[0]!), keys: keys.length };
  };
  await measure('jobs hash (records)', [k.jobs]);
  await measure('group zsets', Array.from({ length: groups }, (_, g) => groupKey(QUEUE, `user:${g}`)));
  await measure('ready zset', [k.ready]);
  await measure('meta hash', [k.meta]);

  const record = String(await admin.call(['HGET', k.jobs, firstId]));
  const newline = record.indexOf('\n');
  const members = (await admin.call(['ZRANGE', groupKey(QUEUE, 'user:0'), '0', '0'])) as Buffer[];
  await engine.deleteQueue(QUEUE);

  return {
    bytesPerWaitingJob: Math.round((after.usedMemory - before.usedMemory) / jobs),
    usedMemoryBefore: before.usedMemory,
    usedMemoryAfter: after.usedMemory,
    datasetBytesPerWaitingJob: Math.round((after.dataset - before.dataset) / jobs),
    memoryPurge: before.purged && after.purged,
    byStructure,
    sampleRecord: { bytes: Buffer.byteLength(record), stateJson: record.slice(0, newline), payloadBytes: Buffer.byteLength(record) - newline - 1 },
    sampleGroupMemberBytes: members[0]?.length ?? 0,
  };
}
