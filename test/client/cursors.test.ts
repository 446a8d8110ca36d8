// `for await` over groupq/client's listJobs and groups, against the Worker, acting on each item
// inside the loop: every item is reached once. 1,000 jobs or groups each, made through the
// engine on the Worker's own Redis (few script calls), on paused queues.
import { describe, expect, it } from 'vitest';
import { GroupqClient } from '../../src/client';
import { createEngine, type Engine } from '../../src/core/engine';
import { createQueue, testClock } from '../helpers/engine';
import { delayMany, finishMany, groupsMany } from '../helpers/listings';
import { ADMIN_TOKEN } from '../helpers/worker';
import { useHttpSuite } from '../http/support';

const suite = useHttpSuite();
const MANY = 1000;

/** An engine on the Worker's Redis, a queue of its own, and the client's view of that queue. */
async function setup(config: Record<string, unknown> = {}) {
  const clock = testClock(Date.now());
  const engine: Engine = createEngine({ redis: suite.redis, now: clock.now, allowHttpLoopback: true });
  const name = await createQueue(engine, config, 'cursors');
  const q = new GroupqClient({ url: suite.worker.url, token: ADMIN_TOKEN }).queue(name);
  return { clock, engine, name, q };
}

describe('for await reaches every item once while the loop acts on them', () => {
  it('retrying each of 1,000 failed jobs', async () => {
    const { clock, engine, name, q } = await setup({ concurrency: MANY, maxAttempts: 1, keepFailed: MANY });
    const expected = await finishMany(engine, clock.advance, name, { count: MANY, tie: 250, how: 'fail' });
    const reached: string[] = [];
    for await (const job of q.listJobs({ state: 'failed' })) {
      reached.push(job.id);
      await q.retryJob(job.id);
    }
    expect(reached).toEqual(expected);
    expect(await q.counts()).toMatchObject({ failed: 0, waiting: MANY });
  });

  it('removing each of 1,000 completed jobs, then each of 1,000 delayed ones', async () => {
    const { clock, engine, name, q } = await setup({ concurrency: MANY, keepCompleted: MANY });
    const completed = await finishMany(engine, clock.advance, name, { count: MANY, tie: 100, how: 'complete' });
    const delayed = await delayMany(engine, name, MANY);
    for (const [state, expected] of [['completed', completed], ['delayed', delayed]] as const) {
      const reached: string[] = [];
      for await (const job of q.listJobs({ state, limit: 100 })) {
        reached.push(job.id);
        await q.removeJob(job.id);
      }
      expect(reached).toEqual(expected);
    }
    expect(await q.counts()).toMatchObject({ completed: 0, delayed: 0 });
  });

  it('removing each of 1,000 waiting jobs (no group: HSCAN order)', async () => {
    const { engine, name, q } = await setup();
    await groupsMany(engine, name, MANY);
    const reached: string[] = [];
    for await (const job of q.listJobs({ state: 'waiting', limit: 100 })) {
      reached.push(job.id);
      await q.removeJob(job.id);
    }
    expect(reached).toHaveLength(MANY);
    expect(new Set(reached).size).toBe(MANY);
    expect((await q.counts()).waiting).toBe(0);
  });

  it('pausing each of 1,000 groups', async () => {
    const { engine, name, q } = await setup();
    const expected = await groupsMany(engine, name, MANY);
    const reached: string[] = [];
    for await (const { group } of q.groups({ limit: 100 })) {
      reached.push(group);
      await q.pauseGroup(group);
    }
    expect([...reached].sort()).toEqual(expected.sort());
    const states = new Set<string>();
    for await (const { state } of q.groups({ limit: 1000 })) states.add(state);
    expect([...states]).toEqual(['paused']);
  });

  it('delaying each delayed job past the others: it comes round again in the listing, and is skipped', async () => {
    const { engine, name, q } = await setup();
    const expected = await delayMany(engine, name, 300);
    const reached: string[] = [];
    for await (const job of q.listJobs({ state: 'delayed', limit: 25 })) {
      reached.push(job.id);
      await q.updateJob(job.id, { delayMs: 3 * 3_600_000 });
    }
    expect(reached).toEqual(expected);
  });
});
