// A job's life inside a batch, through the Worker to a recording endpoint (docs/batches.md):
// cancel before its batch leaves keeps it out of the batch; cancel while its batch is out (202 or
// a synchronous answer still to come) ends it cancelled, its callbacks answer 409 JOB_CANCELLED
// and the answer's entry for it changes nothing, while the rest of the batch goes on (in order)
// and its group waits for them; a job past its TTL is never delivered, at the head or behind it, and ends
// expired; each attempt's history names its batch {id, index, size}, each job's outcome callback
// comes on its own, and the queue's live events stay per job (`active`, `retrying`, `added` for a
// job given back untouched, `completed`).
import { describe, expect, it } from 'vitest';
import type { JobEventName } from '../../src/protocol/events';
import { startEndpoint, useEndpointPerTest } from '../helpers/endpoint';
import { openSse } from '../helpers/sse-reader';
import { ADMIN_TOKEN } from '../helpers/worker';
import { callback, enqueueBatch, getJob, poll, sleep, useWorker } from '../delivery/support';
import { type Delivery, batchQueue, countsWhen, expectBatchShapes, expectOneAtATime, gate, groupAction, jsonReply, recordBatches, within } from './combos-support';

const env = useWorker();
const start = useEndpointPerTest();

const cancel = async (queue: string, id: string) => {
  const res = await env.worker.api(`/v1/queues/${queue}/jobs/${encodeURIComponent(id)}/cancel`, { method: 'POST' });
  expect(res.status, await res.text()).toBe(200);
};
const jobOf = (d: Delivery, id: string) => d.body.jobs.find((j) => j.id === id)!;

describe('cancel', () => {
  it('a waiting job cancelled before its batch leaves is not in it; the batch takes the jobs behind it', async () => {
    const endpoint = await recordBatches(start);
    const queue = await batchQueue(env.worker, 'combo-cancel-wait', endpoint.url, { batch: { maxSize: 5, maxWaitMs: 300_000 } });
    await enqueueBatch(env.worker, queue, ['c0', 'c1', 'c2', 'c3'].map((id) => ({ id, group: 'g' })));
    await cancel(queue, 'c1');
    // Four waiting again: the fifth fills the group, which goes at once.
    await enqueueBatch(env.worker, queue, ['c4', 'c5'].map((id) => ({ id, group: 'g' })));
    await countsWhen(env.worker, queue, (c) => c.completed === 5, '5 jobs completed');
    // The head too: a paused group of 7, its head and a job behind it cancelled; the 5 left fill it.
    await groupAction(env.worker, queue, 'p', 'pause');
    await enqueueBatch(env.worker, queue, ['p0', 'p1', 'p2', 'p3', 'p4', 'p5', 'p6'].map((id) => ({ id, group: 'p' })));
    await cancel(queue, 'p0');
    await cancel(queue, 'p2');
    await groupAction(env.worker, queue, 'p', 'resume');
    await countsWhen(env.worker, queue, (c) => c.completed === 10, '10 jobs completed');
    expectBatchShapes(endpoint, queue);
    expect(endpoint.batches()).toEqual([
      ['c0', 'c2', 'c3', 'c4', 'c5'],
      ['p1', 'p3', 'p4', 'p5', 'p6'],
    ]);
    for (const id of ['c1', 'p0', 'p2']) expect((await getJob(env.worker, queue, id)).state, id).toBe('cancelled');
  });

  it('cancelled while its 202 batch is out: its callbacks answer 409 JOB_CANCELLED, the others complete in order', async () => {
    const endpoint = await recordBatches(start, (d) => (d.body.jobs[0]!.id === 'a0' ? { status: 202 } : {}));
    const queue = await batchQueue(env.worker, 'combo-cancel-async', endpoint.url, { batch: { maxSize: 3 } });
    await enqueueBatch(env.worker, queue, ['a0', 'a1', 'a2', 'a3'].map((id) => ({ id, group: 'g' })));
    await endpoint.until((ds) => ds.length === 1, 'the async batch');
    const out = endpoint.deliveries[0]!;
    expect(endpoint.batches()).toEqual([['a0', 'a1', 'a2']]);
    await cancel(queue, 'a1');
    const a1 = jobOf(out, 'a1');
    for (const [kind, body] of [
      ['heartbeat', { lease: a1.lease.token }],
      ['progress', { lease: a1.lease.token, progress: 1 }],
      ['complete', { lease: a1.lease.token, result: 'late' }],
      ['fail', { lease: a1.lease.token, error: 'late' }],
    ] as const) {
      const res = await callback(a1.callbacks[kind], body);
      expect({ kind, status: res.status, code: res.json?.error?.code }).toEqual({ kind, status: 409, code: 'JOB_CANCELLED' });
    }
    const a2 = jobOf(out, 'a2');
    const a0 = jobOf(out, 'a0');
    expect((await callback(a0.callbacks.complete, { lease: a0.lease.token, result: 'r0' })).status).toBe(200);
    // The group still waits for a2: nothing of it goes meanwhile.
    await env.worker.scheduled();
    expect(endpoint.deliveries).toHaveLength(1);
    expect((await callback(a2.callbacks.complete, { lease: a2.lease.token, result: 'r2' })).status).toBe(200);
    await countsWhen(env.worker, queue, (c) => c.completed === 3, 'a0, a2 and a3 completed');
    expect(endpoint.batches()).toEqual([['a0', 'a1', 'a2'], ['a3']]);
    expect(await getJob(env.worker, queue, 'a0')).toMatchObject({ state: 'completed', result: 'r0' });
    expect(await getJob(env.worker, queue, 'a2')).toMatchObject({ state: 'completed', result: 'r2' });
    const cancelled = await getJob(env.worker, queue, 'a1');
    expect(cancelled).toMatchObject({ state: 'cancelled', attempts: 1, history: [{ attempt: 1, outcome: 'cancelled' }] });
    expect(cancelled).not.toHaveProperty('result');
  });

  it("cancelled while its batch's synchronous answer is still to come: the answer's entry for it changes nothing", async () => {
    const answered = gate();
    const cancelledNow = gate();
    const endpoint = await recordBatches(start, async (d) => {
      if (d.body.jobs[0]!.id !== 'b0') return {};
      answered.open();
      await within(cancelledNow.opened);
      return jsonReply({ results: ['r0', 'r1', 'r2'] });
    });
    const queue = await batchQueue(env.worker, 'combo-cancel-sync', endpoint.url, { batch: { maxSize: 3 } });
    await enqueueBatch(env.worker, queue, ['b0', 'b1', 'b2', 'b3'].map((id) => ({ id, group: 'g' })));
    await within(answered.opened);
    await cancel(queue, 'b1');
    cancelledNow.open();
    await countsWhen(env.worker, queue, (c) => c.completed === 3, 'b0, b2 and b3 completed');
    expectBatchShapes(endpoint, queue);
    expect(endpoint.batches()).toEqual([['b0', 'b1', 'b2'], ['b3']]);
    // b3 waited for the batch's answer: the group never had two deliveries out.
    expectOneAtATime(endpoint, 'g');
    expect(await getJob(env.worker, queue, 'b0')).toMatchObject({ state: 'completed', result: 'r0' });
    expect(await getJob(env.worker, queue, 'b2')).toMatchObject({ state: 'completed', result: 'r2' });
    const b1 = await getJob(env.worker, queue, 'b1');
    expect(b1).toMatchObject({ state: 'cancelled', history: [{ attempt: 1, outcome: 'cancelled' }] });
    expect(b1).not.toHaveProperty('result');
  });
});

describe('TTL', () => {
  it('a job past its deadline is in no batch, behind the head or at it, and ends expired', async () => {
    const endpoint = await recordBatches(start);
    const queue = await batchQueue(env.worker, 'combo-ttl', endpoint.url, { batch: { maxSize: 10 } });
    for (const g of ['g', 'h']) await groupAction(env.worker, queue, g, 'pause');
    await enqueueBatch(env.worker, queue, [
      { id: 'g0', group: 'g' },
      { id: 'g1', group: 'g', ttlMs: 300 },
      { id: 'g2', group: 'g' },
      { id: 'h0', group: 'h', ttlMs: 300 },
      { id: 'h1', group: 'h' },
    ]);
    const deadline = Math.max((await getJob(env.worker, queue, 'g1')).expiresAt!, (await getJob(env.worker, queue, 'h0')).expiresAt!);
    // Past both deadlines, with no tick meanwhile (the cron is not fired): the leases meet them.
    while (Date.now() <= deadline + 20) await sleep(Math.max(1, deadline + 21 - Date.now()));
    for (const g of ['g', 'h']) await groupAction(env.worker, queue, g, 'resume');
    await countsWhen(env.worker, queue, (c) => c.completed === 3 && c.expired === 2, '3 jobs completed and 2 expired');
    expectBatchShapes(endpoint, queue);
    expect(endpoint.delivered().sort()).toEqual(['g0', 'g2', 'h1']);
    expect(endpoint.ofGroup('g').flatMap((d) => d.body.jobs.map((j) => j.id))).toEqual(['g0', 'g2']);
    for (const id of ['g1', 'h0']) expect(await getJob(env.worker, queue, id), id).toMatchObject({ state: 'expired', attempts: 0 });
  });
});

describe("a job's attempts, outcomes and events stay its own", () => {
  it('a partial answer: history names each batch, outcome callbacks and events per job, the job given back untouched', async () => {
    const outcomes = await startEndpoint(() => ({ status: 204 }));
    const endpoint = await recordBatches(start, (d) =>
      d.body.jobs[0]!.id === 'h0'
        ? jsonReply({ completed: 1, results: ['r0'], error: 'boom' })
        : jsonReply({ results: d.body.jobs.map((j) => `r-${j.id}-${j.attempt}`) }),
    );
    try {
      const queue = await batchQueue(env.worker, 'combo-history', endpoint.url, { callbackUrl: outcomes.url, batch: { maxSize: 3 } });
      const stream = await openSse(`${env.worker.url}/v1/queues/${queue}/events`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
      expect(stream.res.status).toBe(200);
      try {
        await enqueueBatch(env.worker, queue, ['h0', 'h1', 'h2'].map((id) => ({ id, group: 'g' })));
        await countsWhen(env.worker, queue, (c) => c.completed === 3, '3 jobs completed');
        expectBatchShapes(endpoint, queue);
        expect(endpoint.batches()).toEqual([['h0', 'h1', 'h2'], ['h1', 'h2']]);
        const [first, second] = endpoint.deliveries.map((d) => d.body);
        // h1 failed an attempt, h2 was given back untouched: its next delivery is its first attempt again.
        expect(second!.jobs.map((j) => [j.id, j.attempt])).toEqual([['h1', 2], ['h2', 1]]);

        const history = async (id: string) => (await getJob(env.worker, queue, id)).history!.map(({ attempt, outcome, error, batch }) => ({ attempt, outcome, error, batch }));
        expect(await history('h0')).toEqual([{ attempt: 1, outcome: 'completed', error: undefined, batch: { id: first!.id, index: 0, size: 3 } }]);
        expect(await history('h1')).toEqual([
          { attempt: 1, outcome: 'failed', error: 'boom', batch: { id: first!.id, index: 1, size: 3 } },
          { attempt: 2, outcome: 'completed', error: undefined, batch: { id: second!.id, index: 0, size: 2 } },
        ]);
        expect(await history('h2')).toEqual([{ attempt: 1, outcome: 'completed', error: undefined, batch: { id: second!.id, index: 1, size: 2 } }]);
        expect(await getJob(env.worker, queue, 'h2')).toMatchObject({ attempts: 1, result: 'r-h2-1' });

        // One outcome callback per job, each with its own result and attempts.
        await poll(async () => (outcomes.received.length >= 3 ? true : undefined), { pump: env.worker, what: '3 outcome callbacks' });
        const sent = outcomes.received.map((r) => JSON.parse(r.rawBody) as { id: string; state: string; result: unknown; attempts: number });
        expect(sent.map(({ id, state, result, attempts }) => ({ id, state, result, attempts })).sort((x, y) => (x.id < y.id ? -1 : 1))).toEqual([
          { id: 'h0', state: 'completed', result: 'r0', attempts: 1 },
          { id: 'h1', state: 'completed', result: 'r-h1-2', attempts: 2 },
          { id: 'h2', state: 'completed', result: 'r-h2-1', attempts: 1 },
        ]);
        for (const r of outcomes.received) expect(r.headers['webhook-id']).toMatch(/^out_[0-9a-f]{32}$/);

        // Live events, per job, in the order each job met them.
        const names = (id: string) =>
          stream.events.filter((e) => JSON.parse(e.data).id === id).map((e) => `${e.type} ${JSON.parse(e.data).attempt}`);
        await poll(async () => (['h0', 'h1', 'h2'].every((id) => names(id).at(-1)?.startsWith('completed')) ? true : undefined), {
          what: 'every completed event',
        });
        expect(names('h0')).toEqual(['added 0', 'active 1', 'completed 1']);
        expect(names('h1')).toEqual(['added 0', 'active 1', 'retrying 1', 'active 2', 'completed 2']);
        expect(names('h2')).toEqual(['added 0', 'active 1', 'added 0', 'active 1', 'completed 1']);
        const given = stream.events.filter((e) => JSON.parse(e.data).id === 'h2' && e.type === ('added' satisfies JobEventName)).map((e) => JSON.parse(e.data).state);
        expect(given).toEqual(['waiting', 'waiting']);
      } finally {
        stream.close();
      }
    } finally {
      await outcomes.close();
    }
  });

});
