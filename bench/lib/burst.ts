// The burst of issue 20, against the end-to-end stack's Worker: a queue with maxAttempts 1 whose
// endpoint answers 200 at once, 1,000 jobs over 100 groups in two POST /jobs/batch of 500 (one
// after the other), and meanwhile what a user watching it does: GET /v1/queues/{q} every 100 ms,
// paced by a timer (a slow answer does not delay the next GET, so each one's wait is its own), and
// the scheduler, as the dev ticker runs it: one cron run a second, the next only after the last
// ended, a run that throws or takes over 30 s counted failed. Both start with the first batch
// request and stop once every job arrived (they keep the stack busy: its quiet is awaited after).
// The GETs must all be answered, quickly: a drain that holds the isolate shows here as a long GET
// or a reset connection. workerd's CPU counts from the first batch request until the stack is quiet.
import type { E2eStack } from './e2e-stack';
import { waitQuiet } from './e2e-stack';
import { round } from './redis-stats';
import { meterWorkerd, type WorkerdCpu } from './workerd-cpu';
import { makePayload, percentile, sleep } from './workload';

export const BURST = { jobs: 1_000, groups: 100, batches: 2, payloadBytes: 100, getEveryMs: 100, tickEveryMs: 1_000 } as const;
const QUEUE = 'bench-burst';
/** dev-ticker's timeout for a cron run; a GET not answered by then counts as one with no answer. */
const TICK_TIMEOUT_MS = 30_000;
const GET_TIMEOUT_MS = 30_000;
/** The burst fails if its jobs have not all arrived by then. */
const DRAIN_TIMEOUT_MS = 120_000;

export interface BurstResult {
  jobs: number;
  groups: number;
  /** GET /v1/queues/{q} sent while it drained. */
  gets: number;
  /** Answered GETs, sent -> answer read (ms). */
  getMs: { p50: number; p95: number; p99: number; max: number };
  getP99Ms: number;
  getMaxMs: number;
  /** GETs that got no answer: the connection reset (ECONNRESET) or any other request error, or none in 30 s. */
  connectionResets: number;
  /** GETs answered with a status other than 200. */
  getErrors: number;
  ticks: number;
  failedTicks: number;
  /** Each tick's time (ms): median and longest. */
  tickMs: { p50: number; max: number };
  /** First batch request sent -> both batches answered. */
  enqueueMs: number;
  /** First batch request sent -> last job arrived at the endpoint. */
  drainMs: number;
  /** jobs / drainMs. */
  drainJobsPerSecond: number;
  /** Every workerd process, from the first batch request until the stack was quiet; per job. */
  workerCpu: WorkerdCpu;
  /** The queue's counts afterwards: every job ended (completed, nothing waiting or active). */
  countsAfter: Record<string, number>;
  /** Jobs waiting, delayed or active afterwards (0: every job ended). */
  unfinished: number;
}

const ms = (sorted: number[], p: number) => round(percentile(sorted, p), 1);

/** A GET of the queue every `everyMs`, each on its own (paced, not a closed loop), until stopped. */
function pacedGets(stack: E2eStack, everyMs: number) {
  const times: number[] = [];
  let resets = 0;
  let errors = 0;
  let sent = 0;
  const inFlight: Promise<void>[] = [];
  const t0 = performance.now();
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      const due = t0 + sent * everyMs;
      if (due > performance.now()) await sleep(due - performance.now());
      if (stopped) break;
      sent++;
      const at = performance.now();
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error('GET timed out')), GET_TIMEOUT_MS);
      });
      const get = stack.api(`/v1/queues/${QUEUE}`).then(async (res) => {
        await res.arrayBuffer();
        return res.status;
      });
      inFlight.push(
        Promise.race([get, timeout]).then(
          (status) => {
            times.push(performance.now() - at);
            if (status !== 200) errors++;
          },
          () => {
            resets++;
          },
        ).finally(() => clearTimeout(timer)),
      );
    }
  })();
  return {
    async stop() {
      stopped = true;
      await loop;
      await Promise.all(inFlight);
      return { sent, times, resets, errors };
    },
    progress: () => `${sent} GETs sent, ${times.length} answered, ${resets} without an answer`,
  };
}

/** One cron run a second, the next after the last ended (scripts/dev-ticker.mjs's rhythm). */
function ticker(stack: E2eStack, everyMs: number) {
  const times: number[] = [];
  let failed = 0;
  let stopped = false;
  const loop = (async () => {
    for (let next = performance.now() + everyMs; ; next += everyMs) {
      if (next > performance.now()) await sleep(next - performance.now());
      if (stopped) return;
      const at = performance.now();
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error('tick timed out')), TICK_TIMEOUT_MS);
      });
      try {
        await Promise.race([stack.scheduled(), timeout]);
        times.push(performance.now() - at);
      } catch {
        failed++;
      } finally {
        clearTimeout(timer);
      }
      next = Math.max(next, performance.now() - everyMs);
    }
  })();
  return {
    async stop() {
      stopped = true;
      await loop;
      return { ticks: times.length + failed, times, failed };
    },
    progress: () => `${times.length} cron runs, ${failed} failed`,
  };
}

export async function runBurst(stack: E2eStack, log: (line: string) => void): Promise<BurstResult> {
  const put = await stack.api(`/v1/queues/${QUEUE}`, { method: 'PUT', json: { endpoint: stack.endpoint.url, maxAttempts: 1 } });
  if (put.status !== 200) throw new Error(`burst: PUT queue answered ${put.status}: ${await put.text()}`);
  await stack.scheduled(); // the new queue's first pass, as the cron would have run it
  const jobs = Array.from({ length: BURST.jobs }, (_, i) => ({ id: `b${i}`, group: `burst:${i % BURST.groups}`, data: makePayload(i, BURST.payloadBytes) }));
  const size = BURST.jobs / BURST.batches;
  await waitQuiet(stack);
  stack.endpoint.reset();
  log(`burst: ${BURST.jobs} jobs over ${BURST.groups} groups in ${BURST.batches} POST /jobs/batch; GET the queue every ${BURST.getEveryMs} ms, a cron run every ${BURST.tickEveryMs} ms`);

  const cpu = meterWorkerd();
  const startedAt = performance.now();
  const gets = pacedGets(stack, BURST.getEveryMs);
  const ticks = ticker(stack, BURST.tickEveryMs);
  let enqueuedAt = 0;
  let lastArrival = 0;
  let stopped: [Awaited<ReturnType<typeof gets.stop>>, Awaited<ReturnType<typeof ticks.stop>>] | undefined;
  const stop = async () => (stopped ??= await Promise.all([gets.stop(), ticks.stop()]));
  try {
    for (let b = 0; b < BURST.batches; b++) {
      const res = await stack.api(`/v1/queues/${QUEUE}/jobs/batch`, { method: 'POST', json: { jobs: jobs.slice(b * size, (b + 1) * size) } });
      const body = await res.text();
      if (res.status !== 201) throw new Error(`burst: POST /jobs/batch answered ${res.status}: ${body.slice(0, 300)}`);
    }
    enqueuedAt = performance.now();
    let reportAt = performance.now() + 5_000;
    while (jobs.some((job) => !stack.endpoint.arrivals.has(job.id))) {
      if (performance.now() > reportAt) {
        const arrived = jobs.filter((job) => stack.endpoint.arrivals.has(job.id)).length;
        log(`burst: ${arrived} of ${jobs.length} jobs arrived; ${gets.progress()}; ${ticks.progress()}`);
        reportAt += 5_000;
      }
      if (performance.now() - startedAt > DRAIN_TIMEOUT_MS) throw new Error(`burst: jobs still missing after ${DRAIN_TIMEOUT_MS} ms`);
      await sleep(20);
    }
    lastArrival = Math.max(...jobs.map((job) => stack.endpoint.arrivals.get(job.id)!.at));
  } finally {
    // The GETs and cron runs end with the drain: the stack is quiet only without them.
    await stop();
  }
  await waitQuiet(stack);
  const workerCpu = cpu.stop(BURST.jobs);
  const [got, ticked] = stopped!;

  const res = await stack.api(`/v1/queues/${QUEUE}`);
  const countsAfter = ((await res.json()) as { counts: Record<string, number> }).counts;
  const getTimes = [...got.times].sort((a, b) => a - b);
  const tickTimes = [...ticked.times].sort((a, b) => a - b);
  const getMs = { p50: ms(getTimes, 50), p95: ms(getTimes, 95), p99: ms(getTimes, 99), max: ms(getTimes, 100) };
  const drainMs = lastArrival - startedAt;
  return {
    jobs: BURST.jobs,
    groups: BURST.groups,
    gets: got.sent,
    getMs,
    getP99Ms: getMs.p99,
    getMaxMs: getMs.max,
    connectionResets: got.resets,
    getErrors: got.errors,
    ticks: ticked.ticks,
    failedTicks: ticked.failed,
    tickMs: { p50: ms(tickTimes, 50), max: ms(tickTimes, 100) },
    enqueueMs: Math.round(enqueuedAt - startedAt),
    drainMs: Math.round(drainMs),
    drainJobsPerSecond: round(BURST.jobs / (drainMs / 1000), 0),
    workerCpu,
    countsAfter,
    unfinished: (countsAfter.waiting ?? 0) + (countsAfter.delayed ?? 0) + (countsAfter.active ?? 0),
  };
}
