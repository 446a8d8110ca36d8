// The cron trigger: a scheduler pass over every queue. Draining ready jobs to their endpoints,
// and waiting for due times within the minute, come with the dispatcher.
import type { Engine } from '../core/engine';
import type { TickResult } from '../core/scheduler';

/** Passes per queue while a tick reports more work: up to 10 x 500 items per phase a minute. */
const MAX_PASSES = 10;

/** Ticks the given queues, by default every registered one. */
export async function tickAllQueues(
  engine: Engine,
  names?: string[],
): Promise<Record<string, TickResult | { error: string }>> {
  const results: Record<string, TickResult | { error: string }> = {};
  for (const name of names ?? (await engine.listQueueNames())) {
    // One queue failing (Redis hiccup, a queue being deleted) must not stop the others.
    try {
      let result = await engine.tick(name);
      for (let pass = 1; result.more && pass < MAX_PASSES; pass++) result = await engine.tick(name);
      results[name] = result;
    } catch (error) {
      console.error(`groupq: tick of queue ${name} failed`, error);
      results[name] = { error: error instanceof Error ? error.message : String(error) };
    }
  }
  return results;
}
