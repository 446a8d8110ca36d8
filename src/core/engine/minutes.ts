// The minutes: per-minute counters of how a queue's attempts ended, for the dashboard's chart and
// GET /v1/queues/{queue}/metrics: completed, failed (for good) and retried attempts in each of the
// last 60 minutes. settle.lua and tick.lua write them once per call into the queue's meta hash
// (src/lua/includes/meta.lua); this reads the ring and lays it out minute by minute. (Not the
// Prometheus metrics of GET /metrics: those are scrape.ts.)
import { scripts } from '../../lua/scripts.generated';
import { checkQueueName } from '../../protocol/parse';
import type { MinuteMetrics } from '../../protocol/api/types';
import type { EngineContext, QueueRef } from '../store/context';
import { onEachPartition } from './partitions';
import { callScript } from '../store/scripts';

export type { MinuteMetrics } from '../../protocol/api/types';

const MINUTE_MS = 60_000;
/** The minutes the ring holds, and the minutes returned. */
export const RING_MINUTES = 60;
/** Stored values are minute * COUNT_SPAN + count (meta.lua). */
const COUNT_SPAN = 100_000_000;

const KINDS = { c: 'completed', f: 'failed', r: 'retried' } as const;

/** The last 60 minutes, oldest first; the last entry is the current minute. */
export async function getMinutes(ctx: EngineContext, { queue }: QueueRef): Promise<MinuteMetrics[]> {
  // get-minutes.lua answers c:0..59, f:0..59, r:0..59 in that order, null where unset; a
  // partitioned queue's minutes are the sums of its partitions'.
  checkQueueName(queue);
  const all = await onEachPartition(ctx, queue, (tag) => callScript(ctx, scripts.getMinutes, { queue: tag }, []));
  const current = Math.floor(ctx.now() / MINUTE_MS);
  const minutes: MinuteMetrics[] = [];
  for (let minute = current - RING_MINUTES + 1; minute <= current; minute++) {
    const entry: MinuteMetrics = { at: minute * MINUTE_MS, completed: 0, failed: 0, retried: 0 };
    Object.entries(KINDS).forEach(([, name], k) => {
      for (const values of all) {
        const value = values[k * RING_MINUTES + (minute % RING_MINUTES)];
        // A slot not written since an hour (or more) ago holds an older minute: nothing this minute.
        if (value !== null && value !== undefined && Math.floor(Number(value) / COUNT_SPAN) === minute) entry[name] += Number(value) % COUNT_SPAN;
      }
    });
    minutes.push(entry);
  }
  return minutes;
}
