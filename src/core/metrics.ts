// Per-minute outcome counters of a queue, for the dashboard's chart: completed, failed (for good)
// and retried attempts in each of the last 60 minutes. settle.lua and tick.lua write them once
// per call (src/lua/includes/metrics.lua); this reads the ring and lays it out minute by minute.
import { scripts } from '../lua/scripts.generated';
import type { MinuteMetrics } from './api-types';
import type { EngineContext } from './context';
import { queueKeys } from './keys';
import { checkQueueName } from './queues';
import { runScript } from './scripts';

export type { MinuteMetrics } from './api-types';

const MINUTE_MS = 60_000;
/** The minutes the ring holds, and the minutes returned. */
export const METRIC_MINUTES = 60;
/** Stored values are minute * COUNT_SPAN + count (metrics.lua). */
const COUNT_SPAN = 100_000_000;

const KINDS = { c: 'completed', f: 'failed', r: 'retried' } as const;

/** The last 60 minutes, oldest first; the last entry is the current minute. */
export async function getMetrics(ctx: EngineContext, queue: string): Promise<MinuteMetrics[]> {
  const k = queueKeys(checkQueueName(queue));
  const reply = await runScript(ctx.redis, scripts.getMetrics, [k.meta, k.metrics], []);
  const flat = reply[1] as string[];
  const stored = new Map<string, number>();
  for (let i = 0; i + 1 < flat.length; i += 2) stored.set(String(flat[i]), Number(flat[i + 1]));

  const current = Math.floor(ctx.now() / MINUTE_MS);
  const minutes: MinuteMetrics[] = [];
  for (let minute = current - METRIC_MINUTES + 1; minute <= current; minute++) {
    const entry: MinuteMetrics = { at: minute * MINUTE_MS, completed: 0, failed: 0, retried: 0 };
    for (const [kind, name] of Object.entries(KINDS)) {
      const value = stored.get(`${kind}:${minute % METRIC_MINUTES}`);
      // A slot not written since an hour (or more) ago holds an older minute: nothing this minute.
      if (value !== undefined && Math.floor(value / COUNT_SPAN) === minute) entry[name] = value % COUNT_SPAN;
    }
    minutes.push(entry);
  }
  return minutes;
}
