// The event hub (src/core/events/hub.ts over hub-core.ts) and the SSE streams
// (src/handlers/events.ts) in workerd, on a real Redis stack. Events are handed to a queue's hub the way the Worker will hand them
// (its publish RPC), through Miniflare's own access to the Durable Object namespace: src has no
// route for it. The streams are read over real HTTP with src/protocol/sse.ts's parser.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queueKeys } from '../../src/core/store/keys';
import type { Published } from '../../src/core/events/hubs';
import type { PublishedEvent } from '../../src/core/events/wire';
import { compareEventIds, formatEventId } from '../../src/protocol/event-id';
import { expectError, expectJson, pausedQueue, uniqueQueue, useHttpSuite } from '../http/support';
import { ids, jobEvent, parsed } from '../helpers/hub-events';
import { type SseReader, openSse } from '../helpers/sse-reader';
import { ADMIN_TOKEN, type RunningWorker, startWorkers } from '../helpers/worker';

const suite = useHttpSuite();
const auth = { authorization: `Bearer ${ADMIN_TOKEN}` };

/** Hands `events` to `queue`'s hub as a Worker does, through `worker`'s binding. */
async function publish(worker: RunningWorker, queue: string, events: PublishedEvent[]): Promise<Published> {
  const ns = await worker.mf.getDurableObjectNamespace('EVENT_HUB');
  const hub = ns.get(ns.idFromName(queue)) as unknown as { publish(events: PublishedEvent[]): Promise<Published> };
  // workerd may warn that "an RPC stub was not disposed properly": the stub is Miniflare's, in its
  // proxy Worker (a bare publish through it does the same), not one of groupq's.
  return hub.publish(events);
}

const readers: SseReader[] = [];
async function stream(worker: RunningWorker, path: string, lastEventId?: string): Promise<SseReader> {
  const reader = await openSse(`${worker.url}${path}`, { headers: auth }, lastEventId);
  readers.push(reader);
  return reader;
}
afterAll(() => {
  for (const reader of readers) reader.close();
});

describe('a queue stream', () => {
  let queue: string;
  beforeAll(async () => {
    queue = uniqueQueue('events');
    await pausedQueue(suite.worker, queue);
  });

  it('delivers what the hub is given, live and in order, as SSE with a retry hint, and asks Redis for events', async () => {
    const reader = await stream(suite.worker, `/v1/queues/${queue}/events`);
    expect(reader.res.status).toBe(200);
    expect(reader.res.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    expect(reader.res.headers.get('cache-control')).toBe('no-store');
    // The open asked the queue's scripts for events, for the retention to come.
    const ev = Number(await suite.redis.hget(queueKeys(queue).meta, 'ev'));
    expect(ev).toBeGreaterThan(Date.now() + 4 * 60_000);

    const sent = [jobEvent(queue, 'a1', 'a'), jobEvent(queue, 'b1', 'b'), jobEvent(queue, 'a1', 'a', 'active')];
    expect(await publish(suite.worker, queue, sent)).toEqual({ stored: 3, streams: 1 });
    const got = await reader.waitForEvents(3);
    expect(got.map((e) => e.type)).toEqual(['added', 'added', 'active']);
    expect(ids(got)).toEqual(['a1', 'b1', 'a1']);
    const events = parsed(got);
    for (let i = 1; i < events.length; i++) {
      expect(compareEventIds((events[i - 1] as { eventId: string }).eventId, (events[i] as { eventId: string }).eventId)).toBeLessThan(0);
    }
    expect(reader.retry()).toBe(1000);
  });

  it('?group= narrows the stream to one group', async () => {
    const groupA = await stream(suite.worker, `/v1/queues/${queue}/events?group=a`);
    const all = await stream(suite.worker, `/v1/queues/${queue}/events`);
    await publish(suite.worker, queue, [jobEvent(queue, 'b2', 'b'), jobEvent(queue, 'a2', 'a'), jobEvent(queue, 'b3', 'b'), jobEvent(queue, 'a3', 'a')]);
    expect(ids(await all.waitForEvents(4))).toEqual(['b2', 'a2', 'b3', 'a3']);
    expect(ids(await groupA.waitForEvents(2))).toEqual(['a2', 'a3']);
    // Nothing more came for the group stream.
    expect(groupA.events).toHaveLength(2);
  });

  it('a group or job id longer than a WebSocket tag takes still gets exactly its events', async () => {
    const long = `g${'é'.repeat(200)}`;
    const other = `g${'é'.repeat(199)}x`;
    const reader = await stream(suite.worker, `/v1/queues/${queue}/events?group=${encodeURIComponent(long)}`);
    await publish(suite.worker, queue, [jobEvent(queue, 'l1', other), jobEvent(queue, 'l2', long)]);
    expect(ids(await reader.waitForEvents(1))).toEqual(['l2']);
  });

  it('resumes after a drop with Last-Event-ID: nothing missed, nothing repeated', async () => {
    const q = uniqueQueue('resume');
    await pausedQueue(suite.worker, q);
    const first = await stream(suite.worker, `/v1/queues/${q}/events`);
    const batch = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => jobEvent(q, `j${from + i}`, 'g'));
    await publish(suite.worker, q, batch(1, 5));
    await first.waitForEvents(5);
    const resumeFrom = first.lastEventId();
    first.close();
    // Meanwhile, events the reader is not there for.
    await publish(suite.worker, q, batch(6, 10));
    const again = await stream(suite.worker, `/v1/queues/${q}/events`, resumeFrom);
    await publish(suite.worker, q, batch(11, 12));
    expect(ids(await again.waitForEvents(7))).toEqual(['j6', 'j7', 'j8', 'j9', 'j10', 'j11', 'j12']);
    // ?lastEventId= is the same resume, for a client that cannot set headers.
    const byQuery = await stream(suite.worker, `/v1/queues/${q}/events?lastEventId=${resumeFrom}`);
    expect(ids(await byQuery.waitForEvents(7))).toEqual(['j6', 'j7', 'j8', 'j9', 'j10', 'j11', 'j12']);
    // A resume from the newest: nothing held after it, nothing sent.
    const caughtUp = await stream(suite.worker, `/v1/queues/${q}/events`, again.lastEventId());
    await publish(suite.worker, q, batch(13, 13));
    expect(ids(await caughtUp.waitForEvents(1))).toEqual(['j13']);
    expect(caughtUp.events).toHaveLength(1);
  });

  it('tells a gap when the resume is from before what the hub holds', async () => {
    const q = uniqueQueue('gap');
    await pausedQueue(suite.worker, q);
    await publish(suite.worker, q, [jobEvent(q, 'x1', 'g'), jobEvent(q, 'x2', 'g')]);
    const probe = await stream(suite.worker, `/v1/queues/${q}/events?group=g&lastEventId=1-0`);
    const [gap, ...rest] = await probe.waitForEvents(3);
    expect(gap!.type).toBe('gap');
    const data = JSON.parse(gap!.data);
    expect(data).toEqual({ queue: q, group: 'g', lastEventId: '1-0', oldestEventId: expect.any(String), at: expect.any(Number) });
    expect(ids(rest)).toEqual(['x1', 'x2']);
    expect(rest[0]!.lastEventId).toBe(data.oldestEventId);
    // The gap has no id: a reconnect before the next event resumes from the same place.
    expect(parsed([gap!])[0]!.event).toBe('gap');
  });

  it('trims the log to 10,000 events: a resume from a trimmed one gets a gap, from the newest trimmed none', async () => {
    const q = uniqueQueue('trim');
    await pausedQueue(suite.worker, q);
    // Ids as Redis gives them, so the test knows each one: 10,050 of them, in batches.
    const at = Date.now();
    const all = Array.from({ length: 10_050 }, (_, i) => ({ ...jobEvent(q, `t${i}`, 'g'), eventId: formatEventId(at, i) }));
    for (let i = 0; i < all.length; i += 1000) await publish(suite.worker, q, all.slice(i, i + 1000));
    const fromTrimmed = await stream(suite.worker, `/v1/queues/${q}/events`, all[10]!.eventId);
    const got = await fromTrimmed.waitForEvents(10_001, 30_000);
    expect(got[0]!.type).toBe('gap');
    expect(JSON.parse(got[0]!.data)).toMatchObject({ lastEventId: all[10]!.eventId, oldestEventId: all[50]!.eventId });
    expect(got[1]!.lastEventId).toBe(all[50]!.eventId);
    expect(got[10_000]!.lastEventId).toBe(all[10_049]!.eventId);
    fromTrimmed.close();
    // The newest trimmed event: everything after it is held, so nothing was missed.
    const fromFloor = await stream(suite.worker, `/v1/queues/${q}/events`, all[49]!.eventId);
    await publish(suite.worker, q, [jobEvent(q, 'last', 'g')]);
    const rest = await fromFloor.waitForEvents(10_001, 30_000);
    expect(rest[0]!.type).toBe('added');
    expect(rest[0]!.lastEventId).toBe(all[50]!.eventId);
    expect(JSON.parse(rest[10_000]!.data).id).toBe('last');
  });

  it('ids out of order (two partitions crossing) are renumbered after the newest', async () => {
    const q = uniqueQueue('order');
    await pausedQueue(suite.worker, q);
    const reader = await stream(suite.worker, `/v1/queues/${q}/events`);
    const at = Date.now() + 60_000;
    await publish(suite.worker, q, [
      { ...jobEvent(q, 'p0', 'g'), eventId: formatEventId(at, 5) },
      { ...jobEvent(q, 'p1', 'g'), eventId: formatEventId(at, 3) },
      jobEvent(q, 'p2', 'g'),
    ]);
    const got = await reader.waitForEvents(3);
    expect(got.map((e) => e.lastEventId)).toEqual([formatEventId(at, 5), formatEventId(at, 6), formatEventId(at, 7)]);
  });

  it('lets go of a reader that left: its next write fails, and the hub drops its socket', async () => {
    const q = uniqueQueue('left');
    await pausedQueue(suite.worker, q);
    const reader = await stream(suite.worker, `/v1/queues/${q}/events`);
    expect(await publish(suite.worker, q, [jobEvent(q, 'l0', 'g')])).toEqual({ stored: 1, streams: 1 });
    await reader.waitForEvents(1);
    reader.close();
    const left = Date.now();
    for (let i = 1; (await publish(suite.worker, q, [jobEvent(q, `l${i}`, 'g')])).streams > 0; i++) {
      expect(Date.now() - left).toBeLessThan(5000);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  });

  it('writes a keep-alive comment every 15 s', async () => {
    const reader = await stream(suite.worker, `/v1/queues/${queue}/events`);
    const started = Date.now();
    await reader.waitForComment((comment) => comment === 'keep-alive', 20_000);
    expect(Date.now() - started).toBeGreaterThan(13_000);
  }, 30_000);

  it('refuses an unknown queue, a bad group, a bad Last-Event-ID and a request without the admin token', async () => {
    await expectError(await suite.worker.api(`/v1/queues/${uniqueQueue('none')}/events`), 404, 'QUEUE_NOT_FOUND');
    await expectError(await suite.worker.api(`/v1/queues/${queue}/events?group=..`), 400, 'VALIDATION_FAILED');
    await expectError(await suite.worker.api(`/v1/queues/${queue}/events`, { headers: { ...auth, 'last-event-id': 'nope' } }), 400, 'VALIDATION_FAILED');
    await expectError(await suite.worker.api(`/v1/queues/${queue}/events?lastEventId=01-0`), 400, 'VALIDATION_FAILED');
    await expectError(await suite.worker.api(`/v1/queues/${queue}/events`, { headers: { authorization: 'Bearer nope' } }), 401, 'UNAUTHORIZED');
  });
});

describe("a job's stream", () => {
  let queue: string;
  beforeAll(async () => {
    queue = uniqueQueue('job-events');
    await pausedQueue(suite.worker, queue);
  });

  const enqueue = async (id: string, group = 'g') =>
    expectJson(await suite.worker.api(`/v1/queues/${queue}/jobs`, { method: 'POST', json: { id, group, data: { n: 1 } } }), 201);

  it('opens with the job as it is, then its own events only, and ends after its final event', async () => {
    await enqueue('job-1');
    const reader = await stream(suite.worker, `/v1/queues/${queue}/jobs/job-1/events`);
    expect(reader.res.status).toBe(200);
    const [state] = await reader.waitForEvents(1);
    expect(parsed([state!])[0]).toMatchObject({ event: 'added', data: { id: 'job-1', queue, group: 'g', state: 'waiting', attempt: 0 } });
    await publish(suite.worker, queue, [jobEvent(queue, 'job-2', 'g', 'active'), jobEvent(queue, 'job-1', 'g', 'active'), jobEvent(queue, 'job-1', 'g', 'completed')]);
    await reader.ended;
    expect(reader.events.map((e) => e.type)).toEqual(['added', 'active', 'completed']);
    expect(ids(reader.events)).toEqual(['job-1', 'job-1', 'job-1']);
    parsed(reader.events);
  });

  it('resumes with Last-Event-ID after a drop, and ends on the held final event', async () => {
    await enqueue('job-3');
    const first = await stream(suite.worker, `/v1/queues/${queue}/jobs/job-3/events`);
    await publish(suite.worker, queue, [jobEvent(queue, 'job-3', 'g', 'active')]);
    await first.waitForEvents(2);
    first.close();
    await publish(suite.worker, queue, [jobEvent(queue, 'job-4', 'g', 'active'), jobEvent(queue, 'job-3', 'g', 'completed')]);
    const again = await stream(suite.worker, `/v1/queues/${queue}/jobs/job-3/events`, first.lastEventId());
    await again.ended;
    expect(again.events.map((e) => e.type)).toEqual(['completed']);
  });

  it('the stream of an ended job is its end alone; a resume after that end is 204', async () => {
    await enqueue('job-5');
    await expectJson(await suite.worker.api(`/v1/queues/${queue}/jobs/job-5/cancel`, { method: 'POST' }), 200);
    const reader = await stream(suite.worker, `/v1/queues/${queue}/jobs/job-5/events`);
    await reader.ended;
    expect(parsed(reader.events)).toMatchObject([{ event: 'cancelled', data: { id: 'job-5', state: 'cancelled' } }]);
    const again = await suite.worker.api(`/v1/queues/${queue}/jobs/job-5/events`, { headers: { ...auth, 'last-event-id': reader.lastEventId() } });
    expect(again.status).toBe(204);
  });

  it('refuses a job that does not exist', async () => {
    await expectError(await suite.worker.api(`/v1/queues/${queue}/jobs/nope/events`), 404, 'JOB_NOT_FOUND');
    await expectError(await suite.worker.api(`/v1/queues/${uniqueQueue('none')}/jobs/nope/events`), 404, 'QUEUE_NOT_FOUND');
  });
});

describe('several Workers on one stack', () => {
  it('an event given to the hub through worker 0 reaches a reader on worker 2', async () => {
    const workers = await startWorkers(suite.stack, 3);
    try {
      const queue = uniqueQueue('multi');
      await pausedQueue(workers[0]!, queue);
      const reader = await stream(workers[2]!, `/v1/queues/${queue}/events`);
      expect(reader.res.status).toBe(200);
      await publish(workers[0]!, queue, [jobEvent(queue, 'm1', 'g')]);
      expect(ids(await reader.waitForEvents(1))).toEqual(['m1']);
      // And through worker 1, which binds worker 0's hub by name, to readers on 0 and 2.
      const onZero = await stream(workers[0]!, `/v1/queues/${queue}/events`);
      await publish(workers[1]!, queue, [jobEvent(queue, 'm2', 'g')]);
      expect(ids(await reader.waitForEvents(2))).toEqual(['m1', 'm2']);
      expect(ids(await onZero.waitForEvents(1))).toEqual(['m2']);
    } finally {
      for (const reader of readers) reader.close();
      for (const worker of workers) await worker.dispose();
    }
  });
});
