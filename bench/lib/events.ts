// The event streams' rows (issue 30, "Cost" and "Latency and scale"), through the Worker in
// workerd with the queue's event hub (a Durable Object) as it runs under `npm run dev`, a private
// redis-server + REST bridge and the loopback endpoint of the e2e rows. Three stacks, one after
// the other:
//   1 Worker    the e2e batch run without a stream (it must cost what e2eCommandsPerJob costs),
//               then again with one queue stream open (what the stream adds: its opening's
//               want-events, no command per event); then single jobs at a steady rate, each
//               `completed` event timed from its `at` to the reader (eventLatencyMs)
//   1 Worker    N queue streams at once: workerd's memory per stream, the Redis commands of N idle
//               streams, and one job's `completed` timed to the last of the N readers
//   n Workers   the steady-rate run again, the jobs sent to one Worker and the stream read from
//               another, one hub for all through Miniflare's dev registry (cross-Worker latency)
// Every reader is this process (event-tap.ts): a read time includes its own event loop's delays.
import os from 'node:os';
import { E2E_CONFIG, type E2eConfig, type Percentiles, QUEUE, pacedEnqueues, percentiles, throughputRun, warmUp } from './e2e';
import { type E2eStack, startE2eStack, waitDelivered, waitQuiet } from './e2e-stack';
import { type EventTap, type TappedEvent, openTap, until } from './event-tap';
import { type CommandCounts, addCounts, commandStats, countsOf, perUnit, resetStats, round, totalCalls } from './redis-stats';
import { workerdRssKiB } from './workerd-cpu';
import { sizesFrom, sleep } from './workload';

export interface EventsConfig {
  /** Jobs of the batch run measured without and with a stream (the e2e batch run's by default). */
  throughputJobs: number;
  /** Single jobs of a latency run (the same on one Worker and across Workers). */
  latencyJobs: number;
  latencyRatePerSecond: number;
  /** Queue streams open at once on one Worker. */
  subscribers: number;
  /** Jobs, one at a time, whose `completed` is timed to every one of the streams. */
  fanoutJobs: number;
  /** How long the streams stay open with nothing happening while Redis' commands are counted. */
  idleWindowMs: number;
  /** workerd processes of the cross-Worker run: the hub in the first, jobs sent to the second, the stream on the last. */
  crossWorkers: number;
}

export const EVENTS_CONFIG: EventsConfig = {
  throughputJobs: E2E_CONFIG.jobs,
  latencyJobs: 500,
  latencyRatePerSecond: 100,
  subscribers: 1_000,
  fanoutJobs: 10,
  // Past the first keep-alive comment (every 15 s): a stream's only sign of life while idle.
  idleWindowMs: 16_000,
  // Three, so that both hops cross a process, as on Cloudflare where the hub rarely runs in the
  // isolate of the Worker that changed the job or of the one that serves the reader.
  crossWorkers: 3,
};

/** `GROUPQ_BENCH_EVENTS='{"subscribers":200,...}'` overrides any size (a small run on a busy machine). */
export const EVENTS_ENV = 'GROUPQ_BENCH_EVENTS';

export function eventsConfig(): EventsConfig {
  const config = sizesFrom(EVENTS_ENV, EVENTS_CONFIG);
  if (config.crossWorkers < 2) throw new Error(`${EVENTS_ENV}: crossWorkers must be 2 or more`);
  return config;
}

export const EVENTS_DEFINITIONS = {
  runtime:
    'the Worker bundle in bare Miniflare (workerd) on 127.0.0.1 with its EventHub Durable Object (SQLite), private redis-server (AOF on) + REST bridge, ' +
    'endpoint in the bench process answering 200; every stream read by the bench process with node:http (no compression) and the Worker\'s SseParser',
  eventLatencyMs:
    'one queue stream (GET /v1/queues/{queue}/events) open; single POST /jobs at a steady rate; per job, its `completed` event\'s ' +
    'read time (Date.now() in the bench when the chunk arrived) - its `at` (the Worker\'s Date.now() given to the script that completed the job; ' +
    'one machine, one clock); p50 / p95 over the jobs',
  crossWorkerLatencyMs:
    'the same with several Workers, each its own workerd process, sharing one hub through Miniflare\'s dev registry: Worker 0 defines the hub, ' +
    'the jobs are sent to Worker 1 (their drains and completions run there), the stream is read from the last Worker',
  eventCommandsPerJob:
    'INFO commandstats calls / jobs of the e2e batch run (as e2eCommandsPerJob): without, on a fresh stack where no stream was ever opened; ' +
    'with, the same run again on the same queue with one queue stream open, the commands of its opening (want-events) counted in',
  extraCommandsPerEvent: '(with - without) x jobs / the job events the stream read during the run with it',
  memoryPerSubscriberKiB:
    '(VmRSS of every workerd process once N queue streams are attached and 3 s passed - the same before them, after one stream opened, ' +
    'one job followed to its end and the stream closed, and 3 s) / N',
  idleSubscriberCommands: 'INFO commandstats calls while N streams stay open with no job, over idleWindowMs (past a keep-alive comment)',
  fanoutMs: 'one job at a time: its `completed` event\'s `at` to the first and to the last of the N streams reading it',
} as const;

export interface EventLatency {
  jobs: number;
  targetRatePerSecond: number;
  achievedRatePerSecond: number;
  /** Each job's `completed`: read - at. */
  latencyMs: Percentiles;
  /** Every kind of event the run's jobs had, the same way. */
  byEventMs: Record<string, Percentiles>;
  /** `gap` events the stream read meanwhile (must be 0). */
  gaps: number;
  /** Cron runs fired because deliveries stalled (their jobs' latency includes the stall). */
  scheduledRuns: number;
}

export interface CrossWorkerLatency extends EventLatency {
  workers: number;
  /** Which instance got the jobs, which served the stream (0 defines the hub). */
  producer: number;
  subscriber: number;
}

export interface EventRunCost {
  commandsPerJob: number;
  commandsPerJobByCommand: CommandCounts;
  jobsPerSecond: number;
  scheduledRuns: number;
}

export interface EventCommands {
  jobs: number;
  without: EventRunCost;
  with: EventRunCost & {
    /** Job events the stream read, by kind, for the run's jobs. */
    eventsRead: Record<string, number>;
    /** Their `completed` latency under the batch run's load (as eventLatencyMs, not paced). */
    completedLatencyMs: Percentiles;
  };
  /** Commands of opening the stream (want-events, one call per partition): counted in `with`. */
  openCommands: CommandCounts;
  extraPerJob: number;
  extraPerEvent: number;
}

export interface EventSubscribers {
  subscribers: number;
  /** First stream opened to the last one attached (100 opening at a time). */
  attachMs: number;
  /** Every workerd process (KiB): before the streams, after. */
  rssKiB: { before: number; after: number; byProcess: { pid: number; before: number; after: number }[] };
  kibPerSubscriber: number;
  idle: { windowMs: number; commands: number; commandsByCommand: CommandCounts };
  jobs: number;
  toFirstMs: Percentiles;
  toLastMs: Percentiles;
  /** Jobs whose `completed` did not reach every stream within 20 s. */
  notReachingAll: number;
  gaps: number;
  /** Streams the server ended before the bench closed them. */
  endedEarly: number;
}

export interface EventsResult {
  definitions: typeof EVENTS_DEFINITIONS;
  /** Rates and latencies depend on what else the machine runs: the 1-minute load when the rows began. */
  loadAverage1m: number;
  config: EventsConfig;
  latency: EventLatency;
  crossWorker: CrossWorkerLatency;
  commands: EventCommands;
  subscribers: EventSubscribers;
}

const FANOUT_QUEUE = 'bench-events-fanout';
/** How long a job's events may take to reach every stream before the run gives up on them. */
const REACH_TIMEOUT_MS = 20_000;

const streamUrl = (stack: E2eStack, queue: string, worker = 0) => `${stack.workerUrls[worker]}/v1/queues/${queue}/events`;

/** The latency of each of `events` (read - at), by kind. */
function byKind(events: TappedEvent[]): Record<string, Percentiles> {
  const kinds = new Map<string, number[]>();
  for (const e of events) {
    const values = kinds.get(e.event) ?? [];
    values.push(e.readAt - e.at);
    kinds.set(e.event, values);
  }
  return Object.fromEntries([...kinds].map(([kind, values]) => [kind, percentiles(values)]));
}

/** The events `tap` read from index `from` on of the jobs `ids`. */
function eventsOf(tap: EventTap, from: number, ids: Set<string>): TappedEvent[] {
  return tap.events.slice(from).filter((e) => ids.has(e.id));
}

/** Waits until `tap` read the `completed` of every one of `ids` (read from index `from` on). */
async function waitCompleted(tap: EventTap, from: number, ids: Set<string>): Promise<void> {
  const done = () => eventsOf(tap, from, ids).filter((e) => e.event === 'completed').length;
  await until(() => done() >= ids.size || tap.ended(), REACH_TIMEOUT_MS, () => `${ids.size} completed events (read ${done()})`);
  if (done() < ids.size) throw new Error(`events: the stream ended after ${done()} of ${ids.size} completed events`);
}

/** Single jobs `ids` at `rate`/s through `stack`; each event's latency as `tap` read it. */
async function latencyRun(stack: E2eStack, tap: EventTap, ids: string[], rate: number, log: (line: string) => void): Promise<EventLatency> {
  const from = tap.events.length;
  const gapsBefore = tap.gaps;
  const sends = await pacedEnqueues(stack, { ...E2E_CONFIG, latencyRatePerSecond: rate }, ids);
  const { scheduledRuns } = await waitDelivered(stack, ids, log);
  const wanted = new Set(ids);
  await waitCompleted(tap, from, wanted);
  const byEventMs = byKind(eventsOf(tap, from, wanted));
  return {
    jobs: ids.length,
    targetRatePerSecond: rate,
    achievedRatePerSecond: round(sends.achievedRatePerSecond, 1),
    latencyMs: byEventMs.completed!,
    byEventMs,
    gaps: tap.gaps - gapsBefore,
    scheduledRuns,
  };
}

const costOf = (run: Awaited<ReturnType<typeof throughputRun>>): EventRunCost => ({
  commandsPerJob: run.commandsPerJob,
  commandsPerJobByCommand: run.commandsPerJobByCommand,
  jobsPerSecond: run.jobsPerSecond,
  scheduledRuns: run.scheduledRuns,
});

/** Stack 1: the batch run without and with a stream, then the paced run on that stream. */
async function oneWorker(config: EventsConfig, log: (line: string) => void): Promise<{ commands: EventCommands; latency: EventLatency }> {
  const e2e: E2eConfig = { ...E2E_CONFIG, jobs: config.throughputJobs };
  const stack = await startE2eStack(log);
  let tap: EventTap | undefined;
  try {
    await warmUp(stack, e2e, log);
    log('events: the batch run with no stream');
    const without = await throughputRun(stack, e2e, log);
    const openCommands = await countsOf(stack.admin, async () => {
      tap = await openTap(streamUrl(stack, QUEUE), stack.adminToken);
      await waitQuiet(stack);
    });
    log('events: the batch run again, one queue stream open');
    const from = tap!.events.length;
    const run = await throughputRun(stack, e2e, log);
    const ids = new Set(Array.from({ length: e2e.jobs }, (_, i) => `t${i}`));
    await waitCompleted(tap!, from, ids);
    const read = eventsOf(tap!, from, ids);
    const n = e2e.jobs;
    const withCost = costOf(run);
    withCost.commandsPerJob = round(run.commandsPerJob + totalCalls(openCommands) / n, 3);
    withCost.commandsPerJobByCommand = perUnit(addCounts(perUnit(openCommands, n), run.commandsPerJobByCommand), 1);
    const eventsRead: Record<string, number> = {};
    for (const e of read) eventsRead[e.event] = (eventsRead[e.event] ?? 0) + 1;
    const extraPerJob = round(withCost.commandsPerJob - without.commandsPerJob, 3);

    log(`events: latency, ${config.latencyJobs} single jobs at ${config.latencyRatePerSecond}/s, the stream on the same Worker`);
    const ids2 = Array.from({ length: config.latencyJobs }, (_, i) => `ev${i}`);
    const latency = await latencyRun(stack, tap!, ids2, config.latencyRatePerSecond, log);
    return {
      latency,
      commands: {
        jobs: n,
        without: costOf(without),
        with: { ...withCost, eventsRead, completedLatencyMs: percentiles(read.filter((e) => e.event === 'completed').map((e) => e.readAt - e.at)) },
        openCommands,
        extraPerJob,
        extraPerEvent: round((extraPerJob * n) / Math.max(1, read.length), 4),
      },
    };
  } finally {
    tap?.close();
    await stack.close();
  }
}

const sum = (values: Iterable<number>) => [...values].reduce((s, v) => s + v, 0);

async function enqueueOne(stack: E2eStack, queue: string, id: string): Promise<void> {
  const res = await stack.api(`/v1/queues/${queue}/jobs`, { method: 'POST', json: { id, group: 'fan', data: 1 } });
  if (res.status !== 201) throw new Error(`events: POST /jobs answered ${res.status}: ${(await res.text()).slice(0, 300)}`);
}

const completedOf = (tap: EventTap, id: string) => tap.events.find((e) => e.id === id && e.event === 'completed');

/** Stack 2: N streams of one queue on one Worker. */
async function subscribers(config: EventsConfig, log: (line: string) => void): Promise<EventSubscribers> {
  const n = config.subscribers;
  const stack = await startE2eStack(log);
  const taps: EventTap[] = [];
  try {
    const put = await stack.api(`/v1/queues/${FANOUT_QUEUE}`, { method: 'PUT', json: { endpoint: stack.endpoint.url, keepCompleted: 0, dedupWindowMs: 0 } });
    if (put.status !== 200) throw new Error(`events: PUT queue answered ${put.status}: ${await put.text()}`);
    const url = streamUrl(stack, FANOUT_QUEUE);
    // The hub, the stream path and the drain loaded before "before": what follows is the streams' own.
    const warm = await openTap(url, stack.adminToken);
    await enqueueOne(stack, FANOUT_QUEUE, 'fw');
    await until(() => completedOf(warm, 'fw') !== undefined, REACH_TIMEOUT_MS, () => 'the warm-up job\'s completed');
    warm.close();
    await sleep(3000);
    const before = workerdRssKiB();

    log(`events: ${n} queue streams on one Worker`);
    const t0 = performance.now();
    for (let i = 0; i < n; i += 100) {
      taps.push(...(await Promise.all(Array.from({ length: Math.min(100, n - i) }, () => openTap(url, stack.adminToken)))));
    }
    const attachMs = round(performance.now() - t0, 1);
    await sleep(3000);
    const after = workerdRssKiB();

    log(`events: ${n} idle streams, Redis commands over ${config.idleWindowMs} ms`);
    await waitQuiet(stack);
    await resetStats(stack.admin);
    await sleep(config.idleWindowMs);
    const idleCommands = await commandStats(stack.admin);

    log(`events: ${config.fanoutJobs} jobs, each one's completed timed to all ${n} streams`);
    const toFirst: number[] = [];
    const toLast: number[] = [];
    let notReachingAll = 0;
    for (let k = 0; k < config.fanoutJobs; k++) {
      const id = `f${k}`;
      await enqueueOne(stack, FANOUT_QUEUE, id);
      // Each read is timed when it comes; the looking here only ends the wait, so it looks
      // seldom and only at the streams still waiting, to leave the event loop to the readers.
      let waiting = taps;
      const deadline = performance.now() + REACH_TIMEOUT_MS;
      while (waiting.length > 0 && performance.now() < deadline) {
        await sleep(20);
        waiting = waiting.filter((tap) => !completedOf(tap, id));
      }
      const got = taps.map((tap) => completedOf(tap, id)).filter((e) => e !== undefined);
      if (got.length < n) notReachingAll++;
      if (got.length > 0) {
        toFirst.push(Math.min(...got.map((e) => e.readAt)) - got[0]!.at);
        toLast.push(Math.max(...got.map((e) => e.readAt)) - got[0]!.at);
      }
      await sleep(200);
    }
    const beforeKiB = sum(before.values());
    const afterKiB = sum(after.values());
    return {
      subscribers: n,
      attachMs,
      rssKiB: {
        before: beforeKiB,
        after: afterKiB,
        byProcess: [...after].map(([pid, kib]) => ({ pid, before: before.get(pid) ?? 0, after: kib })),
      },
      kibPerSubscriber: round((afterKiB - beforeKiB) / n, 1),
      idle: { windowMs: config.idleWindowMs, commands: totalCalls(idleCommands), commandsByCommand: idleCommands },
      jobs: config.fanoutJobs,
      toFirstMs: percentiles(toFirst),
      toLastMs: percentiles(toLast),
      notReachingAll,
      gaps: sum(taps.map((tap) => tap.gaps)),
      endedEarly: taps.filter((tap) => tap.ended()).length,
    };
  } finally {
    for (const tap of taps) tap.close();
    await stack.close();
  }
}

/** Stack 3: jobs sent to one Worker, the stream read from another, one hub for all. */
async function crossWorker(config: EventsConfig, log: (line: string) => void): Promise<CrossWorkerLatency> {
  const workers = config.crossWorkers;
  const producer = 1;
  // With two, the stream is on the hub's own Worker: the jobs' Worker is the other.
  const subscriber = workers > 2 ? workers - 1 : 0;
  const stack = await startE2eStack(log, { workers, sharedHub: true });
  let tap: EventTap | undefined;
  try {
    // Every request to the producer: its drains deliver the jobs and complete them there.
    const pinned: E2eStack = { ...stack, api: (path, init = {}) => stack.api(path, { ...init, worker: producer }) };
    await warmUp(pinned, E2E_CONFIG, log);
    tap = await openTap(streamUrl(stack, QUEUE, subscriber), stack.adminToken);
    // The first events load the path between the processes (the dev registry's proxy): not measured.
    await latencyRun(pinned, tap, Array.from({ length: 20 }, (_, i) => `xw${i}`), config.latencyRatePerSecond, log);
    log(`events: latency across Workers, ${config.latencyJobs} single jobs to Worker ${producer}, the stream on Worker ${subscriber}, the hub in Worker 0`);
    const ids = Array.from({ length: config.latencyJobs }, (_, i) => `x${i}`);
    return { workers, producer, subscriber, ...(await latencyRun(pinned, tap, ids, config.latencyRatePerSecond, log)) };
  } finally {
    tap?.close();
    await stack.close();
  }
}

export async function runEvents(config: EventsConfig, log: (line: string) => void): Promise<EventsResult> {
  const loadAverage1m = round(os.loadavg()[0]!, 2);
  const { commands, latency } = await oneWorker(config, log);
  const subs = await subscribers(config, log);
  const cross = await crossWorker(config, log);
  return { definitions: EVENTS_DEFINITIONS, loadAverage1m, config, latency, crossWorker: cross, commands, subscribers: subs };
}

/** The headline figures of the result's top level (the rows themselves are under `events`). */
export function eventsHeadline(r: EventsResult) {
  const s = r.subscribers;
  return {
    eventLatencyMs: { p50: r.latency.latencyMs.p50, p95: r.latency.latencyMs.p95 },
    eventCrossWorkerLatencyMs: { p50: r.crossWorker.latencyMs.p50, p95: r.crossWorker.latencyMs.p95 },
    eventCommandsPerJob: { without: r.commands.without.commandsPerJob, with: r.commands.with.commandsPerJob },
    eventSubscribers: {
      subscribers: s.subscribers,
      kibPerSubscriber: s.kibPerSubscriber,
      idleCommands: s.idle.commands,
      toLastMs: { p50: s.toLastMs.p50, max: s.toLastMs.max },
    },
  };
}
