// Strangers' names on a batch queue: a batch's bookkeeping lives in meta as 'b:<group>' (the ids
// behind an idle head as JSON, or a count of jobs out), beside groupq's own fields and the other
// group fields 'g:', 'l:', 'f:'. Groups named like those fields, or like the values the field
// holds ('3', '3h', '[...]'), and ids JSON has to escape, must batch as any other: each delivery one
// group's jobs in order, nothing of one group leaking into another's, and no field left behind.
import { afterAll, describe, expect, it } from 'vitest';
import { queueKeys } from '../../src/core/store/keys';
import { setupQueue } from '../helpers/engine';
import { adminClient } from '../helpers/stack';

const admin = adminClient();
afterAll(() => admin.close());

const GROUPS = ['config', 'active', 'b:g', 'g:b', 'b:', 'ready', '3', '3h', '[', '["x","y"]', 'n:c', 'm:c:1'];
/** Ids a JSON list must escape, or that look like its own text. */
const IDS = ['"q"', 'back\\slash', '],[', '{"a":1}', 'b:config', 'null'];

describe('adversarial names on a batch queue', () => {
  it('groups named like meta fields and ids JSON must escape batch as any other, and leave no field behind', async () => {
    const { engine, q } = await setupQueue({ concurrency: 100, batch: { maxSize: 4 } });
    const jobs = GROUPS.flatMap((group, g) => IDS.map((id) => ({ id: `${g}${id}`, group, data: { group } })));
    await engine.enqueueBatch(q, jobs);

    const delivered = new Map<string, string[]>();
    for (let rounds = 0; delivered.size < GROUPS.length || [...delivered.values()].some((ids) => ids.length < IDS.length); rounds++) {
      expect(rounds, 'rounds').toBeLessThan(20);
      const { jobs: leased } = await engine.reserve(q, 100);
      for (const job of leased) delivered.set(job.group, [...(delivered.get(job.group) ?? []), job.id]);
      // Each delivery is one group's, in order: a head and the jobs right behind it.
      const heads = leased.filter((job) => job.batchIndex === 0).length;
      expect(heads).toBe(new Set(leased.map((job) => job.group)).size);
      await engine.settle(q, leased.map((job) => ({ kind: 'complete', id: job.id, lease: job.lease.token })), 0);
    }
    for (const [g, group] of GROUPS.entries()) expect(delivered.get(group), group).toEqual(IDS.map((id) => `${g}${id}`));

    expect((await engine.getQueue(q)).counts).toMatchObject({ waiting: 0, active: 0, groups: 0 });
    const fields = ((await admin.call(['HKEYS', queueKeys(q).meta])) as string[]).filter((f) => /^[bglf]:/.test(f));
    expect(fields).toEqual([]);
  });
});
