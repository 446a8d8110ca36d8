// The event streams' rows as the readable report prints them (bench/lib/events.ts measures them):
// latency on one Worker and across Workers against issue 30's 250 ms, the commands per job
// without and with a stream, and N streams on one Worker; and their headline figures.
import type { BUDGETS } from './budgets';
import type { Percentiles } from './e2e';
import type { EventsResult } from './events';
import { commandTable, fmt, table } from './report';

const p50p95 = (p: Percentiles) => `${fmt(p.p50, 1)} / ${fmt(p.p95, 1)}`;
const ok = (value: number, max: number) => (value <= max ? 'ok' : 'OVER');

/** The section; `e2eCommandsPerJob`: the e2e row of the same run, which `without` must equal. */
export function formatEvents(r: EventsResult, b: typeof BUDGETS, e2eCommandsPerJob?: number): string {
  const { latency: l, crossWorker: x, commands: c, subscribers: s, definitions: d } = r;
  const mib = (kib: number) => fmt(kib / 1024, 1);
  const kinds = (p: Record<string, Percentiles>) => Object.entries(p).map(([kind, v]) => `${kind} ${p50p95(v)}`).join('; ');
  const rows = [
    [`eventLatencyMs p50 / p95 (completed; ${fmt(l.jobs)} single jobs at ${fmt(l.targetRatePerSecond)}/s, 1 Worker)`, p50p95(l.latencyMs), `p95 <= ${b.eventLatencyP95Ms}`, ok(l.latencyMs.p95, b.eventLatencyP95Ms)],
    ['  max; each kind p50 / p95', `${fmt(l.latencyMs.max, 1)}; ${kinds(l.byEventMs)}`, '', ''],
    [
      `  across Workers: jobs to Worker ${x.producer}, stream on Worker ${x.subscriber}, hub in Worker 0 (${x.workers} workerd)`,
      p50p95(x.latencyMs),
      `p95 <= ${b.eventLatencyP95Ms}`,
      ok(x.latencyMs.p95, b.eventLatencyP95Ms),
    ],
    ['  max; each kind p50 / p95', `${fmt(x.latencyMs.max, 1)}; ${kinds(x.byEventMs)}`, '', ''],
    [`eventCommandsPerJob without a stream (e2e batch run, ${fmt(c.jobs)} jobs)`, fmt(c.without.commandsPerJob, 3), e2eCommandsPerJob === undefined ? 'e2eCommandsPerJob' : `= e2eCommandsPerJob ${fmt(e2eCommandsPerJob, 3)}`, ''],
    ['  with one queue stream (its opening counted in)', fmt(c.with.commandsPerJob, 3), '', ''],
    ['  extra per job; per event the stream read', `${fmt(c.extraPerJob, 3)}; ${fmt(c.extraPerEvent, 4)}`, `<= ${b.eventExtraCommandsPerEvent} per event`, ok(c.extraPerEvent, b.eventExtraCommandsPerEvent)],
    ['  events read: ' + Object.entries(c.with.eventsRead).map(([kind, n]) => `${kind} ${fmt(n)}`).join(', '), '', '', ''],
    ['  jobs/s without / with', `${fmt(c.without.jobsPerSecond)} / ${fmt(c.with.jobsPerSecond)}`, '', ''],
    ['  completed latency during the run with it p50 / p95 (ms)', p50p95(c.with.completedLatencyMs), '', ''],
    [`subscribers: ${fmt(s.subscribers)} queue streams on 1 Worker, workerd RSS MiB before -> after`, `${mib(s.rssKiB.before)} -> ${mib(s.rssKiB.after)}`, '', ''],
    ['  memory per subscriber (KiB of workerd RSS)', fmt(s.kibPerSubscriber, 1), 'no budget', ''],
    ['  all attached (ms, 100 opening at a time)', fmt(s.attachMs), '', ''],
    [`  Redis commands while they sit idle ${fmt(s.idle.windowMs / 1000)} s`, fmt(s.idle.commands), `${b.idleSubscriberCommands}`, ok(s.idle.commands, b.idleSubscriberCommands)],
    [`  one completed to the first / last of them, p50 (ms; ${s.jobs} jobs)`, `${fmt(s.toFirstMs.p50, 1)} / ${fmt(s.toLastMs.p50, 1)}`, '', ''],
    ['  to the last, max (ms)', fmt(s.toLastMs.max, 1), '', ''],
    ['  jobs whose completed missed a stream', fmt(s.notReachingAll), '0', ok(s.notReachingAll, 0)],
  ];
  const warnings: string[] = [];
  for (const [name, run] of [['latency run', l], ['cross-Worker run', x]] as const) {
    if (run.gaps > 0) warnings.push(`${name}: ${run.gaps} gap event(s) read`);
    if (run.scheduledRuns > 0) warnings.push(`${name}: the drains stalled; the cron was fired ${run.scheduledRuns} time(s) (their latency counted in)`);
  }
  if (c.without.scheduledRuns + c.with.scheduledRuns > 0) warnings.push(`batch runs: the cron was fired ${c.without.scheduledRuns} / ${c.with.scheduledRuns} time(s) (counted in)`);
  if (s.gaps > 0) warnings.push(`subscribers: ${s.gaps} gap event(s) read`);
  if (s.endedEarly > 0) warnings.push(`subscribers: ${s.endedEarly} stream(s) ended by the server`);
  return [
    `Event streams: ${d.runtime}; load ${fmt(r.loadAverage1m, 2)} at start`,
    '',
    table(rows, ['event streams (issue 30)', 'value', 'budget', '']),
    ...(warnings.length > 0 ? ['', ...warnings.map((w) => `WARNING ${w}`)] : []),
    '',
    ...Object.entries(d).filter(([key]) => key !== 'runtime').map(([key, text]) => `${key} = ${text}`),
    '',
    'Redis commands per job, the e2e batch run without and with one queue stream:',
    commandTable([
      ['without', c.without.commandsPerJobByCommand],
      ['with', c.with.commandsPerJobByCommand],
    ]),
  ].join('\n');
}
