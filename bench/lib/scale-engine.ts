// The scale rows measured on the engine through the REST bridge (the bench's private Redis, one
// fresh queue per row, deleted with deleteQueue once drained):
//   groups   the same jobs over more and more groups: enqueue, then drain (bench/lib/throughput.ts)
//   waiting  a bigger backlog each row: enqueue it all, read used_memory, then drain it
import type { FetchCounter } from './fetch-counter';
import { quietUsedMemory, round, totalCalls } from './redis-stats';
import type { BenchStack } from './stack';
import { THROUGHPUT_QUEUE_CONFIG, type ThroughputOptions, drainPhase, enqueuePhase, runThroughput } from './throughput';

export interface GroupsRow {
  groups: number;
  jobs: number;
  jobsPerSecond: number;
  enqueueJobsPerSecond: number;
  drainJobsPerSecond: number;
  commandsPerJob: number;
  restRequestsPerJob: number;
  /** Jobs each settle call carried: with few groups, few jobs can be in flight at once. */
  jobsPerSettle: number;
  orderViolations: number;
}

export interface WaitingRow {
  waitingJobs: number;
  groups: number;
  enqueueJobsPerSecond: number;
  drainJobsPerSecond: number;
  /** Enqueue + drain. */
  commandsPerJob: number;
  enqueueCommandsPerJob: number;
  drainCommandsPerJob: number;
  restRequestsPerJob: number;
  /** null when the backlog adds less than used_memory's noise (MIN_MEASURABLE_BYTES). */
  bytesPerWaitingJob: number | null;
  datasetBytesPerWaitingJob: number;
  /** CPU ms per 1,000 jobs, this process (clients + bridge) and redis-server: which side bounds the rate. */
  cpuMsPer1000Jobs: { enqueue: { node: number; redis: number }; drain: { node: number; redis: number } };
  orderViolations: number;
}

export async function runGroupsRows(
  stack: BenchStack,
  sizes: { groupsJobs: number; groups: number[] },
  options: ThroughputOptions,
  fetches: FetchCounter,
  log: (line: string) => void,
): Promise<GroupsRow[]> {
  const rows: GroupsRow[] = [];
  for (const groups of sizes.groups) {
    const jobs = sizes.groupsJobs;
    log(`scale, groups: ${jobs} jobs over ${groups} groups`);
    const r = await runThroughput(stack, { ...options, jobs, groups }, fetches, log, `bench-scale-groups-${groups}`);
    rows.push({
      groups,
      jobs,
      jobsPerSecond: r.jobsPerSecond,
      enqueueJobsPerSecond: r.enqueueJobsPerSecond,
      drainJobsPerSecond: r.drainJobsPerSecond,
      commandsPerJob: r.commandsPerJob,
      restRequestsPerJob: r.restRequestsPerJob,
      jobsPerSettle: r.jobsPerSettle,
      orderViolations: r.orderViolations,
    });
  }
  return rows;
}

/**
 * Below this, a backlog's memory is lost in what Redis frees by itself meanwhile (its keyspace
 * table shrinking after earlier rows, buffers): 1,000 jobs (~0.3 MB) measured -3 bytes per job.
 */
const MIN_MEASURABLE_BYTES = 4 * 1024 * 1024;

export async function runWaitingRows(
  stack: BenchStack,
  sizes: { waitingJobs: number[]; waitingJobsPerGroup: number },
  base: ThroughputOptions,
  fetches: FetchCounter,
  log: (line: string) => void,
): Promise<WaitingRow[]> {
  const rows: WaitingRow[] = [];
  const engine = stack.engine();
  for (const jobs of sizes.waitingJobs) {
    const groups = Math.max(1, Math.round(jobs / sizes.waitingJobsPerGroup));
    const options = { ...base, jobs, groups };
    const queue = `bench-scale-waiting-${jobs}`;
    await engine.putQueue(queue, THROUGHPUT_QUEUE_CONFIG);
    const before = await quietUsedMemory(stack.admin);
    log(`scale, waiting: enqueue ${jobs} jobs over ${groups} groups (batches of ${options.batchSize}, ${options.producers} producers)`);
    const enqueue = await enqueuePhase(stack, queue, options, fetches);
    const after = await quietUsedMemory(stack.admin);
    log(`scale, waiting: drain ${jobs} jobs (${options.reservers} reservers, settle n=${options.reserveBatch})`);
    const drain = await drainPhase(stack, queue, options, fetches);
    await engine.deleteQueue(queue);
    const perJob = (n: number, digits: number) => round(n / jobs, digits);
    const per1000 = (cpu: { node: number; redis: number }) => ({ node: perJob(cpu.node * 1000, 1), redis: perJob(cpu.redis * 1000, 1) });
    rows.push({
      waitingJobs: jobs,
      groups,
      enqueueJobsPerSecond: Math.round(jobs / (enqueue.ms / 1000)),
      drainJobsPerSecond: Math.round(jobs / (drain.ms / 1000)),
      commandsPerJob: perJob(totalCalls(enqueue.counts) + totalCalls(drain.counts), 3),
      enqueueCommandsPerJob: perJob(totalCalls(enqueue.counts), 3),
      drainCommandsPerJob: perJob(totalCalls(drain.counts), 3),
      restRequestsPerJob: perJob(enqueue.restRequests + drain.restRequests, 4),
      bytesPerWaitingJob: after.usedMemory - before.usedMemory < MIN_MEASURABLE_BYTES ? null : Math.round((after.usedMemory - before.usedMemory) / jobs),
      datasetBytesPerWaitingJob: Math.round((after.dataset - before.dataset) / jobs),
      cpuMsPer1000Jobs: { enqueue: per1000(enqueue.cpuMs), drain: per1000(drain.cpuMs) },
      orderViolations: drain.orderViolations,
    });
  }
  return rows;
}
