// Batches and time, through the Worker to a recording endpoint (docs/batches.md): maxWaitMs holds
// a group with fewer than maxSize jobs until its head has waited that long past its orderMs (+
// orderingWindowMs), while a group that fills goes at once and a head with a priority does not
// wait; delayed jobs (delayMs, runAt), debounced jobs and repeat runs join their group, and so
// its batch, once due; a job id enqueued twice is one job, in one batch, once. Time is asserted
// only as lower bounds and causal order: an arrival is never before the instant it waits for, and
// "does not go" is seen after the cron has fired, not after a guessed time.
import { describe, expect, it } from 'vitest';
import { useEndpointPerTest } from '../helpers/endpoint';
import type { RunningWorker } from '../helpers/worker';
import { enqueue, enqueueAnswer, enqueueBatch, getJob, jobInState, poll, useWorker } from '../delivery/support';
import { batchQueue, countsWhen, expectBatchShapes, groupAction, recordBatches } from './combos-support';

const env = useWorker();
const start = useEndpointPerTest();

const jobsOf = (group: string, n: number, from = 0) => Array.from({ length: n }, (_, i) => ({ id: `${group}-${from + i}`, group, data: from + i }));
const idsOf = (jobs: { id: string }[]) => jobs.map((j) => j.id);

/** Fires the cron `times` times: what it would start by now, it has started once this returns. */
async function ticks(worker: RunningWorker, times = 5): Promise<void> {
  for (let i = 0; i < times; i++) await worker.scheduled();
}

/** `ids` ordered as their group orders them: orderMs, then the order given (their enqueue order). */
async function groupOrder(queue: string, ids: string[]): Promise<string[]> {
  const orderMs = new Map<string, number>();
  for (const id of ids) orderMs.set(id, (await getJob(env.worker, queue, id)).orderMs);
  return [...ids].sort((x, y) => orderMs.get(x)! - orderMs.get(y)!);
}

describe('maxWaitMs', () => {
  it('a group short of maxSize waits maxWaitMs past its orderMs, and takes the jobs that came meanwhile', async () => {
    const WAIT = 1500;
    const endpoint = await recordBatches(start);
    const queue = await batchQueue(env.worker, 'combo-wait', endpoint.url, { batch: { maxSize: 10, maxWaitMs: WAIT } });
    const orderMs = Date.now();
    const first = jobsOf('g', 3).map((j) => ({ ...j, orderMs }));
    await enqueueBatch(env.worker, queue, first);
    const more = jobsOf('g', 2, 3);
    for (const job of more) await enqueue(env.worker, queue, job);
    // The two came before the head was due (else this run says nothing about joining).
    const joinedInTime = Date.now() < orderMs + WAIT;
    await countsWhen(env.worker, queue, (c) => c.completed === 5, '5 jobs completed');
    expectBatchShapes(endpoint, queue);
    expect(endpoint.deliveries[0]!.arrivedAt).toBeGreaterThanOrEqual(orderMs + WAIT);
    expect((await getJob(env.worker, queue, 'g-0')).history![0]!.startedAt).toBeGreaterThanOrEqual(orderMs + WAIT);
    expect(endpoint.delivered()).toEqual(idsOf([...first, ...more]));
    if (joinedInTime) expect(endpoint.batches()).toEqual([idsOf([...first, ...more])]);
  });

  it('orderingWindowMs and maxWaitMs add up: the head goes no sooner than orderMs + both', async () => {
    const endpoint = await recordBatches(start);
    const queue = await batchQueue(env.worker, 'combo-wait-window', endpoint.url, { orderingWindowMs: 700, batch: { maxSize: 10, maxWaitMs: 700 } });
    const orderMs = Date.now();
    await enqueueBatch(env.worker, queue, jobsOf('g', 2).map((j) => ({ ...j, orderMs })));
    await countsWhen(env.worker, queue, (c) => c.completed === 2, '2 jobs completed');
    expectBatchShapes(endpoint, queue);
    expect(endpoint.batches()).toEqual([['g-0', 'g-1']]);
    expect(endpoint.deliveries[0]!.arrivedAt).toBeGreaterThanOrEqual(orderMs + 1400);
  });

  it('maxWaitMs 300000: a group goes at once when it fills, by one enqueue or several; short of it, it waits', async () => {
    const endpoint = await recordBatches(start);
    const queue = await batchQueue(env.worker, 'combo-fill', endpoint.url, { batch: { maxSize: 5, maxWaitMs: 300_000 } });
    // Five in one call.
    await enqueueBatch(env.worker, queue, jobsOf('one-call', 5));
    await endpoint.until((ds) => ds.length === 1, 'the full group of one call', env.worker);
    expect(endpoint.batches()).toEqual([idsOf(jobsOf('one-call', 5))]);
    // Two, then three more: the fifth fills the group.
    await enqueueBatch(env.worker, queue, jobsOf('g', 2));
    await ticks(env.worker);
    expect(endpoint.ofGroup('g')).toEqual([]);
    for (const job of jobsOf('g', 3, 2)) await enqueue(env.worker, queue, job);
    await endpoint.until((ds) => ds.length === 2, 'the group filled by its fifth job', env.worker);
    expect(endpoint.batches()[1]).toEqual(idsOf(jobsOf('g', 5)));
    // Seven at once: five go, the two left wait for three more.
    await enqueueBatch(env.worker, queue, jobsOf('seven', 7));
    await endpoint.until((ds) => ds.length === 3, 'five of seven', env.worker);
    expect(endpoint.batches()[2]).toEqual(idsOf(jobsOf('seven', 5)));
    await countsWhen(env.worker, queue, (c) => c.completed === 15 && c.active === 0, 'the first three batches completed');
    await ticks(env.worker);
    expect(endpoint.deliveries).toHaveLength(3);
    expect((await getJob(env.worker, queue, 'seven-5')).state).toBe('waiting');
    await enqueueBatch(env.worker, queue, jobsOf('seven', 3, 7));
    await endpoint.until((ds) => ds.length === 4, 'the last five of ten', env.worker);
    expect(endpoint.batches()[3]).toEqual(idsOf(jobsOf('seven', 5, 5)));
    await countsWhen(env.worker, queue, (c) => c.completed === 20, '20 jobs completed');
    expectBatchShapes(endpoint, queue);
  });

  it('maxWaitMs 300000: a head with a priority other than 0 does not wait, and takes the jobs behind it', async () => {
    const endpoint = await recordBatches(start);
    const queue = await batchQueue(env.worker, 'combo-prio-wait', endpoint.url, { batch: { maxSize: 5, maxWaitMs: 300_000 } });
    const up = jobsOf('up', 2).map((j, i) => (i === 0 ? { ...j, priority: 5 } : j));
    const down = jobsOf('down', 2).map((j, i) => (i === 0 ? { ...j, priority: -5 } : j));
    await enqueueBatch(env.worker, queue, [...up, ...down, ...jobsOf('plain', 2)]);
    await countsWhen(env.worker, queue, (c) => c.completed === 4, 'the prioritized groups completed');
    expectBatchShapes(endpoint, queue);
    expect(endpoint.ofGroup('up').map((d) => d.body.jobs.map((j) => j.id))).toEqual([idsOf(up)]);
    expect(endpoint.ofGroup('down').map((d) => d.body.jobs.map((j) => j.id))).toEqual([idsOf(down)]);
    await ticks(env.worker);
    expect(endpoint.ofGroup('plain')).toEqual([]);
  });
});

describe('jobs that join when due', () => {
  it('delayMs and runAt: a delayed job joins its group at its place once due, and rides in its batch', async () => {
    const endpoint = await recordBatches(start);
    const queue = await batchQueue(env.worker, 'combo-delayed', endpoint.url, { batch: { maxSize: 10 } });
    await groupAction(env.worker, queue, 'g', 'pause');
    const runAt = Date.now() + 300;
    const answers = await enqueueBatch(env.worker, queue, [
      { id: 'a', group: 'g' },
      { id: 'b', group: 'g', delayMs: 300 },
      { id: 'c', group: 'g' },
      { id: 'd', group: 'g', runAt },
    ]);
    expect(answers.map((a) => a.state)).toEqual(['waiting', 'delayed', 'waiting', 'delayed']);
    // Due, and moved into the group by the scheduler: waiting, behind nothing but the pause.
    await jobInState(env.worker, queue, 'b', 'waiting', { pump: env.worker, intervalMs: 50 });
    await jobInState(env.worker, queue, 'd', 'waiting', { pump: env.worker, intervalMs: 50 });
    await groupAction(env.worker, queue, 'g', 'resume');
    await countsWhen(env.worker, queue, (c) => c.completed === 4, '4 jobs completed');
    expectBatchShapes(endpoint, queue);
    expect(endpoint.batches()).toEqual([await groupOrder(queue, ['a', 'b', 'c', 'd'])]);
    expect(endpoint.deliveries[0]!.arrivedAt).toBeGreaterThanOrEqual(runAt);
  });

  it('a delayed job is in no batch before it is due', async () => {
    const endpoint = await recordBatches(start);
    const queue = await batchQueue(env.worker, 'combo-not-yet', endpoint.url, { batch: { maxSize: 10 } });
    const runAt = Date.now() + 1000;
    await enqueueBatch(env.worker, queue, [
      { id: 'now-0', group: 'g' },
      { id: 'later', group: 'g', runAt },
      { id: 'now-1', group: 'g' },
    ]);
    await countsWhen(env.worker, queue, (c) => c.completed === 3, '3 jobs completed');
    expectBatchShapes(endpoint, queue);
    expect(endpoint.batches()).toEqual([['now-0', 'now-1'], ['later']]);
    expect(endpoint.deliveries[1]!.arrivedAt).toBeGreaterThanOrEqual(runAt);
  });

  it('debounce: enqueues with one key are one job, with the last data, in one batch with the jobs around it', async () => {
    const endpoint = await recordBatches(start);
    const queue = await batchQueue(env.worker, 'combo-debounce', endpoint.url, { batch: { maxSize: 10 } });
    await groupAction(env.worker, queue, 'g', 'pause');
    await enqueue(env.worker, queue, { id: 'before', group: 'g', data: 'before' });
    const debounce = { key: 'k', delayMs: 300 };
    const first = await enqueueAnswer(env.worker, queue, { group: 'g', data: 1, debounce });
    expect(first.status).toBe(201);
    for (const data of [2, 3]) {
      // Delayed, or waiting already if the machine took longer than delayMs between the calls.
      expect(await enqueueAnswer(env.worker, queue, { group: 'g', data, debounce })).toMatchObject({
        status: 200,
        body: { id: first.body.id, debounced: true },
      });
    }
    await enqueue(env.worker, queue, { id: 'after', group: 'g', data: 'after' });
    await jobInState(env.worker, queue, first.body.id, 'waiting', { pump: env.worker, intervalMs: 50 });
    await groupAction(env.worker, queue, 'g', 'resume');
    await countsWhen(env.worker, queue, (c) => c.completed === 3, '3 jobs completed');
    expectBatchShapes(endpoint, queue);
    expect(endpoint.batches()).toEqual([await groupOrder(queue, ['before', first.body.id, 'after'])]);
    const debounced = endpoint.deliveries[0]!.body.jobs.find((j) => j.id === first.body.id)!;
    expect(debounced.data).toBe(3);
  });

  it('a repeat run joins its group once the scheduler made it', async () => {
    const endpoint = await recordBatches(start);
    const queue = await batchQueue(env.worker, 'combo-repeat', endpoint.url, { batch: { maxSize: 10 } });
    await groupAction(env.worker, queue, 'cron', 'pause');
    await enqueue(env.worker, queue, { id: 'x', group: 'cron', data: 'x' });
    const startAt = Date.now();
    const put = await env.worker.api(`/v1/queues/${queue}/repeats/tick`, { method: 'PUT', json: { group: 'cron', data: 'run', every: 1000, startAt, limit: 1 } });
    expect(put.status, await put.text()).toBe(200);
    const runId = `repeat:tick:${startAt}`;
    // The run exists once the cron made it (404 before), waiting behind the pause.
    await poll(
      async () => {
        const res = await env.worker.api(`/v1/queues/${queue}/jobs/${encodeURIComponent(runId)}`);
        return res.status === 200 && ((await res.json()) as { state: string }).state === 'waiting' ? true : undefined;
      },
      { pump: env.worker, intervalMs: 50, what: `the run ${runId}` },
    );
    await enqueue(env.worker, queue, { id: 'y', group: 'cron', data: 'y' });
    await groupAction(env.worker, queue, 'cron', 'resume');
    await countsWhen(env.worker, queue, (c) => c.completed === 3, '3 jobs completed');
    expectBatchShapes(endpoint, queue);
    expect(endpoint.batches()).toEqual([await groupOrder(queue, ['x', runId, 'y'])]);
  });

  it('the dedup window: an id enqueued twice is one job in one batch, and not again after it ended', async () => {
    const endpoint = await recordBatches(start);
    const queue = await batchQueue(env.worker, 'combo-dedup', endpoint.url, { batch: { maxSize: 10 } });
    await groupAction(env.worker, queue, 'g', 'pause');
    const answers = await enqueueBatch(env.worker, queue, [
      { id: 'd1', group: 'g', data: 1 },
      { id: 'd2', group: 'g', data: 2 },
      { id: 'd1', group: 'g', data: 'again' },
    ]);
    expect(answers[2]).toMatchObject({ id: 'd1', duplicate: true });
    expect(await enqueueAnswer(env.worker, queue, { id: 'd2', group: 'g', data: 'again' })).toMatchObject({ status: 200, body: { id: 'd2', duplicate: true } });
    await groupAction(env.worker, queue, 'g', 'resume');
    await countsWhen(env.worker, queue, (c) => c.completed === 2, '2 jobs completed');
    expect(await enqueueAnswer(env.worker, queue, { id: 'd1', group: 'g', data: 'late' })).toEqual({
      status: 200,
      body: { id: 'd1', state: 'completed', duplicate: true },
    });
    // A marker after it: whatever the queue would still deliver of g came before it.
    await enqueue(env.worker, queue, { id: 'marker', group: 'g' });
    await poll(async () => (endpoint.delivered().includes('marker') ? true : undefined), { pump: env.worker, what: 'the marker' });
    expectBatchShapes(endpoint, queue);
    expect(endpoint.batches()).toEqual([['d1', 'd2'], ['marker']]);
    expect(endpoint.deliveries[0]!.body.jobs.map((j) => j.data)).toEqual([1, 2]);
  });
});
