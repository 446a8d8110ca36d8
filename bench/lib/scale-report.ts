// The scale section of the human-readable report: one table per group of rows, then whether each
// figure is flat across the rows.
import { fmt, table } from './report';
import type { Flatness, ScaleResult } from './scale';

function flatLine(flat: Record<string, Flatness>): string {
  const parts = Object.entries(flat).map(([metric, f]) => `${metric} ${f.flat ? 'flat' : 'NOT flat'} (worse ${fmt(f.worse * 100, 0)}%, spread ${fmt(f.spread * 100, 0)}%, x${fmt(f.ratio, 2)})`);
  return `  ${parts.join('; ')}`;
}

type Column<Row> = [header: string, cell: (row: Row) => string];

function rowsTable<Row>(rows: Row[], columns: Column<Row>[]): string {
  return table(
    rows.map((row) => columns.map(([, cell]) => cell(row))),
    columns.map(([header]) => header),
  );
}

export function formatScale(s: ScaleResult): string {
  const g = s.groups;
  const groups = rowsTable(g.rows, [
    ['groups', (r) => fmt(r.groups)],
    ['jobs', (r) => fmt(r.jobs)],
    ['jobs/s', (r) => fmt(r.jobsPerSecond)],
    ['enqueue/s', (r) => fmt(r.enqueueJobsPerSecond)],
    ['drain/s', (r) => fmt(r.drainJobsPerSecond)],
    ['commands/job', (r) => fmt(r.commandsPerJob, 2)],
    ['REST/job', (r) => fmt(r.restRequestsPerJob, 4)],
    ['jobs/settle', (r) => fmt(r.jobsPerSettle, 1)],
  ]);
  const w = s.waiting;
  const waiting = rowsTable(w.rows, [
    ['waiting jobs', (r) => fmt(r.waitingJobs)],
    ['enqueue/s', (r) => fmt(r.enqueueJobsPerSecond)],
    ['drain/s', (r) => fmt(r.drainJobsPerSecond)],
    ['commands/job (enq + drain)', (r) => `${fmt(r.commandsPerJob, 2)} (${fmt(r.enqueueCommandsPerJob, 2)} + ${fmt(r.drainCommandsPerJob, 2)})`],
    ['REST/job', (r) => fmt(r.restRequestsPerJob, 4)],
    ['bytes/job', (r) => (r.bytesPerWaitingJob === null ? 'too small' : fmt(r.bytesPerWaitingJob))],
    ['drain CPU ms/1k node / redis', (r) => `${fmt(r.cpuMsPer1000Jobs.drain.node)} / ${fmt(r.cpuMsPer1000Jobs.drain.redis)}`],
  ]);
  const i = s.idle;
  const idle = rowsTable(i.rows, [
    ['idle queues', (r) => fmt(r.queues)],
    ['commands/pass', (r) => fmt(r.commandsPerPass, 1)],
    ['REST/pass', (r) => fmt(r.restRequestsPerPass, 1)],
    ['commands/queue', (r) => fmt(r.commandsPerQueue, 3)],
    ['REST/queue', (r) => fmt(r.restRequestsPerQueue, 3)],
    ['pass ms', (r) => fmt(r.passMs)],
  ]);
  const k = s.workers;
  const workers = rowsTable(k.rows, [
    ['Worker instances', (r) => fmt(r.workers)],
    ['jobs', (r) => fmt(r.jobs)],
    ['jobs/s', (r) => fmt(r.jobsPerSecond)],
    ['enqueue/s', (r) => fmt(r.enqueueJobsPerSecond)],
    ['commands/job', (r) => fmt(r.commandsPerJob, 2)],
    ['REST/job', (r) => fmt(r.restRequestsPerJob, 4)],
    ['cron runs', (r) => fmt(r.scheduledRuns)],
  ]);
  const problems = [
    ...g.rows.filter((r) => r.orderViolations > 0).map((r) => `groups ${r.groups}: ${r.orderViolations} FIFO order violations`),
    ...w.rows.filter((r) => r.orderViolations > 0).map((r) => `waiting ${r.waitingJobs}: ${r.orderViolations} FIFO order violations`),
    ...k.rows.filter((r) => r.orderViolations > 0 || r.duplicates > 0).map((r) => `workers ${r.workers}: ${r.orderViolations} order violations, ${r.duplicates} duplicates`),
  ];
  const load = (l: number) => `load ${fmt(l, 2)} at start`;
  return [
    `Scale (${fmt(s.elapsedMs / 1000, 0)} s). ${s.definitions.flat}`,
    '',
    `Groups: ${fmt(s.sizes.groupsJobs)} jobs over N groups; ${load(g.loadAverage1m)}`,
    groups,
    flatLine(g.flat),
    '',
    `Waiting jobs: N jobs, ${fmt(s.sizes.waitingJobsPerGroup)} per group, enqueued, then drained; ${load(w.loadAverage1m)}`,
    waiting,
    flatLine(w.flat),
    '',
    `Idle cron pass: the whole scheduled() over N idle queues, ${s.sizes.idlePasses} passes averaged; ${load(i.loadAverage1m)}`,
    idle,
    flatLine(i.flat),
    '',
    `Worker instances: ${fmt(s.sizes.workersJobs)} jobs end to end, ${s.sizes.workersProducers} producers round-robin over N workerd processes; ${load(k.loadAverage1m)}`,
    workers,
    flatLine(k.flat),
    ...(problems.length > 0 ? ['', ...problems.map((p) => `WARNING ${p}`)] : []),
    '',
    `groups: ${s.definitions.groups}`,
    `waiting: ${s.definitions.waiting}`,
    `idle: ${s.definitions.idle}`,
    `workers: ${s.definitions.workers}`,
  ].join('\n');
}
