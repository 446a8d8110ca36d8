// A group's limits changed while its jobs run, through the Worker
// (docs/flow-control.md#group-limits-at-runtime). The endpoint holds each delivery until the test lets it go, so the jobs in
// flight are known at every change; the FlowChecker then judges every start against the limit in
// force when it happened (a change applies somewhere between its request and its answer).
import { describe, expect, it } from 'vitest';
import type { FlowDelivery } from '../helpers/flow-checker';
import { flowQueue, setGroupLimits, settledCounts, until } from '../helpers/flow-endpoint';
import { jobInState, useWorker } from '../delivery/support';
import type { RunningWorker } from '../helpers/worker';

/** Deliveries held at the endpoint until released, by job id. */
function gates() {
  const open = new Map<string, () => void>();
  return {
    hold: (d: FlowDelivery) => ({ until: new Promise<void>((resolve) => open.set(d.id, resolve)) }),
    release(id: string) {
      open.get(id)?.();
      open.delete(id);
    },
  };
}

async function getGroup(worker: RunningWorker, queue: string, group: string) {
  const res = await worker.api(`/v1/queues/${queue}/groups/${group}`);
  expect(res.status).toBe(200);
  return (await res.json()) as { limits: unknown; active: number; concurrency: number };
}

describe('group limits changed while jobs run', () => {
  const env = useWorker();

  /** `n` jobs of `group`, in order. */
  const jobsOf = (group: string, n: number) => Array.from({ length: n }, (_, i) => ({ id: `${group}${i}`, group }));

  it('concurrency 3 set while one runs starts two more, never a fourth; deleted, the group is back to one at a time', async () => {
    const gate = gates();
    const { checker, queue, ticking, enqueue } = await flowQueue(env.worker, { concurrency: 10 }, gate.hold);
    const inFlight = () => checker.deliveries.filter((d) => d.answered === undefined).map((d) => d.id).sort();
    const active = async () => (await getGroup(env.worker, queue, 'g')).active;
    const delivered = (n: number) => until(() => checker.deliveries.length === n, `${n} deliveries`);
    /** Lets `id` finish, and waits until the engine has taken its end (and started what that allows). */
    const finish = async (id: string) => {
      gate.release(id);
      await jobInState(env.worker, queue, id, 'completed');
    };
    await enqueue(jobsOf('g', 12));
    await delivered(1);

    const raised = await setGroupLimits(env.worker, queue, 'g', { concurrency: 3 });
    checker.limitChanged('g', 3, raised.sentWall, raised.returnedWall);
    await delivered(3);
    expect(inFlight()).toEqual(['g0', 'g1', 'g2']);
    expect(await getGroup(env.worker, queue, 'g')).toMatchObject({ limits: { concurrency: 3 }, concurrency: 3, active: 3 });
    // Each end makes room for exactly one more.
    await finish('g0');
    await delivered(4);
    await finish('g1');
    await delivered(5);
    expect(inFlight()).toEqual(['g2', 'g3', 'g4']);

    const lowered = await setGroupLimits(env.worker, queue, 'g', null);
    checker.limitChanged('g', 1, lowered.sentWall, lowered.returnedWall);
    expect(await getGroup(env.worker, queue, 'g')).toMatchObject({ limits: null, concurrency: 1 });
    // Three run with a limit of one: their ends start nothing until the last of them.
    await finish('g2');
    expect(await active()).toBe(2);
    await finish('g3');
    expect(await active()).toBe(1);
    expect(checker.deliveries).toHaveLength(5);
    await finish('g4');
    for (let n = 6; n <= 12; n++) {
      await delivered(n);
      expect(inFlight()).toEqual([`g${n - 1}`]);
      await finish(`g${n - 1}`);
    }
    await ticking.stop();
    await settledCounts(env.worker, queue, 12);

    expect(checker.groupConcurrencyAtStarts('g', 1)).toEqual([]);
    expect(checker.peakInFlight('g')).toBe(3);
    expect(checker.startOrder().violations).toEqual([]);
    expect(checker.completedOnce()).toEqual([]);
  });

  it('a group rate limit set while the group runs applies to its next starts', async () => {
    const gate = gates();
    const { checker, queue, ticking, enqueue } = await flowQueue(env.worker, { concurrency: 10 }, (d) => (d.id === 'r2' ? gate.hold(d) : {}));
    await enqueue(jobsOf('r', 10));
    await until(() => checker.deliveries.length === 3, 'r0..r2 delivered');
    const rateLimit = { max: 2, periodMs: 1000 };
    await setGroupLimits(env.worker, queue, 'r', { rateLimit });
    gate.release('r2');
    await until(() => checker.completions.size === 10 && checker.inFlight() === 0, '10 jobs completed');
    await ticking.stop();
    await settledCounts(env.worker, queue, 10);

    // Before the limit the group ran freely (r0..r2 started before it was set, r3 only after r2
    // ended); after it, never more than 2 starts in a second.
    const early = new Set(['r0', 'r1', 'r2']);
    expect(checker.startsPerWindow(Infinity, rateLimit.periodMs, (d) => early.has(d.id)).peak).toBe(3);
    const after = checker.startsPerWindow(rateLimit.max, rateLimit.periodMs, (d) => !early.has(d.id));
    expect(after.violations).toEqual([]);
    expect(after.peak).toBe(rateLimit.max);
    expect(checker.deliveries).toHaveLength(10);
    expect(checker.startOrder().violations).toEqual([]);
    expect(checker.completedOnce()).toEqual([]);
  });

  it("a group's rateLimit null exempts it from the queue's groupRateLimit; other groups keep to it", async () => {
    const groupRateLimit = { max: 1, periodMs: 1000 };
    const { checker, queue, ticking, enqueue } = await flowQueue(env.worker, { concurrency: 10, groupRateLimit });
    await setGroupLimits(env.worker, queue, 'vip', { rateLimit: null });
    await Promise.all([enqueue(jobsOf('vip', 6)), enqueue(jobsOf('u', 3))]);
    await until(() => checker.completions.size === 9 && checker.inFlight() === 0, '9 jobs completed');
    await ticking.stop();
    await settledCounts(env.worker, queue, 9);

    const u = checker.startsPerWindow(groupRateLimit.max, groupRateLimit.periodMs, (d) => d.group === 'u');
    expect(u.violations).toEqual([]);
    // Six jobs that take a few ms each: unlimited, they all start within one window.
    expect(checker.startsPerWindow(Infinity, groupRateLimit.periodMs, (d) => d.group === 'vip').peak).toBe(6);
    expect(checker.completedOnce()).toEqual([]);
  });
});
