// The cron trigger: for every queue, tick (delayed jobs, retries, expired leases, repeats,
// retention), drain what is ready, then keep waking for the queue's due times until the stay
// window ends, so delays and retries have second precision with a one-minute cron.
import { runQueues } from '../core/runner';
import { REQUEST_DRAIN_MS, openScope } from './scope';
import { settingsOf } from './settings';

export async function runScheduled(env: Env) {
  const start = Date.now();
  const until = start + settingsOf(env).schedulerStayMs;
  const { engine, dispatcher, due } = openScope(env, { deadline: Math.max(until, start + REQUEST_DRAIN_MS), origin: null });
  return runQueues(dispatcher, due, await engine.listQueueNames(), until);
}
