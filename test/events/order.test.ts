// Each partition's events leave the hub in the order its scripts numbered them (src/core/events/
// order.ts), however they reach it. Through the hub itself (its publish RPC, by Miniflare's access
// to the Durable Object namespace, as hub.test.ts does): numbers that come out of order, one that
// never comes (a `gap` once the hold ends, by the hub's alarm), numbers that come twice, events
// that follow a number (progress), a new epoch, two partitions. Then the test: three
// Workers on one stack, 1,000 jobs over 50 groups enqueued through workers 0 and 1 and delivered
// to a real endpoint, read by a queue stream on worker 2: every job's events, in order, once.
import { afterAll, describe, expect, it } from 'vitest';
import type { OrderCounts } from '../../src/core/events/order';
import type { Published } from '../../src/core/events/hubs';
import type { PublishedEvent } from '../../src/core/events/wire';
import { streamEventSchema } from '../../src/protocol/events';
import { type Received, useEndpoints } from '../helpers/endpoint';
import { checkEventOrder } from '../helpers/event-order-checker';
import { EPOCH, expectIncreasing, lines, numbered, placed } from '../helpers/hub-events';
import { type SseReader, openSse } from '../helpers/sse-reader';
import { ADMIN_TOKEN, type RunningWorker, startWorkers } from '../helpers/worker';
import { expectJson, pausedQueue, putQueue, uniqueQueue, useHttpSuite } from '../http/support';

const suite = useHttpSuite();
const auth = { authorization: `Bearer ${ADMIN_TOKEN}` };

/** The queue's hub, through `worker`'s binding. */
async function hubOf(worker: RunningWorker, queue: string) {
  const ns = await worker.mf.getDurableObjectNamespace('EVENT_HUB');
  return ns.get(ns.idFromName(queue)) as unknown as { publish(events: PublishedEvent[]): Promise<Published>; orderCounts(): Promise<OrderCounts> };
}

async function publish(queue: string, events: PublishedEvent[]): Promise<Published> {
  return (await hubOf(suite.worker, queue)).publish(events);
}

const readers: SseReader[] = [];
async function queueStream(worker: RunningWorker, queue: string, lastEventId?: string): Promise<SseReader> {
  const reader = await openSse(`${worker.url}/v1/queues/${queue}/events`, { headers: auth }, lastEventId);
  expect(reader.res.status).toBe(200);
  readers.push(reader);
  return reader;
}
afterAll(() => readers.forEach((reader) => reader.close()));

async function newQueue(prefix: string): Promise<string> {
  const queue = uniqueQueue(prefix);
  await pausedQueue(suite.worker, queue);
  return queue;
}

describe("the hub puts each partition's events in their numbers' order", () => {
  it('3, 1, 2: 3 waits, 1 goes, 2 frees 3', async () => {
    const q = await newQueue('order');
    const reader = await queueStream(suite.worker, q);
    expect(await publish(q, numbered(q, 3))).toEqual({ stored: 0, streams: 0, held: 1 });
    expect(await publish(q, numbered(q, 1))).toEqual({ stored: 1, streams: 1, held: 1 });
    expect(await publish(q, numbered(q, 2))).toEqual({ stored: 2, streams: 1 });
    const got = await reader.waitForEvents(3);
    expect(lines(got)).toEqual(['added j1', 'added j2', 'added j3']);
    expectIncreasing(got);
  });

  it('a number that never comes: the hold ends, a gap says how many, and the rest follows; what comes after is dropped', async () => {
    const q = await newQueue('gap');
    const reader = await queueStream(suite.worker, q);
    await publish(q, numbered(q, 1));
    expect(await publish(q, numbered(q, 4, 5))).toMatchObject({ stored: 0, held: 2 });
    // The hub's alarm ends the hold: nothing else is published meanwhile.
    const got = await reader.waitForEvents(4);
    expect(lines(got)).toEqual(['added j1', 'gap 2', 'added j4', 'added j5']);
    const gap = JSON.parse(got[1]!.data);
    expect(gap).toEqual({ queue: q, lastEventId: got[0]!.lastEventId, oldestEventId: got[2]!.lastEventId, missing: 2, at: expect.any(Number) });
    expect(streamEventSchema.parse({ event: 'gap', data: gap }).event).toBe('gap');
    // 2 and 3 come late: what went out does not go out again, nor out of order.
    expect(await publish(q, numbered(q, 2, 3))).toEqual({ stored: 0, streams: 0, dropped: 2 });
    await publish(q, numbered(q, 6));
    expect(lines(await reader.waitForEvents(5))).toEqual(['added j1', 'gap 2', 'added j4', 'added j5', 'added j6']);
    // A resume from before the gap is told it too: it is in the log.
    const resumed = await queueStream(suite.worker, q, got[0]!.lastEventId);
    expect(lines(await resumed.waitForEvents(4))).toEqual(['gap 2', 'added j4', 'added j5', 'added j6']);
    expect(await (await hubOf(suite.worker, q)).orderCounts()).toMatchObject({ gaps: 1, missing: 2 });
  });

  it('a number that comes twice goes out once', async () => {
    const q = await newQueue('dup');
    const reader = await queueStream(suite.worker, q);
    await publish(q, numbered(q, 1, 2));
    expect(await publish(q, numbered(q, 2))).toEqual({ stored: 0, streams: 0, dropped: 1 });
    expect(await publish(q, numbered(q, 4))).toMatchObject({ held: 1 });
    expect(await publish(q, numbered(q, 4))).toMatchObject({ held: 1, dropped: 1 });
    await publish(q, numbered(q, 3));
    expect(lines(await reader.waitForEvents(4))).toEqual(['added j1', 'added j2', 'added j3', 'added j4']);
    await publish(q, numbered(q, 5));
    expect(lines(await reader.waitForEvents(5)).slice(4)).toEqual(['added j5']);
  });

  it('a progress follows its number: it waits for it, goes before the next, and is dropped when its job moved on', async () => {
    const q = await newQueue('follow');
    const reader = await queueStream(suite.worker, q);
    await publish(q, [placed(q, 'a', 'added', { seq: 1 })]);
    // a's progress came before a's lease (2), which it follows.
    expect(await publish(q, [placed(q, 'a', 'progress', { after: 2 })])).toMatchObject({ stored: 0, held: 1 });
    await publish(q, [placed(q, 'a', 'active', { seq: 2 })]);
    await publish(q, [placed(q, 'b', 'added', { seq: 3 }), placed(q, 'a', 'completed', { seq: 4 })]);
    // Late: 3 and 4 are out. b's progress goes out (4 is not b's); a's would come after its
    // completion: dropped.
    expect(await publish(q, [placed(q, 'b', 'progress', { after: 3 })])).toEqual({ stored: 1, streams: 1 });
    expect(await publish(q, [placed(q, 'a', 'progress', { after: 3 })])).toEqual({ stored: 0, streams: 0, dropped: 1 });
    expect(lines(await reader.waitForEvents(6))).toEqual(['added a', 'active a', 'progress a', 'added b', 'completed a', 'progress b']);
  });

  it("a new epoch (the queue made again) starts over from 1; two partitions' sequences are apart", async () => {
    const q = await newQueue('epoch');
    const other = `${q}:1`;
    const reader = await queueStream(suite.worker, q);
    await publish(q, numbered(q, 1, 2));
    await publish(q, [placed(q, 'p1', 'added', { part: other, seq: 2 })]);
    await publish(q, [placed(q, 'p0', 'added', { part: other, seq: 1 })]);
    // Epoch 0: no sequence yet (a progress before the partition's first number): as it comes.
    await publish(q, [placed(q, 'z', 'progress', { epoch: 0, after: 0 })]);
    await publish(q, [placed(q, 'n1', 'added', { epoch: EPOCH + 1, seq: 1 })]);
    // A straggler of the old epoch goes out as it comes: its sequence is over.
    await publish(q, numbered(q, 3));
    const got = await reader.waitForEvents(7);
    expect(lines(got)).toEqual(['added j1', 'added j2', 'added p0', 'added p1', 'progress z', 'added n1', 'added j3']);
    expectIncreasing(got);
  });
});

describe('three Workers, 1,000 jobs: a stream on a Worker that enqueued none gets every event, in order per job', () => {
  const JOBS = 1000;
  const GROUPS = 50;
  const BATCH = 25;
  /** Every tenth job's first attempt fails: its retry's events are in the order too. */
  const failsFirst = (received: Received) => (received.job.data as { i: number }).i % 10 === 0 && received.job.attempt === 1;
  const endpoints = useEndpoints({ jobs: (received) => (failsFirst(received) ? { status: 500, body: 'first try fails' } : { status: 200, body: '{"ok":1}' }) });

  it('1,000 jobs over 50 groups, two partitions, enqueued round-robin through workers 0 and 1, read on worker 2', async () => {
    const workers = await startWorkers(suite.stack, 3);
    try {
      const queue = uniqueQueue('three');
      await putQueue(workers[0]!, queue, {
        endpoint: endpoints.jobs.url, partitions: 2, keepCompleted: JOBS, maxAttempts: 3, backoff: { type: 'fixed', delayMs: 0 },
      });
      const reader = await queueStream(workers[2]!, queue);
      const jobs = Array.from({ length: JOBS }, (_, i) => ({ id: `j${i}`, group: `g${i % GROUPS}`, data: { i } }));
      for (let from = 0, k = 0; from < JOBS; from += BATCH, k++) {
        const res = await workers[k % 2]!.api(`/v1/queues/${queue}/jobs/batch`, { method: 'POST', json: { jobs: jobs.slice(from, from + BATCH) } });
        await expectJson(res, 201);
      }
      // Done when the queue's counts say so; the cron of workers 0 and 1 runs meanwhile (a retry
      // left when no drain was running waits for it), as a deployment's does.
      const deadline = Date.now() + 240_000;
      let counts: Record<string, number> = {};
      for (let round = 0; counts.completed !== JOBS; round++) {
        if (Date.now() > deadline) throw new Error(`not every job completed: ${JSON.stringify(counts)}`);
        await new Promise((resolve) => setTimeout(resolve, 250));
        if (round % 4 === 3) await Promise.all([workers[0]!.scheduled(), workers[1]!.scheduled()]);
        counts = (await expectJson<{ counts: Record<string, number> }>(await workers[0]!.api(`/v1/queues/${queue}`), 200)).counts;
      }
      // Every job's `completed` read (the stream follows the hub's publishes), then one hold more,
      // for anything late to show.
      const completedRead = () => reader.events.filter((e) => e.type === 'completed').length;
      while (completedRead() < JOBS && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
      await new Promise((resolve) => setTimeout(resolve, 2500));
      const sent = endpoints.jobs.received.filter((received) => received.job.queue === queue);
      const report = checkEventOrder(reader.events, sent, (received) => (failsFirst(received) ? 500 : 200));
      const order = await (await hubOf(workers[0]!, queue)).orderCounts();
      console.log(`three Workers: ${report.events} events read for ${JOBS} jobs (${sent.length} deliveries); the hub's order: ${JSON.stringify(order)}`);
      expect(report).toEqual({ malformed: [], unordered: [], gaps: [], jobs: [], events: 3 * JOBS + 2 * (JOBS / 10) });
      expect(order).toMatchObject({ gaps: 0, missing: 0 });
    } finally {
      for (const worker of workers) await worker.dispose();
    }
  }, 300_000);
});
