// The cron trigger: for every queue the due index names (delayed jobs, retries, expired leases,
// repeats, retention), tick and drain what is ready, then keep waking for the index's next entry
// until the stay window ends, so delays and retries have second precision with a one-minute cron.
import { runDueQueues } from '../core/run/runner';
import { REQUEST_DRAIN_MS, openInvocation } from './scope';
import { settingsOf } from './settings';

export async function runScheduled(env: Env) {
  const start = Date.now();
  const until = start + settingsOf(env).schedulerStayMs;
  const { dispatcher, due } = openInvocation(env, { deadline: Math.max(until, start + REQUEST_DRAIN_MS), origin: null });
  return runDueQueues(dispatcher, due, until);
}
