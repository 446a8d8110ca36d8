// GroupMQ breaks for good once a Redis restart or SCRIPT FLUSH empties the script cache. groupq
// calls EVALSHA and falls back to EVAL on NOSCRIPT: flushing in the middle of work loses nothing
// and leaves nothing stuck.
import { afterAll, describe, expect, it } from 'vitest';
import { adminClient } from '../helpers/stack';
import { createQueue, testEngine } from '../helpers/engine';

describe('SCRIPT FLUSH in the middle of work', () => {
  const admin = adminClient();
  afterAll(() => admin.close());

  it('every job still completes exactly once, in group order', async () => {
    const engine = testEngine();
    const queue = await createQueue(engine, { concurrency: 50, keepCompleted: 10_000 });
    const jobs = Array.from({ length: 600 }, (_, i) => ({ id: `job-${i}`, group: `g${i % 20}`, data: { i } }));
    for (let i = 0; i < jobs.length; i += 200) await engine.enqueueBatch(queue, jobs.slice(i, i + 200));

    const completedByGroup = new Map<string, number[]>();
    let held = (await engine.reserve(queue, 20)).jobs;
    let rounds = 0;
    while (held.length > 0) {
      if (rounds++ % 5 === 0) await admin.call(['SCRIPT', 'FLUSH']);
      const settled = await engine.settle(
        queue,
        held.map((job) => ({ kind: 'complete' as const, id: job.id, lease: job.lease.token })),
        20,
      );
      for (const [i, result] of settled.results.entries()) {
        expect(result.state).toBe('completed');
        const job = held[i]!;
        const list = completedByGroup.get(job.group) ?? [];
        list.push((job.data as { i: number }).i);
        completedByGroup.set(job.group, list);
      }
      held = settled.jobs;
    }

    const counts = (await engine.getQueue(queue)).counts;
    expect(counts).toMatchObject({ waiting: 0, active: 0, delayed: 0, completed: 600, groups: 0 });
    for (const [group, order] of completedByGroup) {
      const expected = jobs.filter((job) => job.group === group).map((job) => job.data.i);
      expect(order, group).toEqual(expected);
    }
    expect(rounds).toBeGreaterThan(5);
    await engine.deleteQueue(queue);
  });
});
