// The human-readable report: headline metrics against the budgets of docs/cost.md, then the
// per-command breakdowns that show where the commands go.
import type { BUDGETS } from './budgets';
import type { BurstResult } from './burst';
import type { E2eConfig, E2eThroughput, NodeServerResult, WorkerCpuResult } from './e2e';
import type { CommandCounts } from './redis-stats';
import type { BenchResult } from './result';
import type { WorkerBundleResult } from './worker-bundle';
import type { WorkerdCpu } from './workerd-cpu';

export const fmt = (n: number, digits = 0) => n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });

/** Columns padded to their widest cell: the first left-aligned, the others right-aligned. */
export function table(rows: string[][], header: string[]): string {
  const all = [header, ...rows];
  const widths = header.map((_, c) => Math.max(...all.map((row) => (row[c] ?? '').length)));
  const line = (row: string[]) =>
    row.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!))).join('  ').trimEnd();
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

/** One column per breakdown, one row per command, commands ordered by the last column. */
export function commandTable(columns: [string, CommandCounts][]): string {
  const names = new Set(columns.flatMap(([, counts]) => Object.keys(counts)));
  const last = columns[columns.length - 1]![1];
  const ordered = [...names].sort((a, b) => (last[b] ?? 0) - (last[a] ?? 0) || a.localeCompare(b));
  const sums = columns.map(([, counts]) => Object.values(counts).reduce((s, n) => s + n, 0));
  const rows = ordered.map((name) => [name, ...columns.map(([, counts]) => (counts[name] === undefined ? '-' : fmt(counts[name]!, 3)))]);
  rows.push(['total', ...sums.map((s) => fmt(s, 3))]);
  return table(rows, ['command', ...columns.map(([title]) => title)]);
}

const pct = (p: { p50: number; p95: number; p99: number }) => `${fmt(p.p50, 1)} / ${fmt(p.p95, 1)} / ${fmt(p.p99, 1)}`;

/** Flow control (issue 10): each feature's commands per job against a default queue, rate limit accuracy, dedup memory. */
function formatFlow(r: BenchResult): string {
  const f = r.flow;
  const b = r.budgets;
  const verdict = (value: number, max: number) => (value <= max ? 'ok' : 'OVER');
  const costRows = f.costs.map((row, i) => [
    row.name,
    row.jobs,
    fmt(row.commandsPerJob, 2),
    `${fmt(row.enqueueCommandsPerJob, 2)} / ${fmt(row.drainCommandsPerJob, 2)}`,
    i === 0 ? '' : row.notMeasured ? 'not measured' : `${row.extraCommandsPerJob >= 0 ? '+' : ''}${fmt(row.extraCommandsPerJob, 2)}`,
    row.budget === null ? '' : `<= +${row.budget}`,
    row.budget === null || row.notMeasured ? '' : verdict(row.extraCommandsPerJob, row.budget),
  ]);
  // docs/cost.md gives one decimal: a figure that rounds to it has not risen.
  const main = Math.round(r.commandsPerJob * 10) / 10;
  costRows.push([
    'default path: the throughput run above',
    'no id, priority 0',
    fmt(r.commandsPerJob, 2),
    `${fmt(r.throughput.enqueueCommandsPerJob, 2)} / ${fmt(r.throughput.drainCommandsPerJob, 2)}`,
    '',
    `<= ${b.defaultCommandsPerJob} (docs/cost.md)`,
    verdict(main, b.defaultCommandsPerJob),
  ]);
  const rate = (name: string, a: BenchResult['flow']['queueRateLimit']) => [
    `${name} ${fmt(a.limit.max)} per ${fmt(a.limit.periodMs)} ms`,
    `${fmt(a.jobs)} / ${fmt(a.groups)}`,
    `${fmt(a.maxStartsInWindow)}`,
    `<= ${fmt(a.limit.max)}`,
    verdict(a.maxStartsInWindow, a.limit.max),
    fmt(a.achievedPerPeriod, 2),
    fmt(a.spanMs),
    `${fmt(a.emptyReserves)} / ${fmt(a.ticks)}`,
  ];
  const d = f.dedupMemory;
  const dedup = d.measured
    ? `Dedup window memory: ${fmt(d.ids)} jobs with ${d.idLength}-character ids completed (keepCompleted 0): ${fmt(d.bytesPerId)} bytes of ` +
      `used_memory per remembered id (the dedup zset: ${fmt(d.dedupKeyBytesPerId, 1)} bytes per id, ${d.encoding}); used_memory ` +
      `${fmt(d.usedMemory.before)} -> ${fmt(d.usedMemory.remembered)} -> ${fmt(d.usedMemory.afterWindow)} once the window passed ` +
      `(${fmt(d.rememberedAfterWindow)} ids left, trimmed by ${d.trimmedBy}; the dedup zset then ${fmt(d.dedupKeyBytesAfterWindow)} bytes)`
    : `Dedup window memory: not measured (${d.reason})`;
  const c = r.config;
  return [
    `Flow control: each row enqueues ${fmt(f.jobs)} jobs over ${fmt(f.groups)} groups and drains them as the throughput run does ` +
      `(${c.producers} x enqueueBatch(${c.batchSize}), ${c.reservers} x settle(outcomes, ${c.reserveBatch})), keepCompleted 0; extra = against the default queue's row`,
    table(costRows, ['queue', 'jobs', 'commands/job', 'enqueue / drain', 'extra/job', 'budget', '']),
    '',
    `Rate limits, real clock: ${c.flow.rateReservers} reservers loop settle(outcomes, ${c.reserveBatch}) and retry every ${f.pollMs} ms after an empty ` +
      `reserve; a ticker ticks the queue when the due index says it is due (looked at every ${f.pollMs} ms). Starts by the engine's clock; ` +
      'achieved = jobs x periodMs / (last start - first start + periodMs), the slowest group\'s for a group limit',
    table(
      [rate('queue rateLimit', f.queueRateLimit), rate('groupRateLimit', f.groupRateLimit)],
      ['limit', 'jobs / groups', 'most starts in a window', 'max', '', 'achieved per period', 'span ms', 'empty reserves / ticks'],
    ),
    '',
    dedup,
    '',
    'Redis commands per job, flow rows:',
    commandTable(f.costs.map((row) => [row.key, row.commandsPerJobByCommand])),
  ].join('\n');
}

/** The end-to-end section: the Worker in Miniflare pushing to a loopback endpoint. */
/** The Worker's bundle against its budget, and its cold start in workerd. */
export function formatWorkerBundle(w: WorkerBundleResult, b: typeof BUDGETS): string {
  const st = w.startup;
  return [
    table(
      [
        ['workerBundleBytes: minified', fmt(w.bytes.minified), `<= ${fmt(b.workerBundleMinifiedBytes)}`, w.bytes.minified <= b.workerBundleMinifiedBytes ? 'ok' : 'OVER'],
        ['  gzipped', fmt(w.bytes.gzipped), '', ''],
        ['workerStartupMs: load the Worker, answer GET / (median)', fmt(st.medianMs, 1), 'no budget', ''],
        ['  the same, an empty Worker', fmt(st.emptyWorkerMedianMs, 1), '', ''],
      ],
      ['Worker (wrangler deploy --dry-run --minify; workerd via Miniflare)', 'value', 'budget', ''],
    ),
    `startup: ${st.runs} runs each, a new workerd per run, the first GET / less the second; samples (ms) ${st.samplesMs.map((v) => fmt(v, 1)).join(', ')}; ` +
      `empty Worker ${st.emptyWorkerSamplesMs.map((v) => fmt(v, 1)).join(', ')}`,
  ].join('\n');
}

/** The batch run's workerd CPU per job and the burst (issue 20), against their budgets. */
function workerCpuTable(batchCpu: WorkerdCpu, burst: BurstResult, b: typeof BUDGETS): string {
  const ok = (value: number, max: number) => (value <= max ? 'ok' : 'OVER');
  const each = (cpu: WorkerdCpu) => `${cpu.processes}; ${cpu.msByProcess.map((ms) => fmt(ms)).join(' + ')}`;
  return table(
    [
      ['workerCpuMsPerJob (batch run, every workerd process)', fmt(batchCpu.msPerJob, 3), `<= ${b.workerCpuMsPerJob}`, ok(batchCpu.msPerJob, b.workerCpuMsPerJob)],
      ['  workerd processes; CPU ms of each', each(batchCpu), '', ''],
      [`burst: ${fmt(burst.jobs)} jobs over ${fmt(burst.groups)} groups, ${fmt(burst.gets)} GETs of the queue`, '', '', ''],
      ['  getP99Ms', fmt(burst.getP99Ms, 1), `<= ${b.burstGetP99Ms}`, ok(burst.getP99Ms, b.burstGetP99Ms)],
      ['  getMaxMs', fmt(burst.getMaxMs, 1), `<= ${fmt(b.burstGetMaxMs)}`, ok(burst.getMaxMs, b.burstGetMaxMs)],
      ['  GET p50 / p95 (ms)', `${fmt(burst.getMs.p50, 1)} / ${fmt(burst.getMs.p95, 1)}`, '', ''],
      ['  connectionResets (GETs without an answer)', fmt(burst.connectionResets), `<= ${b.burstConnectionResets}`, ok(burst.connectionResets, b.burstConnectionResets)],
      ['  GETs answered other than 200', fmt(burst.getErrors), '', ''],
      [`  failedTicks (of ${fmt(burst.ticks)}, each p50 / max ${fmt(burst.tickMs.p50)} / ${fmt(burst.tickMs.max)} ms)`, fmt(burst.failedTicks), `<= ${b.burstFailedTicks}`, ok(burst.failedTicks, b.burstFailedTicks)],
      ['  drain jobs/s (first batch sent -> last arrival)', fmt(burst.drainJobsPerSecond), '', ''],
      ['  workerd CPU ms per job (GETs and cron runs included)', fmt(burst.workerCpu.msPerJob, 3), '', ''],
      ['  workerd processes; CPU ms of each', each(burst.workerCpu), '', ''],
      ['  jobs not ended afterwards (waiting, delayed, active)', fmt(burst.unfinished), '0', ok(burst.unfinished, 0)],
    ],
    ['workerd CPU and the burst', 'value', 'budget', ''],
  );
}

/** `npm run bench -- --worker-cpu`. */
export function formatWorkerCpu(r: WorkerCpuResult, b: typeof BUDGETS): string {
  const t = r.throughput;
  return [
    `workerd CPU: load ${fmt(r.loadAverage1m, 2)} at start; batch run ${fmt(t.jobs)} jobs in ${fmt(t.totalMs)} ms (${fmt(t.jobsPerSecond)} jobs/s), ` +
      `cron runs ${t.scheduledRuns}; burst queue counts after ${JSON.stringify(r.burst.countsAfter)}`,
    '',
    workerCpuTable(t.workerCpu, r.burst, b),
  ].join('\n');
}

/**
 * The Worker's batch run beside the same run through `groupq serve` over TCP: jobs/s, commands
 * per job and the ratio of each, then the commands side by side and what went wrong, if anything.
 */
export function formatNodeServer(worker: E2eThroughput, node: NodeServerResult, c: E2eConfig): string {
  const n = node.throughput;
  const ratio = (a: number, b: number) => (b === 0 ? '-' : `${fmt(a / b, 2)}x`);
  const row = (name: string, t: E2eThroughput | NodeServerResult['throughput'], cpu: { msPerJob: number }) => [
    name,
    fmt(t.jobsPerSecond),
    fmt(t.commandsPerJob, 2),
    fmt(t.restRequestsPerJob, 4),
    fmt(cpu.msPerJob, 3),
    fmt(t.orderViolations),
    fmt(t.scheduledRuns),
  ];
  const warnings: string[] = [];
  if (n.scheduledRuns > 0) warnings.push(`groupq serve: the drains stalled; the run waited for its cron ${n.scheduledRuns} time(s) to finish (counted in)`);
  if (n.duplicates > 0) warnings.push(`groupq serve: ${n.duplicates} job(s) delivered more than once`);
  if (Object.values(n.countsAfter).some((count) => count !== 0)) warnings.push(`groupq serve: the queue was not empty afterwards: ${JSON.stringify(n.countsAfter)}`);
  if (n.orderViolations > 0) warnings.push(`groupq serve: ${n.orderViolations} FIFO order violations seen at the endpoint`);
  return [
    `The Worker over REST and groupq serve over TCP, the same batch run: ${fmt(n.jobs)} jobs over ${fmt(c.groups)} groups, ` +
      `POST /jobs/batch of ${c.batchSize} from ${c.producers} producers, each after a warm-up of ${fmt(c.warmupJobs)}; groupq serve: load ${fmt(node.loadAverage1m, 2)} at start`,
    table(
      [
        row('the Worker (workerd, REST bridge)', worker, worker.workerCpu),
        row('groupq serve (Node, TCP)', n, n.serverCpu),
        ['groupq serve / the Worker', ratio(n.jobsPerSecond, worker.jobsPerSecond), ratio(n.commandsPerJob, worker.commandsPerJob), '', ratio(n.serverCpu.msPerJob, worker.workerCpu.msPerJob), '', ''],
      ],
      ['batch run', 'jobs/s', 'commands/job', 'REST requests/job', 'CPU ms/job', 'FIFO violations', 'cron runs'],
    ),
    'CPU ms/job: every workerd process, or the groupq serve process (/proc/<pid>/stat); cron runs: fired in workerd, waited for in groupq serve (its own, every minute)',
    ...warnings.map((w) => `WARNING ${w}`),
    '',
    'Redis commands per job, batch run:',
    commandTable([
      ['the Worker', worker.commandsPerJobByCommand],
      ['groupq serve', n.commandsPerJobByCommand],
    ]),
  ].join('\n');
}

function formatE2e(r: BenchResult): string {
  const { throughput: t, latency: l, definitions: d } = r.e2e;
  const c = r.config.e2e;
  const b = r.budgets;
  const ok = (value: number) => (value <= b.commandsPerJob ? 'ok' : 'OVER');
  const headline = table(
    [
      [`e2eJobsPerSecond (batches of ${c.batchSize}, ${c.producers} producers)`, fmt(r.e2eJobsPerSecond), '', ''],
      ['  enqueue only (last batch answered)', fmt(t.enqueueJobsPerSecond), '', ''],
      ['  batch request p50 / p95 / p99 (ms)', pct(t.batchRequestMs), '', ''],
      [`e2eLatencyMs p50 / p95 / p99 (single jobs at ${fmt(l.targetRatePerSecond)}/s)`, pct(r.e2eLatencyMs), '', ''],
      ['  max', fmt(l.latencyMs.max, 1), '', ''],
      ['  enqueue answered p50 / p95 / p99 (ms)', pct(l.enqueueResponseMs), '', ''],
      ['e2eCommandsPerJob (batch run)', fmt(r.e2eCommandsPerJob, 2), `<= ${b.commandsPerJob} (aim ${b.commandsPerJobAim})`, ok(r.e2eCommandsPerJob)],
      [`  single jobs at ${fmt(l.targetRatePerSecond)}/s`, fmt(l.commandsPerJob, 2), `<= ${b.commandsPerJob} (aim ${b.commandsPerJobAim})`, ok(l.commandsPerJob)],
      ['singleJobE2eCommands (a job alone on an idle queue)', fmt(r.e2e.lone.commandsPerJob, 2), '<= 12', r.e2e.lone.commandsPerJob <= 12 ? 'ok' : 'OVER'],
      ['  its REST requests; the later idle scheduler visit', `${fmt(r.e2e.lone.restRequestsPerJob, 2)}; ${fmt(r.e2e.lone.laterVisitCommands)} commands`, '', ''],
      ['singleJobWithCallbackE2eCommands (the same, with a callbackUrl)', fmt(r.e2e.loneWithCallback.commandsPerJob, 2), 'no budget', ''],
      ['  its REST requests', fmt(r.e2e.loneWithCallback.restRequestsPerJob, 2), '', ''],
      ['e2eRestRequestsPerJob (batch run)', fmt(r.e2eRestRequestsPerJob, 4), '', ''],
      [`  single jobs at ${fmt(l.targetRatePerSecond)}/s`, fmt(l.restRequestsPerJob, 4), '~2 (docs/cost.md)', ''],
    ],
    ['end to end through the Worker', 'value', 'budget', ''],
  );
  const warnings: string[] = [];
  for (const [name, run] of [['batch run', t], ['single-job run', l]] as const) {
    if (run.scheduledRuns > 0) warnings.push(`${name}: the drains stalled; the cron was fired ${run.scheduledRuns} time(s) to finish (counted in)`);
    if (run.duplicates > 0) warnings.push(`${name}: ${run.duplicates} job(s) delivered more than once`);
    const left = Object.entries(run.countsAfter).filter(([, n]) => n !== 0);
    if (left.length > 0) warnings.push(`${name}: the queue was not empty afterwards: ${JSON.stringify(run.countsAfter)}`);
  }
  if (t.orderViolations > 0) warnings.push(`batch run: ${t.orderViolations} FIFO order violations seen at the endpoint`);
  return [
    `End to end: ${d.runtime}; load ${fmt(r.e2e.loadAverage1m, 2)} at start`,
    `batch run: ${fmt(t.jobs)} jobs over ${fmt(c.groups)} groups, queue concurrency ${c.concurrency}, keepCompleted 0; ` +
      `${fmt(t.enqueueMs)} ms enqueue, ${fmt(t.totalMs)} ms to the last arrival; ${fmt(t.restRequests)} REST requests; ` +
      `cron runs ${t.scheduledRuns}; FIFO order violations ${t.orderViolations}`,
    `single-job run: ${fmt(l.jobs)} POST /jobs paced at ${fmt(l.targetRatePerSecond)}/s (achieved ${fmt(l.achievedRatePerSecond, 1)}/s, ` +
      `timer at most ${fmt(l.maxSendLagMs, 1)} ms late); ${fmt(l.restRequests)} REST requests; cron runs ${l.scheduledRuns}`,
    '',
    headline,
    '',
    formatNodeServer(t, r.nodeServer, c),
    '',
    workerCpuTable(t.workerCpu, r.burst, b),
    ...(warnings.length > 0 ? ['', ...warnings.map((w) => `WARNING ${w}`)] : []),
    '',
    `jobs/s = ${d.jobsPerSecond}`,
    `latency = ${d.latencyMs}`,
    `commands/job = ${d.commandsPerJob}`,
    `REST requests/job = ${d.restRequestsPerJob}`,
    '',
    'Redis commands per job through the Worker:',
    commandTable([
      [`single ${fmt(l.targetRatePerSecond)}/s`, l.commandsPerJobByCommand],
      ['batch run', t.commandsPerJobByCommand],
    ]),
  ].join('\n');
}

export function formatReport(r: BenchResult): string {
  const t = r.throughput;
  const s = r.singleJob;
  const m = r.memory;
  const b = r.budgets;
  const ok = (value: number, max: number) => (value <= max ? 'ok' : 'OVER');
  const headline = table(
    [
      ['jobsPerSecond (enqueue + drain)', fmt(r.jobsPerSecond), '', ''],
      ['  enqueue only', fmt(t.enqueueJobsPerSecond), '', ''],
      ['  drain only', fmt(t.drainJobsPerSecond), '', ''],
      ['commandsPerJob', fmt(r.commandsPerJob, 2), `<= ${b.commandsPerJob} (aim ${b.commandsPerJobAim})`, ok(r.commandsPerJob, b.commandsPerJob)],
      ['  enqueue / drain', `${fmt(t.enqueueCommandsPerJob, 2)} / ${fmt(t.drainCommandsPerJob, 2)}`, '', ''],
      ['restRequestsPerJob', fmt(r.restRequestsPerJob, 4), '', ''],
      ['bytesPerWaitingJob (used_memory)', fmt(r.bytesPerWaitingJob), `<= ${b.bytesPerWaitingJob}`, ok(r.bytesPerWaitingJob, b.bytesPerWaitingJob)],
      ['  used_memory_dataset per job', fmt(m.datasetBytesPerWaitingJob), '', ''],
      ['idleCommandsPerTick: a cron pass, queue without jobs', fmt(r.idle.empty.commandsPerTick, 2), `<= ${b.idleCommandsPerTick}`, ok(r.idle.empty.commandsPerTick, b.idleCommandsPerTick)],
      ['  a queue with one future delayed job', fmt(r.idle.delayedJob.commandsPerTick, 2), `<= ${b.idleCommandsPerTick}`, ok(r.idle.delayedJob.commandsPerTick, b.idleCommandsPerTick)],
      ['  a queue with one live long lease', fmt(r.idle.activeLease.commandsPerTick, 2), `<= ${b.idleCommandsPerTick}`, ok(r.idle.activeLease.commandsPerTick, b.idleCommandsPerTick)],
      // The budget is per job of the run above (docs/cost.md); a lone job on an idle queue pays
      // three scripts' fixed costs alone ("a lone job pays the fixed cost of its script calls by
      // itself"), shown for what it is.
      ['lone job: enqueue, reserve, complete (cold path)', fmt(r.singleJobCommands, 2), 'no budget', ''],
      ['  as a drain runs it (settle n=16 twice)', fmt(s.drain.commandsPerJob, 2), 'no budget', ''],
      ['  REST requests per lone job', fmt(s.api.restRequestsPerJob, 2), '', ''],
      ['waitFirstSecondCommands: GET job ?waitMs=, its first second', fmt(r.wait.firstSecondCommands, 2), `<= ${b.waitFirstSecondCommands}`, ok(r.wait.firstSecondCommands, b.waitFirstSecondCommands)],
      ['waitCommandsPerSecond: each second after', fmt(r.wait.commandsPerSecond, 2), `<= ${b.waitCommandsPerSecond}`, ok(r.wait.commandsPerSecond, b.waitCommandsPerSecond)],
      ...r.scrape.rows.map((row) => [
        `scrape of GET /metrics, ${fmt(row.queues)} queues: most / steady commands; oldest figures (s)`,
        `${fmt(row.maxCommands)} / ${fmt(row.meanCommands, 1)}; ${fmt(row.oldestSeconds)}`,
        `<= ${b.scrapeCommandsMax}`,
        ok(row.maxCommands, b.scrapeCommandsMax),
      ]),
      ['historyBytes: a record\'s attempt history, never run / 1 / 10 attempts', `${fmt(r.historyBytes.waitingJob)} / ${fmt(r.historyBytes.failedAfter1Attempt)} / ${fmt(r.historyBytes.failedAfter10Attempts)}`, 'waiting: 0', r.historyBytes.waitingJob === 0 ? 'ok' : 'OVER'],
      ['settle latency p50 / p95 / p99 (ms)', `${fmt(t.settleLatencyMs.p50, 1)} / ${fmt(t.settleLatencyMs.p95, 1)} / ${fmt(t.settleLatencyMs.p99, 1)}`, '', ''],
    ],
    ['metric', 'value', 'budget', ''],
  );

  const structures = table(
    Object.entries(m.byStructure).map(([name, v]) => [name, fmt(v.bytesPerJob, 1), v.encoding, fmt(v.keys)]),
    ['structure (MEMORY USAGE)', 'bytes/job', 'encoding', 'keys'],
  );

  const c = r.config;
  return [
    `groupq engine benchmark: ${fmt(c.jobs)} jobs over ${fmt(c.groups)} groups, ${c.payloadBytes}-byte payloads`,
    `machine: ${r.machine.cpus} x ${r.machine.cpuModel}, ${fmt(r.machine.totalMemoryMb)} MB, load ${fmt(r.machine.loadAverage1m, 2)} at start, node ${r.machine.node}, ` +
      `redis ${r.machine.redis} (${r.machine.redisAllocator}, appendonly ${r.machine.redisAppendonly ? 'yes' : 'no'}), @upstash/redis ${r.machine.upstashRedis}`,
    `run: ${c.producers} producers x enqueueBatch(${c.batchSize}); ${c.reservers} reservers x settle(outcomes, ${c.reserveBatch}); ` +
      `queue concurrency ${c.concurrency}, keepCompleted 0; total ${fmt(r.elapsedMs / 1000, 1)} s`,
    '',
    headline,
    '',
    `throughput run: ${fmt(t.enqueueMs)} ms enqueue + ${fmt(t.drainMs)} ms drain; ${fmt(t.settleCalls)} settle calls ` +
      `(${fmt(t.jobsPerSettle, 2)} jobs each, ${t.emptySettles} empty); REST requests ${fmt(t.restRequests.enqueue)} enqueue + ` +
      `${fmt(t.restRequests.drain)} drain; FIFO order violations ${t.orderViolations}`,
    `CPU ms enqueue: node ${fmt(t.cpuMs.enqueue.node)}, redis ${fmt(t.cpuMs.enqueue.redis)}; drain: node ${fmt(t.cpuMs.drain.node)}, ` +
      `redis ${fmt(t.cpuMs.drain.redis)} (node = the 16+4 clients and the in-process REST bridge)`,
    '',
    'Redis commands per job, throughput run (INFO commandstats, script-internal commands included):',
    commandTable([
      ['enqueue', t.enqueueCommandsPerJobByCommand],
      ['drain', t.drainCommandsPerJobByCommand],
      ['total', t.commandsPerJobByCommand],
    ]),
    '',
    `Lone job, commands per job (${s.iterations} runs), plain API (reserve 1, complete) | drain-style (settle n=${c.reserveBatch}):`,
    commandTable([
      ['enqueue', s.api.commandsPerPhaseByCommand.enqueue],
      ['reserve', s.api.commandsPerPhaseByCommand.reserve],
      ['complete', s.api.commandsPerPhaseByCommand.complete],
      ['api total', s.api.commandsPerJobByCommand],
      ['drain total', s.drain.commandsPerJobByCommand],
    ]),
    '',
    'Idle tick, commands per tick:',
    commandTable([
      ['no jobs', r.idle.empty.commandsPerTickByCommand],
      ['delayed job', r.idle.delayedJob.commandsPerTickByCommand],
      ['live lease', r.idle.activeLease.commandsPerTickByCommand],
    ]),
    '',
    `GET job ?waitMs=${fmt(r.wait.waitMs)} that times out: ${fmt(r.wait.commands)} commands (${fmt(r.wait.plainReadCommands)} of them the final read, ` +
      `as a plain GET), ${fmt(r.wait.restRequests)} REST requests: ${fmt(r.wait.firstSecondCommands)} HGETs in its first second, ` +
      `${fmt(r.wait.commandsPerSecond, 2)} a second after`,
    '',
    `Memory: used_memory ${fmt(m.usedMemoryBefore)} -> ${fmt(m.usedMemoryAfter)} bytes for ${fmt(c.jobs)} waiting jobs` +
      `${m.memoryPurge ? ' (MEMORY PURGE before each read)' : ''}`,
    structures,
    `sample record: ${m.sampleRecord.bytes} bytes = state ${m.sampleRecord.stateJson} + newline + ${m.sampleRecord.payloadBytes}-byte payload; ` +
      `group member ${m.sampleGroupMemberBytes} bytes`,
    '',
    formatFlow(r),
    '',
    formatE2e(r),
    '',
    formatWorkerBundle(r.workerBundle, r.budgets),
  ].join('\n');
}
