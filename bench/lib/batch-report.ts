// The batch rows as `npm run bench -- --batch` prints them (bench/lib/batch.ts measures them):
// the hot group's jobs/s by maxSize against issue 31's goals, commands per job over 1,000 groups
// with and without batches and where they go (per command, per script), and the order checker.
import type { BatchResult, BatchRun } from './batch';
import type { CommandCounts } from './redis-stats';
import { commandTable, fmt, table } from './report';

const ok = (pass: boolean) => (pass ? 'ok' : 'MISSED');

/** A run's queue setting as the tables name it. */
const setting = (run: BatchRun) => `${run.batch ? `maxSize ${run.batch.maxSize}, maxWaitMs ${run.batch.maxWaitMs}` : 'no batch'}, concurrency ${fmt(run.concurrency)}`;

/** Deliveries by their number of jobs, largest first: `10 x 95, 4 x 3`. */
const sizes = (run: BatchRun) =>
  Object.entries(run.batchSizes)
    .sort((x, y) => Number(y[0]) - Number(x[0]))
    .map(([size, n]) => `${size} x ${fmt(n)}`)
    .join(', ');

/** Jobs left on the queue after a run (anything but completed), for a warning. */
function leftOver(run: BatchRun): string[] {
  return Object.entries(run.countsAfter)
    .filter(([state, n]) => state !== 'completed' && typeof n === 'number' && n > 0)
    .map(([state, n]) => `${state} ${n}`);
}

export function formatBatch(r: BatchResult): string {
  const { hotGroup, commands, order, goals, config: c, definitions: d } = r;
  const hotRows = hotGroup.map((run) => {
    const goal = goals.hotJobsPerSecond[run.batch!.maxSize];
    return [
      `maxSize ${run.batch!.maxSize}${run.note ? ` (${run.note})` : ''}`,
      fmt(run.jobs),
      fmt(run.jobsPerSecond),
      goal === undefined ? '' : `>= ${fmt(goal)}`,
      goal === undefined ? '' : ok(run.jobsPerSecond >= goal),
      `${fmt(run.deliveries)} (${fmt(run.meanBatchSize, 1)})`,
      run.stalledMs > 0 ? `${fmt(run.stalledMs)} (${fmt(run.jobsPerSecondWithoutStalls)} jobs/s without)` : '0',
      fmt(run.enqueueMs),
      fmt(run.commandsPerJob, 2),
    ];
  });
  const costRows = [commands.noBatch, commands.batch, commands.wide].map((run) => [
    setting(run),
    fmt(run.commandsPerJob, 3),
    run === commands.batch ? `<= ${goals.commandsPerJob}` : '',
    run === commands.batch ? ok(run.commandsPerJob <= goals.commandsPerJob) : '',
    fmt(run.restRequestsPerJob, 3),
    `${fmt(run.deliveries)} (${fmt(run.meanBatchSize, 1)})`,
    fmt(run.jobsPerSecond),
  ]);
  const runs: [string, BatchRun][] = [
    ['commands, no batch', commands.noBatch],
    [`commands, maxSize ${commands.batch.batch!.maxSize}`, commands.batch],
    [`commands, maxSize ${commands.wide.batch!.maxSize}, concurrency ${fmt(commands.wide.concurrency)}`, commands.wide],
    ...hotGroup.map((run): [string, BatchRun] => [`hot group, maxSize ${run.batch!.maxSize}`, run]),
  ];
  const orderRow = (name: string, o: BatchRun['order']) => [
    name,
    fmt(o.deliveries),
    fmt(o.jobs),
    fmt(o.inversions),
    fmt(o.overlaps),
    `${fmt(o.redeliveries)} / ${fmt(o.afterCompletion)}`,
    `${fmt(o.notDelivered)} / ${fmt(o.unanswered)}`,
  ];
  const orderRows = [...runs.map(([name, run]) => orderRow(name, run.order)), orderRow('all', order)];
  const warnings: string[] = [];
  for (const [name, run] of runs) {
    if (run.scheduledRuns > 0) warnings.push(`${name}: the drains stalled; the cron was fired ${run.scheduledRuns} time(s) (counted in)`);
    const left = leftOver(run);
    if (left.length > 0) warnings.push(`${name}: left on the queue: ${left.join(', ')}`);
  }
  const inversions = order.inversions + order.overlaps;
  // One column per commands run.
  const byCostRun = (counts: (run: BatchRun) => CommandCounts) =>
    commandTable([
      ['no batch', counts(commands.noBatch)],
      [`maxSize ${commands.batch.batch!.maxSize}`, counts(commands.batch)],
      [`same, concurrency ${fmt(commands.wide.concurrency)}`, counts(commands.wide)],
    ]);
  return [
    `Batches (issue 31): ${d.runtime}; load ${fmt(r.loadAverage1m, 2)} at start; queue concurrency ${c.concurrency} but where said, ` +
      `keepCompleted 0, dedupWindowMs 0, batch.maxWaitMs ${c.maxWaitMs}; ${c.payloadBytes}-byte payloads`,
    '',
    `Hot group: ONE group, its jobs enqueued in order by POST /jobs/batch of ${fmt(c.hotEnqueueBatch)} from one producer, the endpoint answering 200 after ${c.hotDelayMs} ms`,
    table(hotRows, ['batch', 'jobs', 'jobs/s', 'goal', '', 'deliveries (mean size)', 'stalled ms', 'enqueue ms', 'commands/job']),
    '',
    `Commands per job: ${fmt(c.costGroups)} groups x ${c.costJobsPerGroup} jobs, POST /jobs/batch of ${c.costGroupsPerRequest} whole groups ` +
      `(${fmt(c.costGroupsPerRequest * c.costJobsPerGroup)} jobs) from ${c.costProducers} producers, enqueue included, the endpoint answering 200 at once`,
    table(costRows, ['queue', 'commands/job', 'goal', '', 'REST requests/job', 'deliveries (mean size)', 'jobs/s']),
    ...[commands.batch, commands.wide].map((run) => `  ${setting(run)}: deliveries by their number of jobs: ${sizes(run)}`),
    '',
    'Redis commands per job by command (script-internal ones included):',
    byCostRun((run) => run.commandsPerJobByCommand),
    '',
    'REST commands per job by script (EVALSHA/EVAL by the script the client named) or by command:',
    byCostRun((run) => run.callsPerJobByScript),
    '',
    `Order checker: every delivery the endpoint recorded; inversions + overlaps ${fmt(inversions)} (goal ${goals.inversions}) ${ok(inversions <= goals.inversions)}`,
    table(orderRows, ['run', 'deliveries', 'jobs', 'inversions', 'overlaps', 'again before / after completing', 'not delivered / unanswered']),
    ...(order.examples.length > 0 ? ['', ...order.examples.map((e) => `  ${e}`)] : []),
    ...(warnings.length > 0 ? ['', ...warnings.map((w) => `WARNING ${w}`)] : []),
    '',
    ...Object.entries(d).filter(([key]) => key !== 'runtime').map(([key, text]) => `${key} = ${text}`),
  ].join('\n');
}
