// Priority through the Worker (docs/flow-control.md#priority): across groups the next job started is the
// due head with the highest priority, then the oldest by (orderMs, sequence); inside a group the
// order never changes, so a job's priority only counts once it is its group's head. Jobs are
// enqueued into a paused queue, which then resumes with concurrency 1: each start follows the
// previous job's end, so the endpoint sees exactly the engine's choices, one after another.
import { describe, expect, it } from 'vitest';
import { flowQueue, pauseQueue, until } from '../helpers/flow-endpoint';
import { prng } from '../helpers/random';
import { enqueue, enqueueBatch, useWorker } from '../delivery/support';

interface Spec {
  id: string;
  group: string;
  priority: number;
  orderMs: number;
}

/**
 * The order docs/flow-control.md#priority promises, job after job: of the groups' heads (each group in
 * (orderMs, enqueue order)), the highest priority starts, ties to the oldest.
 */
function promisedOrder(specs: Spec[]): string[] {
  const seq = new Map(specs.map((s, i) => [s.id, i]));
  const older = (a: Spec, b: Spec) => a.orderMs - b.orderMs || seq.get(a.id)! - seq.get(b.id)!;
  const groups = new Map<string, Spec[]>();
  for (const s of specs) groups.set(s.group, [...(groups.get(s.group) ?? []), s]);
  for (const jobs of groups.values()) jobs.sort(older);
  const order: string[] = [];
  while (groups.size > 0) {
    const heads = [...groups.values()].map((jobs) => jobs[0]!);
    const next = heads.sort((a, b) => b.priority - a.priority || older(a, b))[0]!;
    order.push(next.id);
    const rest = groups.get(next.group)!.slice(1);
    if (rest.length === 0) groups.delete(next.group);
    else groups.set(next.group, rest);
  }
  return order;
}

describe('priority across groups, FIFO inside a group', () => {
  const env = useWorker();

  /** Enqueues `specs` (in `chunks`, sent one after another) into a paused queue, resumes it, returns the start order. */
  async function run(specs: Spec[], chunks: number[]): Promise<string[]> {
    const { checker, queue, ticking } = await flowQueue(env.worker, { concurrency: 1 });
    await pauseQueue(env.worker, queue, 'pause');
    let at = 0;
    for (const size of chunks) {
      const jobs = specs.slice(at, at + size).map((s) => ({ ...s, data: s.id }));
      at += size;
      if (jobs.length === 1) await enqueue(env.worker, queue, jobs[0]!);
      else await enqueueBatch(env.worker, queue, jobs);
    }
    expect(at).toBe(specs.length);
    expect(checker.deliveries).toEqual([]);
    await pauseQueue(env.worker, queue, 'resume');
    await until(() => checker.completions.size === specs.length, `${specs.length} jobs completed`);
    await ticking.stop();
    expect(checker.peakInFlight()).toBe(1);
    return checker.deliveries.map((d) => d.id);
  }

  it('groups take turns by their head: highest priority first, then oldest; a high priority behind a low head waits', async () => {
    const t = Date.now() - 60_000;
    const specs: Spec[] = [
      { id: 'a1', group: 'A', priority: 0, orderMs: t + 1 },
      { id: 'b1', group: 'B', priority: 5, orderMs: t + 2 },
      { id: 'c1', group: 'C', priority: -3, orderMs: t + 3 },
      { id: 'c2', group: 'C', priority: 100, orderMs: t + 4 },
      { id: 'd1', group: 'D', priority: 5, orderMs: t },
      { id: 'a2', group: 'A', priority: 10, orderMs: t + 5 },
      { id: 'b2', group: 'B', priority: -10, orderMs: t + 6 },
      { id: 'e1', group: 'E', priority: 0, orderMs: t + 1 },
    ];
    // d1 and b1 share the top priority: d1 is older. a1 and e1 tie on orderMs: a1 was enqueued
    // first. a2 (10) runs once a1 is A's head no more; c2 (100) waits behind c1 (-3).
    const expected = ['d1', 'b1', 'a1', 'a2', 'e1', 'c1', 'c2', 'b2'];
    expect(promisedOrder(specs)).toEqual(expected);
    expect(await run(specs, [1, 3, 1, 2, 1])).toEqual(expected);
  });

  it('60 jobs over 8 groups with mixed priorities and equal orderMs start in the promised order', async () => {
    const rand = prng(1010);
    const t = Date.now() - 60_000;
    const levels = [-1000, -5, 0, 0, 0, 3, 10, 1000];
    const specs = Array.from({ length: 60 }, (_, i) => ({
      id: `j${i}`,
      group: `g${Math.floor(rand() * 8)}`,
      priority: levels[Math.floor(rand() * levels.length)]!,
      // Few distinct orderMs: ties are common, and the enqueue order decides them.
      orderMs: t + Math.floor(rand() * 6),
    }));
    const order = await run(specs, [1, 20, 1, 1, 25, 12]);
    expect(order).toEqual(promisedOrder(specs));
    // The priorities changed the order (without them it would be oldest first).
    expect(order).not.toEqual(promisedOrder(specs.map((s) => ({ ...s, priority: 0 }))));
  });
});
