// The cron trigger: for every queue the due index names (delayed jobs, retries, lapsed leases,
// repeats, retention), tick and drain what is ready, then keep waking for the index's next entry
// until the stay window ends, so delays and retries have second precision with a one-minute cron.
// A run has an id of its own, `cron-<uuid>` (no request, no cf-ray): its lines carry it, and so
// do the pushes it makes (groupq-request-id), and it ends with one line (docs/logs.md).
import { createLog } from '../core/log';
import { runDueQueues } from '../core/run/runner';
import { REQUEST_DRAIN_MS, openInvocation } from './scope';
import { settingsOf } from './settings';

export async function runScheduled(env: Env, waitUntil: (work: Promise<unknown>) => void) {
  const start = Date.now();
  const settings = settingsOf(env);
  const until = start + settings.schedulerStayMs;
  const requestId = `cron-${crypto.randomUUID()}`;
  const log = createLog(settings.logLevel, { requestId });
  const { run, due } = openInvocation(env, { deadline: Math.max(until, start + REQUEST_DRAIN_MS), origin: null, requestId, log, waitUntil });
  try {
    const results = await runDueQueues(run, due, until);
    const queues = Object.keys(results);
    const failed = queues.filter((queue) => 'error' in results[queue]!).length;
    // A run that found nothing due (most minutes of a quiet deployment) is a debug line.
    const level = queues.length === 0 ? 'debug' : failed > 0 ? 'warn' : 'info';
    log[level]('scheduled', `cron run: ${queues.length} queue(s) ticked${failed > 0 ? `, ${failed} failed` : ''}`, {
      queues: queues.length,
      failed,
      durationMs: Date.now() - start,
    });
    return results;
  } catch (error) {
    log.error('scheduled_failed', 'cron run failed', { error, durationMs: Date.now() - start });
    throw error;
  }
}
