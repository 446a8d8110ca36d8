// The cron trigger: one scheduler pass over every queue. (Draining ready jobs to endpoints
// joins with the dispatcher.)
import type { Engine } from '../core/engine';
import type { TickResult } from '../core/scheduler';

export async function tickAllQueues(engine: Engine): Promise<Record<string, TickResult>> {
  const names = await engine.listQueueNames();
  const results: Record<string, TickResult> = {};
  for (const name of names) {
    let result = await engine.tick(name);
    // A phase that hit its bound leaves work for another pass: take a few more, then stop.
    for (let pass = 1; result.more && pass < 10; pass++) result = await engine.tick(name);
    results[name] = result;
  }
  return results;
}
