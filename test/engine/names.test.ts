// No name can collide with groupq's own fields (issue 16). Adversarial group names, job ids,
// debounce keys and repeat keys go through enqueue, settle, the tick, flow groups, the dedup
// window, debounce and repeats: groups "0".."59" after a failure in the same minute (and with the
// old layout's per-minute counters still in meta, where "f:<n>" was also group "n"'s flow state),
// every internal meta field name, names with ':' and names that look like keys. One-job groups
// are compared with the reference model; the features the model does not cover are run twice,
// with plain names and with adversarial ones, and must answer the same.
import { afterAll, describe, expect, it } from 'vitest';
import type { Engine } from '../../src/core/engine';
import type { Job } from '../../src/protocol/api/types';
import { queueKeys } from '../../src/core/store/keys';
import type { LeasedJob } from '../../src/core/engine/leases';
import { type TestClock, createQueue, testClock, testEngine } from '../helpers/engine';
import { adminClient } from '../helpers/stack';
import { type EnqueueInput, type LeasedView, type Outcome, ReferenceModel } from '../model/reference-model';

const admin = adminClient();
afterAll(() => admin.close());

/** Every field groupq keeps in meta (src/lua/includes/meta.lua), and the old and new counters. */
const META_FIELDS = [
  'config', 'secret', 'paused', 'pausedGroups', 'deleting', 'seq', 'active', 'ready', 'timer', 'outcomes', 'prio',
  'hold', 'flows', 'rs', 'dedup', 'dedupTrimAt', 'live', 'pub', 'bytes', 'partitions', 'move', 'expiring',
  // events: wanted until, their numbering, the kept results' trim (docs/events.md)
  'ev', 'es', 'resultTrimAt',
  // totals.lua's lifetime counters and histograms (GET /metrics)
  'n:a', 'n:c', 'n:f', 'n:r', 'n:x', 'n:e', 'n:t', 'n:os', 'n:of', 'n:oa', 'h:w', 'h:r',
];
const SLOTS = Array.from({ length: 60 }, (_, i) => String(i));
const KEY_LIKE = [
  'gq:{q}:jobs', 'gq:{q}:meta', 'gq:queues', 'g:x', 'f:3', 'l:3', 'g:', 'f:', 'c:5', 'r:0', 'm:f:3', 'm:c:0', 'a:b:c',
  'x y', '*', '{x}', 'jobs', 'ready', 'delayed', 'held', 'gq:{q:0}:meta', 'gq:{q}:results', 'results', 'gq:metrics', 'q:0', 'at 1', 'to 1', 'PARTITIONED 2',
  'expiring', 'expired', 'gq:{q}:expiring', 'x', 'late g',
];
/** Group names (and debounce keys). */
const NAMES = [...new Set([...SLOTS, ...META_FIELDS, ...KEY_LIKE])];
/** Job ids: visible ASCII without spaces. */
const IDS = [...new Set([...SLOTS.slice(0, 12), ...META_FIELDS, ...KEY_LIKE.filter((k) => !k.includes(' '))])];
/** Repeat keys: A-Z a-z 0-9 . _ : - */
const REPEAT_KEYS = ['0', '59', 'config', 'seq', 'f:3', 'g:x', 'm:f:0', 'gq:q:jobs', 'repeat-due', 'a:b:c'];

/** What the layout before issue 16 left in meta: the ring of per-minute counters, 'f:<n>' among them. */
async function oldCounters(q: string, now: number): Promise<void> {
  const minute = Math.floor(now / 60_000);
  const fields = SLOTS.flatMap((slot) => ['c', 'f', 'r'].flatMap((kind) => [`${kind}:${slot}`, String(minute * 1e8 + 1)]));
  await admin.call(['HSET', queueKeys(q).meta, ...fields]);
}

// ---- one-job groups, against the reference model ----------------------------------------

const MODEL_CONFIG = { concurrency: 40, timeoutMs: 2000, maxAttempts: 2, backoffMs: 1000, orderingWindowMs: 0, dedupWindowMs: 60_000 };

const engineJob = ({ queue: _queue, history: _history, ...job }: Job) => job;

describe('adversarial names against the reference model', () => {
  it('groups 0..59 after a failure this minute, meta field names and key-like names, and such ids', async () => {
    const clock = testClock();
    const engine = testEngine(clock);
    const { backoffMs, ...rest } = MODEL_CONFIG;
    const q = await createQueue(engine, {
      ...rest, backoff: { type: 'fixed', delayMs: backoffMs, jitter: false }, keepCompleted: 1_000_000, keepFailed: 1_000_000,
    }, 'names');
    try {
      const model = new ReferenceModel(MODEL_CONFIG, clock.now());
      const tokens = new Map<number, string>();
      const leased = (jobs: LeasedJob[], views: LeasedView[]) => {
        views.forEach((view, i) => tokens.set(view.lease, jobs[i]?.lease.token ?? 'none'));
        return jobs.map(({ queue: _q, tag: _t, lease, webhookId: _w, seq: _s, solo: _solo, recordNeeded: _c, named: _n, batchIndex: _b, ...job }) => ({ ...job, expiresAt: lease.expiresAt }));
      };
      const plain = (views: LeasedView[]) => views.map(({ lease: _l, ...job }) => job);
      const token = (handle: number) => tokens.get(handle) ?? 'none';
      const settle = async (outcomes: Outcome[], n: number) => {
        const expected = model.settle(outcomes, n);
        const actual = await engine.settle(q, outcomes.map((o) => ({ ...o, lease: token(o.lease) })), n);
        expect({ results: actual.results, jobs: leased(actual.jobs, expected.jobs) }).toEqual({ results: expected.results, jobs: plain(expected.jobs) });
      };
      const reserve = async (n: number) => {
        const expected = model.settle([], n);
        const actual = (await engine.reserve(q, n)).jobs;
        expect(leased(actual, expected.jobs)).toEqual(plain(expected.jobs));
        return expected.jobs;
      };

      // A job fails for good this minute, with the old ring of counters still in meta.
      await oldCounters(q, clock.now());
      const boom: EnqueueInput = { id: 'boom', group: 'boom', data: 0, maxAttempts: 1 };
      expect(await engine.enqueue(q, boom)).toEqual(model.enqueue([boom])[0]);
      const [first] = await reserve(1);
      await settle([{ kind: 'fail', id: 'boom', lease: first!.lease, error: 'x' }], 0);

      // Two jobs in every adversarial group, a third with an adversarial id, and one delayed.
      const jobs: EnqueueInput[] = NAMES.flatMap((group, i) => [
        { id: `a${i}`, group, data: i },
        { id: `b${i}`, group, data: [i] },
      ]);
      IDS.forEach((id, i) => jobs.push({ id, group: NAMES[i]!, data: { id } }));
      NAMES.forEach((group, i) => jobs.push({ id: `d${i}`, group, data: null, delayMs: 500 }));
      expect(await engine.enqueueBatch(q, jobs)).toEqual(model.enqueue(jobs));
      expect(await engine.enqueue(q, { id: 'config', group: '0', data: 1 })).toEqual(model.enqueue([{ id: 'config', group: '0', data: 1 }])[0]);

      // Rounds of reserve, then complete half and fail (retry) the rest, with the tick between.
      for (let round = 0; round < 6; round++) {
        const got = await reserve(40);
        await settle(got.map((job, i): Outcome => (i % 2 === 0 ? { kind: 'complete', id: job.id, lease: job.lease } : { kind: 'fail', id: job.id, lease: job.lease, error: 'again' })), 3 * (round % 2));
        clock.advance(700);
        model.now = clock.now();
        expect((await engine.tick(q)).readyNow).toBe(model.tick().readyNow);
      }
      // The dedup window knows the adversarial ids that ended.
      const again = IDS.map((id): EnqueueInput => ({ id, group: 'z', data: 'again' }));
      expect(await engine.enqueueBatch(q, again)).toEqual(model.enqueue(again));

      const info = await engine.getQueue(q);
      expect(info.counts).toMatchObject(model.counts());
      const groups = (await engine.listGroups(q, { limit: 1000 })).groups.sort((a, b) => (a.group < b.group ? -1 : 1));
      expect(groups).toEqual(model.listGroups().sort((a, b) => (a.group < b.group ? -1 : 1)));
      for (const id of [...jobs.map((j) => j.id), 'boom']) expect(engineJob(await engine.getJob(q, id))).toEqual(model.getJob(id));
      // The old counters met by groups "0".."59" are gone; the new ring counted the failures.
      const left = (await admin.call(['HMGET', queueKeys(q).meta, ...SLOTS.map((s) => `f:${s}`)])) as unknown[];
      expect(left.filter((v) => v !== null)).toEqual([]);
      // All of it ran inside one minute: the chart counts each job that ended, plus the old
      // ring's 1 in 'c:<this minute>' (its 'f:<this minute>' went with the first touch of its group).
      const minute = (await engine.getMinutes(q)).at(-1)!;
      const ended = { completed: model.listJobs('completed').length, failed: model.listJobs('failed').length };
      expect({ completed: minute.completed, failed: minute.failed }).toEqual({ completed: ended.completed + 1, failed: ended.failed });
    } finally {
      await engine.deleteQueue(q);
    }
  }, 60_000);
});

// ---- flow groups, debounce and repeats: plain names and adversarial ones answer alike ----

const FLOW_CONFIG = {
  concurrency: 100, groupConcurrency: 2, groupRateLimit: { max: 3, periodMs: 10_000 }, maxAttempts: 2,
  backoff: { type: 'fixed' as const, delayMs: 1000, jitter: false }, keepCompleted: 1000, keepFailed: 1000,
};

/** Runs the scenario on a fresh queue with `names` as groups and debounce keys; its transcript names groups by index. */
async function flowScenario(engine: Engine, clock: TestClock, names: readonly string[]): Promise<unknown[]> {
  const q = await createQueue(engine, FLOW_CONFIG, 'names-flow');
  const out: unknown[] = [];
  const index = new Map(names.map((name, i) => [name, i]));
  const ids = (jobs: LeasedJob[]) => jobs.map((j) => [j.id, index.get(j.group), j.attempt]);
  try {
    await oldCounters(q, clock.now());
    const jobs = names.flatMap((group, i) => [0, 1, 2, 3].map((k) => ({ id: `j${i}-${k}`, group, data: k })));
    out.push(await engine.enqueueBatch(q, jobs));
    // Debounce with the name as the key: the second enqueue collapses into the first.
    const debounce = (i: number, rev: number) => ({ id: `d${i}-${rev}`, group: names[i]!, data: rev, debounce: { key: names[i]!, delayMs: 500 } });
    out.push(await engine.enqueueBatch(q, names.map((_, i) => debounce(i, 1))));
    out.push(await engine.enqueueBatch(q, names.map((_, i) => debounce(i, 2))));
    // A group's own limits ('l:<group>') and a pause ('paused-groups', `held`) under each name.
    for (const [i, name] of names.entries()) {
      if (i % 7 === 0) out.push((await engine.setGroupLimits(q, name, { concurrency: 3 })).limits);
      if (i % 11 === 0) out.push((await engine.pauseGroup(q, name)).state);
    }
    const leases: LeasedJob[] = [];
    for (let round = 0; round < 5; round++) {
      if (round === 2) for (const [i, name] of names.entries()) if (i % 11 === 0) out.push((await engine.resumeGroup(q, name)).state);
      const got = (await engine.reserve(q, 1000)).jobs;
      out.push(ids(got));
      leases.push(...got);
      const ending = leases.splice(0, Math.ceil(leases.length / 2));
      const { results } = await engine.settle(q, ending.map((j, i) => (i % 3 === 0
        ? { kind: 'fail' as const, id: j.id, lease: j.lease.token, error: 'x' }
        : { kind: 'complete' as const, id: j.id, lease: j.lease.token })), 0);
      out.push(results);
      clock.advance(3000);
      out.push((await engine.tick(q)).readyNow);
    }
    const groups = (await engine.listGroups(q, { limit: 1000 })).groups.map(({ group, ...rest }) => ({ group: index.get(group), ...rest }));
    out.push(groups.sort((a, b) => a.group! - b.group!), (await engine.getQueue(q)).counts);
    out.push((await engine.getJob(q, 'd0-1')).data); // the debounced job took the last data
  } finally {
    await engine.deleteQueue(q);
  }
  return out;
}

describe('adversarial names where the model does not reach', () => {
  it('flow groups (groupConcurrency 2, a group rate limit) and debounce keys: same answers as plain names', async () => {
    const clock = testClock();
    const engine = testEngine(clock);
    const start = clock.now();
    const plain = await flowScenario(engine, clock, NAMES.map((_, i) => `plain-${i}`));
    clock.set(start);
    const adversarial = await flowScenario(engine, clock, NAMES);
    expect(adversarial).toEqual(plain);
    expect(JSON.stringify(plain)).toContain('"debounced":true');
  }, 60_000);

  it('repeat keys that look like fields and keys each make their own runs, in groups 0..59', async () => {
    const clock = testClock();
    const engine = testEngine(clock);
    const q = await createQueue(engine, { concurrency: 100 }, 'names-repeat');
    try {
      await oldCounters(q, clock.now());
      for (const [i, key] of REPEAT_KEYS.entries()) await engine.putRepeat(q, key, { every: 1000, group: String(i), data: key });
      clock.advance(1000);
      expect((await engine.tick(q)).repeatsCreated).toBe(REPEAT_KEYS.length);
      const jobs = (await engine.reserve(q, 100)).jobs;
      const runs = jobs.map((j) => [j.id, j.group, j.data]).sort();
      expect(runs).toEqual(REPEAT_KEYS.map((key, i) => [`repeat:${key}:${clock.now()}`, String(i), key]).sort());
      expect((await engine.listRepeats(q)).map((r) => r.key).sort()).toEqual([...REPEAT_KEYS].sort());
    } finally {
      await engine.deleteQueue(q);
    }
  });
});
