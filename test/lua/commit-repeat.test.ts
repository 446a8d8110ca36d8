// commit-repeat's compare-and-set: a run read by one tick is committed only if the repeat is
// still the one that tick read. Replaced in between (here: another group, same next run), the
// commit does nothing, and the next tick commits the run of the new spec, in its own group.
import { describe, expect, it } from 'vitest';
import { createRedis } from '../../src/core/store/redis';
import { callScript } from '../../src/core/store/scripts';
import { scripts } from '../../src/lua/scripts.generated';
import { setupQueue, T0 } from '../helpers/engine';
import { stack } from '../helpers/stack';

describe('commit-repeat', () => {
  it('does not commit a run of a repeat replaced since the tick read it', async () => {
    const { clock, engine, q } = await setupQueue();
    const ctx = { redis: createRedis({ url: stack().restUrl, token: stack().restToken }) };
    const spec = { group: 'A', every: 60_000, startAt: T0 + 1000 };
    await engine.putRepeat(q, 'r', spec);
    clock.set(T0 + 1000);

    // What a tick reads: the due repeat, version 1, group A.
    const listed = await callScript(ctx, scripts.tick, { queue: q }, [clock.now(), 'seed', 100]);
    const [key, specJson] = listed.repeatsToRun[0]!;
    const read = JSON.parse(specJson) as { v: number; nextRunAt: number; group: string };
    expect(read).toMatchObject({ v: 1, nextRunAt: T0 + 1000, group: 'A' });

    // Replaced before the commit: another group, the same next run.
    await engine.putRepeat(q, 'r', { ...spec, group: 'B' });
    const reply = await callScript(ctx, scripts.commitRepeat, { queue: q, group: 'A' }, [
      clock.now(), key, read.v, read.nextRunAt, read.nextRunAt + 60_000, 'A',
    ]);
    expect(reply).toBeNull(); // {0}: the repeat changed, nothing committed
    expect((await engine.getQueue(q)).counts.waiting).toBe(0);

    // The next tick commits the new spec's run, in group B.
    expect((await engine.tick(q)).repeatsCreated).toBe(1);
    const job = await engine.getJob(q, `repeat:r:${T0 + 1000}`);
    expect(job.group).toBe('B');
    expect((await engine.getGroup(q, 'B')).jobs.map((j) => j.id)).toEqual([job.id]);
    await expect(engine.getGroup(q, 'A')).rejects.toMatchObject({ code: 'GROUP_NOT_FOUND' });
  });
});
