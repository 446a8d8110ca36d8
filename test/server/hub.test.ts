// The Node server's event hubs (src/server/hub.ts) on plain Node: the hub a Worker has as a
// Durable Object (test/events/hub.test.ts, order.test.ts), here in the process with its log and
// order in memory, driven through the same behaviours. Streams are the Worker's own
// (HubSubscription, eventStream), served over real HTTP on loopback by @hono/node-server and
// read with src/protocol/sse.ts's parser; the handler is the least a stream route does (a resume
// that missed some opens with a `gap`), so what is checked here is the hub.
import { serve } from '@hono/node-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HubSubscription, eventStream } from '../../src/core/events/stream';
import { filterOf } from '../../src/core/events/wire';
import type { HubMessage } from '../../src/core/events/wire';
import { formatEventId } from '../../src/protocol/event-id';
import { encodeEvent } from '../../src/protocol/sse';
import { type Hubs, createHubs } from '../../src/server/hub';
import { PairEnd } from '../../src/server/socket-pair';
import { EPOCH, expectIncreasing, ids, jobEvent, lines, numbered, parsed, placed } from '../helpers/hub-events';
import { type SseReader, openSse } from '../helpers/sse-reader';
import { uniqueQueue } from '../http/support';

let hubs: Hubs = createHubs();
let base = '';
let close: () => void = () => {};

/** A stream of `/<queue>?group=|job=`, resuming after Last-Event-ID. */
async function handle(req: Request): Promise<Response> {
  const url = new URL(req.url);
  const queue = decodeURIComponent(url.pathname.slice(1));
  const since = req.headers.get('last-event-id') ?? undefined;
  const subscription = await HubSubscription.open(hubs.hub(queue), filterOf(url), since);
  const { missed, oldest } = subscription.hello;
  const gap = since !== undefined && missed ? encodeEvent('gap', { queue, lastEventId: since, oldestEventId: oldest ?? null, at: Date.now() }) : '';
  return eventStream({ opening: gap, subscription, signal: req.signal });
}

beforeAll(async () => {
  await new Promise<void>((resolve) => {
    const server = serve({ fetch: handle, port: 0, hostname: '127.0.0.1' }, (info) => {
      base = `http://127.0.0.1:${info.port}`;
      resolve();
    });
    close = () => server.close();
  });
});

const readers: SseReader[] = [];
afterAll(() => {
  for (const reader of readers) reader.close();
  hubs.close();
  close();
});

async function stream(queue: string, query = '', lastEventId?: string): Promise<SseReader> {
  const reader = await openSse(`${base}/${encodeURIComponent(queue)}${query}`, {}, lastEventId);
  expect(reader.res.status).toBe(200);
  readers.push(reader);
  return reader;
}

const publish = (queue: string, events: Parameters<ReturnType<Hubs['hub']>['publish']>[0]) => hubs.hub(queue).publish(events);

describe("a queue's hub in the process", () => {
  it('delivers what it is given, live and in order, with increasing ids, to the streams that want it', async () => {
    const q = uniqueQueue('live');
    const all = await stream(q);
    const groupA = await stream(q, '?group=a');
    const sent = [jobEvent(q, 'a1', 'a'), jobEvent(q, 'b1', 'b'), jobEvent(q, 'a1', 'a', 'active')];
    expect(await publish(q, sent)).toEqual({ stored: 3, streams: 2 });
    const got = await all.waitForEvents(3);
    expect(got.map((e) => e.type)).toEqual(['added', 'added', 'active']);
    expect(ids(got)).toEqual(['a1', 'b1', 'a1']);
    expectIncreasing(got);
    parsed(got);
    expect(ids(await groupA.waitForEvents(2))).toEqual(['a1', 'a1']);
    expect(all.retry()).toBe(1000);
    // Another queue's hub is another hub.
    expect(await publish(uniqueQueue('other'), [jobEvent(q, 'x', 'a')])).toEqual({ stored: 1, streams: 0 });
  });

  it('a group longer than a tag takes still gets exactly its events', async () => {
    const q = uniqueQueue('long');
    const long = `g${'é'.repeat(200)}`;
    const reader = await stream(q, `?group=${encodeURIComponent(long)}`);
    await publish(q, [jobEvent(q, 'l1', `g${'é'.repeat(199)}x`), jobEvent(q, 'l2', long)]);
    expect(ids(await reader.waitForEvents(1))).toEqual(['l2']);
  });

  it('resumes after an id: nothing missed, nothing repeated; from the newest, nothing held', async () => {
    const q = uniqueQueue('resume');
    const batch = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => jobEvent(q, `j${from + i}`, 'g'));
    const first = await stream(q);
    await publish(q, batch(1, 5));
    await first.waitForEvents(5);
    const resumeFrom = first.lastEventId();
    first.close();
    await publish(q, batch(6, 10));
    const again = await stream(q, '', resumeFrom);
    await publish(q, batch(11, 12));
    expect(ids(await again.waitForEvents(7))).toEqual(['j6', 'j7', 'j8', 'j9', 'j10', 'j11', 'j12']);
    const caughtUp = await stream(q, '', again.lastEventId());
    await publish(q, batch(13, 13));
    expect(ids(await caughtUp.waitForEvents(1))).toEqual(['j13']);
    expect(caughtUp.events).toHaveLength(1);
  });

  it('tells a resume from before what it holds that it missed some, and the oldest held', async () => {
    const q = uniqueQueue('gap');
    await publish(q, [jobEvent(q, 'x1', 'g'), jobEvent(q, 'x2', 'g')]);
    const probe = await stream(q, '?group=g', '1-0');
    const [gap, ...rest] = await probe.waitForEvents(3);
    expect(gap!.type).toBe('gap');
    expect(ids(rest)).toEqual(['x1', 'x2']);
    expect(rest[0]!.lastEventId).toBe(JSON.parse(gap!.data).oldestEventId);
  });

  it('keeps 10,000 events: a resume from a trimmed one missed some, from the newest trimmed none', async () => {
    const q = uniqueQueue('trim');
    const at = Date.now();
    const all = Array.from({ length: 10_050 }, (_, i) => ({ ...jobEvent(q, `t${i}`, 'g'), eventId: formatEventId(at, i) }));
    for (let i = 0; i < all.length; i += 1000) await publish(q, all.slice(i, i + 1000));
    const fromTrimmed = await hubs.hub(q).snapshot({}, all[10]!.eventId);
    expect(fromTrimmed).toMatchObject({ missed: true, oldest: all[50]!.eventId });
    expect(fromTrimmed.events.map((e) => e.eventId)).toEqual(all.slice(50).map((e) => e.eventId));
    const fromFloor = await stream(q, '', all[49]!.eventId);
    await publish(q, [jobEvent(q, 'last', 'g')]);
    const rest = await fromFloor.waitForEvents(10_001, 30_000);
    expect(rest[0]!.type).toBe('added');
    expect(rest[0]!.lastEventId).toBe(all[50]!.eventId);
    expect(JSON.parse(rest[10_000]!.data).id).toBe('last');
  });

  it('ids out of order are renumbered after the newest', async () => {
    const q = uniqueQueue('ids');
    const reader = await stream(q);
    const at = Date.now() + 60_000;
    await publish(q, [
      { ...jobEvent(q, 'p0', 'g'), eventId: formatEventId(at, 5) },
      { ...jobEvent(q, 'p1', 'g'), eventId: formatEventId(at, 3) },
      jobEvent(q, 'p2', 'g'),
    ]);
    expect((await reader.waitForEvents(3)).map((e) => e.lastEventId)).toEqual([formatEventId(at, 5), formatEventId(at, 6), formatEventId(at, 7)]);
  });

  it('refuses an event built wrong, and a stream filtered by both a group and a job', async () => {
    const q = uniqueQueue('wrong');
    await expect(publish(q, [{ event: 'added', data: { id: 1 } } as never])).rejects.toThrow(/not a job event/);
    await expect(hubs.hub(q).subscribe({ group: 'g', job: 'j' }, undefined)).rejects.toThrow(/one of group and job/);
  });

  it('lets go of a reader that left', async () => {
    const q = uniqueQueue('left');
    const reader = await stream(q);
    expect(await publish(q, [jobEvent(q, 'l0', 'g')])).toEqual({ stored: 1, streams: 1 });
    await reader.waitForEvents(1);
    reader.close();
    for (let i = 1; (await publish(q, [jobEvent(q, `l${i}`, 'g')])).streams > 0; i++) {
      expect(i).toBeLessThan(100);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  });
});

describe("a job's stream", () => {
  it('gets its own events only and ends after its final one; a resume ends on the held final event', async () => {
    const q = uniqueQueue('job');
    const reader = await stream(q, '?job=job-1');
    await publish(q, [jobEvent(q, 'job-2', 'g', 'active'), jobEvent(q, 'job-1', 'g', 'active')]);
    await reader.waitForEvents(1);
    const resumeFrom = reader.lastEventId();
    await publish(q, [jobEvent(q, 'job-1', 'g', 'completed')]);
    await reader.ended;
    expect(lines(reader.events)).toEqual(['active job-1', 'completed job-1']);
    const again = await stream(q, '?job=job-1', resumeFrom);
    await again.ended;
    expect(lines(again.events)).toEqual(['completed job-1']);
  });
});

describe("the order of a partition's events", () => {
  it('3, 1, 2: 3 waits, 1 goes, 2 frees 3; a number that comes twice goes out once', async () => {
    const q = uniqueQueue('order');
    const reader = await stream(q);
    expect(await publish(q, numbered(q, 3))).toEqual({ stored: 0, streams: 0, held: 1 });
    expect(await publish(q, numbered(q, 1))).toEqual({ stored: 1, streams: 1, held: 1 });
    expect(await publish(q, numbered(q, 2))).toEqual({ stored: 2, streams: 1 });
    expect(await publish(q, numbered(q, 2))).toEqual({ stored: 0, streams: 0, dropped: 1 });
    const got = await reader.waitForEvents(3);
    expect(lines(got)).toEqual(['added j1', 'added j2', 'added j3']);
    expectIncreasing(got);
  });

  it('a number that never comes: the timer ends the hold with a gap, the rest follows, late ones are dropped', async () => {
    const q = uniqueQueue('hold');
    const reader = await stream(q);
    await publish(q, numbered(q, 1));
    expect(await publish(q, numbered(q, 4, 5))).toMatchObject({ stored: 0, held: 2 });
    const got = await reader.waitForEvents(4);
    expect(lines(got)).toEqual(['added j1', 'gap 2', 'added j4', 'added j5']);
    expect(JSON.parse(got[1]!.data)).toEqual({ queue: q, lastEventId: got[0]!.lastEventId, oldestEventId: got[2]!.lastEventId, missing: 2, at: expect.any(Number) });
    expect(await publish(q, numbered(q, 2, 3))).toEqual({ stored: 0, streams: 0, dropped: 2 });
    // A resume from before the gap is told it too: it is in the log.
    const resumed = await stream(q, '', got[0]!.lastEventId);
    expect(lines(await resumed.waitForEvents(3))).toEqual(['gap 2', 'added j4', 'added j5']);
  });

  it('a progress follows its number, and is dropped when its job moved on; epochs and partitions stay apart', async () => {
    const q = uniqueQueue('follow');
    const other = `${q}:1`;
    const reader = await stream(q);
    await publish(q, [placed(q, 'a', 'added', { seq: 1 })]);
    expect(await publish(q, [placed(q, 'a', 'progress', { after: 2 })])).toMatchObject({ stored: 0, held: 1 });
    await publish(q, [placed(q, 'a', 'active', { seq: 2 })]);
    await publish(q, [placed(q, 'b', 'added', { seq: 3 }), placed(q, 'a', 'completed', { seq: 4 })]);
    expect(await publish(q, [placed(q, 'b', 'progress', { after: 3 })])).toEqual({ stored: 1, streams: 1 });
    expect(await publish(q, [placed(q, 'a', 'progress', { after: 3 })])).toEqual({ stored: 0, streams: 0, dropped: 1 });
    await publish(q, [placed(q, 'p1', 'added', { part: other, seq: 2 })]);
    await publish(q, [placed(q, 'p0', 'added', { part: other, seq: 1 })]);
    await publish(q, [placed(q, 'n1', 'added', { epoch: EPOCH + 1, seq: 1 })]);
    await publish(q, numbered(q, 5));
    expect(lines(await reader.waitForEvents(10))).toEqual([
      'added a', 'active a', 'progress a', 'added b', 'completed a', 'progress b', 'added p0', 'added p1', 'added n1', 'added j5',
    ]);
  });
});

describe('what a stream tells the hub, and the hub going away', () => {
  it('a stream that asked Redis for events until later: every stream is told, and a new one hears it in its hello', async () => {
    const q = uniqueQueue('wanted');
    const hub = hubs.hub(q);
    const [asker, other] = await Promise.all([HubSubscription.open(hub, {}, undefined), HubSubscription.open(hub, { job: 'j' }, undefined)]);
    expect(asker.hello.wantedUntil).toBe(0);
    const heard: HubMessage[] = [];
    other.listen((message) => heard.push(message), () => {});
    asker.send({ t: 'wanted', until: 12_345 });
    await expect.poll(() => heard).toEqual([{ t: 'wanted', until: 12_345 }]);
    const late = await HubSubscription.open(hub, {}, undefined);
    expect(late.hello.wantedUntil).toBe(12_345);
    for (const subscription of [asker, other, late]) subscription.close();
  });

  it('a restart loses the log: a resume is told it missed some; close() ends every stream', async () => {
    const q = uniqueQueue('restart');
    const reader = await stream(q);
    await publish(q, [jobEvent(q, 'r1', 'g')]);
    await reader.waitForEvents(1);
    hubs.close();
    await reader.ended;
    hubs = createHubs();
    const resumed = await stream(q, '', reader.lastEventId());
    const [gap] = await resumed.waitForEvents(1);
    expect(gap!.type).toBe('gap');
  });

  it("the socket pair: a close reaches the other end after what was sent before it; a send after it goes nowhere", async () => {
    const [a, b] = PairEnd.pair();
    const got: string[] = [];
    b.addEventListener('message', ({ data }) => got.push(data as string));
    a.send('one');
    a.send('two');
    a.close();
    a.send('three');
    expect(got).toEqual([]);
    await new Promise<void>((resolve) => b.addEventListener('close', resolve));
    expect(got).toEqual(['one', 'two']);
  });
});
