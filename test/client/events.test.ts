// groupq/client following event streams against the real Worker and its hub: `queue.events()`
// and `queue.jobEvents(id)` yield a real job's added, active and completed, typed; a reader that
// leaves and comes back with the last id it read gets the rest, nothing twice; a connection cut
// under the iterator (a real proxy that hangs up midway) is resumed by the iterator itself; a
// job's iterator ends after its final event; `followEventsUrl` follows a minted events URL with
// no Authorization header; refusals end the iteration with the client's GroupqError.
// `waitForJob` rides on the job's stream: no GET ?waitMs, and no Redis command (INFO commandstats
// on the stack's own redis-server) while the job runs; a Worker without the route is polled.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import { createRespClient } from '../../scripts/resp.mjs';
import { GroupqClient, type QueueClient, type StreamEvent, followEventsUrl } from '../../src/client';
import { startEndpoint, useEndpoints } from '../helpers/endpoint';
import { ADMIN_TOKEN } from '../helpers/worker';
import { expectJson, uniqueQueue, useHttpSuite } from '../http/support';
import { caught } from './support';

const suite = useHttpSuite();
const endpoints = useEndpoints({
  done: ({ job }) => ({ headers: { 'content-type': 'application/json' }, body: JSON.stringify({ got: job.data }) }),
});

const client = (url = suite.worker.url) => new GroupqClient({ url, token: ADMIN_TOKEN });

/** A queue that delivers to `done` and keeps its completed jobs, paused until the test resumes it. */
async function pausedQueue(prefix: string): Promise<QueueClient> {
  const q = client().queue(uniqueQueue(prefix));
  await q.configure({ endpoint: endpoints.done.url, keepCompleted: 10 });
  await q.pause();
  return q;
}

/** Reads `events` until `stop` says so, or the iterator ends. */
async function collect(events: AsyncIterable<StreamEvent>, stop: (seen: StreamEvent[]) => boolean = () => false): Promise<StreamEvent[]> {
  const seen: StreamEvent[] = [];
  for await (const event of events) {
    seen.push(event);
    if (stop(seen)) break;
  }
  return seen;
}

/**
 * Starts reading a stream in the background (`open` is given the onOpen to pass on); resolves
 * once its connection is open, with what the reading will have read.
 */
async function readInBackground(
  open: (onOpen: () => void) => AsyncIterable<StreamEvent>,
  stop: (seen: StreamEvent[]) => boolean,
): Promise<{ done: Promise<StreamEvent[]> }> {
  let onOpen = () => {};
  const opened = new Promise<void>((resolve) => (onOpen = resolve));
  const done = collect(open(onOpen), stop);
  await Promise.race([opened, done]);
  return { done };
}

const names = (events: StreamEvent[]) => events.map((e) => e.event);
const idsOf = (events: StreamEvent[]) => events.flatMap((e) => ('eventId' in e ? [e.eventId] : []));

describe('queue.events() and queue.jobEvents(id)', () => {
  it("the queue's stream yields a real job's added, active and completed, typed, with its result", async () => {
    const q = await pausedQueue('cev-queue');
    const reading = await readInBackground((onOpen) => q.events({ onOpen }), (seen) => seen.some((e) => e.event === 'completed'));
    const { id } = await q.add({ group: 'g', data: { n: 1 } });
    await q.resume();
    const seen = await reading.done;
    expect(names(seen.filter((e) => e.event !== 'gap' && e.data.id === id))).toEqual(['added', 'active', 'completed']);
    const completed = seen.at(-1)!;
    expect(completed).toMatchObject({ event: 'completed', data: { id, queue: q.name, group: 'g', state: 'completed', attempt: 1, result: { got: { n: 1 } } } });
    if (completed.event === 'completed') expectTypeOf(completed.data.attempt).toEqualTypeOf<number>();
    // Each event its own id.
    const ids = idsOf(seen);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("a job's stream starts with its state and ends by itself after its final event", async () => {
    const q = await pausedQueue('cev-job');
    const { id } = await q.add({ group: 'g', data: 2 });
    const seen: StreamEvent[] = [];
    for await (const event of q.jobEvents(id)) {
      seen.push(event);
      if (seen.length === 1) await q.resume();
    }
    expect(names(seen)).toEqual(['added', 'active', 'completed']);
    expect(seen.every((e) => e.event !== 'gap' && e.data.id === id)).toBe(true);
    // A job that has ended: its end alone, and the iterator ends.
    expect(names(await collect(q.jobEvents(id)))).toEqual(['completed']);
  });

  it('a reader that leaves and comes back with the last id it read gets the rest, nothing twice', async () => {
    const q = await pausedQueue('cev-resume');
    const { id } = await q.add({ group: 'g', data: 3 });
    const first = new AbortController();
    const before: StreamEvent[] = [];
    const error = await caught(
      (async () => {
        for await (const event of q.jobEvents(id, { signal: first.signal })) {
          before.push(event);
          first.abort(new Error('the reader left'));
        }
      })(),
    );
    expect(error).toMatchObject({ code: 'ABORTED', cause: new Error('the reader left') });
    expect(names(before)).toEqual(['added']);
    // Meanwhile the job runs to its end.
    await q.resume();
    await q.waitForJob(id, { timeoutMs: 20_000 });
    const last = before[0]!;
    if (last.event === 'gap') throw new Error('a job stream opens with the job, not a gap');
    const after = await collect(q.jobEvents(id, { lastEventId: last.eventId }));
    expect(names(after)).toEqual(['active', 'completed']);
    expect(new Set([...idsOf(before), ...idsOf(after)]).size).toBe(3);
    // Resumed after its end: 204, and the iterator ends with nothing.
    expect(await collect(q.jobEvents(id, { lastEventId: idsOf(after).at(-1)! }))).toEqual([]);
  });

  it('a group narrows the queue stream; a refusal ends the iteration with GroupqError', async () => {
    const q = await pausedQueue('cev-group');
    const reading = await readInBackground((onOpen) => q.events({ group: 'mine', onOpen }), (seen) => seen.length === 2);
    await q.add({ group: 'other', id: 'o1' });
    await q.add({ group: 'mine', id: 'm1' });
    await q.add({ group: 'mine', id: 'm2' });
    const seen = await reading.done;
    expect(seen.map((e) => e.event !== 'gap' && [e.event, e.data.id])).toEqual([['added', 'm1'], ['added', 'm2']]);

    expect(await caught(collect(q.jobEvents('no-such-job')))).toMatchObject({ code: 'JOB_NOT_FOUND', status: 404 });
    expect(await caught(collect(client().queue('no-such-queue').events()))).toMatchObject({ status: 404 });
    const stranger = new GroupqClient({ url: suite.worker.url, token: 'not-the-admin-token' }).queue(q.name);
    expect(await caught(collect(stranger.events()))).toMatchObject({ code: 'UNAUTHORIZED', status: 401 });
  });
});

/** A real proxy in front of the Worker that hangs up the first stream it carries once an event went through. */
async function startCuttingProxy(target: string) {
  const seen: string[] = [];
  let cut = 0;
  const server = http.createServer((req, res) => {
    seen.push(`${req.method} ${req.url} ${req.headers['last-event-id'] ?? ''}`.trim());
    const upstream = http.request(`${target}${req.url}`, { method: req.method, headers: { ...req.headers, host: new URL(target).host } }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      const cutThis = cut === 0 && String(answer.headers['content-type']).startsWith('text/event-stream');
      if (cutThis) cut++;
      let text = '';
      res.flushHeaders();
      answer.on('data', (chunk: Buffer) => {
        text += chunk.toString();
        // After the first whole event (an id and a blank line) is on its way, the connection drops.
        const drop = cutThis && /\nid: [^\n]+\n[^]*?\n\n/.test(text);
        res.write(chunk, () => {
          if (!drop) return;
          answer.destroy();
          res.socket?.destroy();
        });
      });
      answer.on('end', () => res.end());
      answer.on('error', () => res.socket?.destroy());
    });
    upstream.on('error', () => res.socket?.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  };
}

describe('resuming by itself', () => {
  let proxy: Awaited<ReturnType<typeof startCuttingProxy>>;
  beforeAll(async () => {
    proxy = await startCuttingProxy(suite.worker.url);
  });
  afterAll(() => proxy?.close());

  it('a connection cut midway is resumed from the last id read: every event once, in order', async () => {
    const admin = await pausedQueue('cev-cut');
    const { id } = await admin.add({ group: 'g', data: 4 });
    const q = client(proxy.url).queue(admin.name);
    const retries: number[] = [];
    let opens = 0;
    const seen: StreamEvent[] = [];
    for await (const event of q.jobEvents(id, { onOpen: () => opens++, onRetry: (waitMs) => retries.push(waitMs) })) {
      seen.push(event);
      // The cut comes right after this first event; the job runs while the reader is away.
      if (seen.length === 1) await admin.resume();
    }
    expect(names(seen)).toEqual(['added', 'active', 'completed']);
    expect(new Set(idsOf(seen)).size).toBe(3);
    expect(opens).toBe(2);
    // The Worker's `retry:` hint set the wait, and the second request resumed after the first event.
    expect(retries).toEqual([1000]);
    const streams = proxy.seen.filter((line) => line.includes('/events'));
    expect(streams).toEqual([`GET /v1/queues/${admin.name}/jobs/${id}/events`, `GET /v1/queues/${admin.name}/jobs/${id}/events ${idsOf(seen)[0]}`]);
  });
});

describe('followEventsUrl', () => {
  it('follows a minted events URL without the admin token, to the end', async () => {
    const q = await pausedQueue('cev-url');
    const { id } = await q.add({ group: 'g', data: 5 });
    const res = await suite.worker.api(`/v1/queues/${q.name}/jobs/${id}/events-url`, { method: 'POST' });
    const { eventsUrl } = await expectJson<{ eventsUrl: string }>(res, 200);
    const sent: Headers[] = [];
    const seen: StreamEvent[] = [];
    const fetchSeen: typeof fetch = (input, init) => {
      sent.push(new Headers(init?.headers));
      return fetch(input, init);
    };
    for await (const event of followEventsUrl(eventsUrl, { fetch: fetchSeen })) {
      seen.push(event);
      if (seen.length === 1) await q.resume();
    }
    expect(names(seen)).toEqual(['added', 'active', 'completed']);
    expect(sent.every((headers) => !headers.has('authorization'))).toBe(true);
    // A capability that is not one: refused, and the iteration ends with it.
    const forged = `${suite.worker.url}/v1/queues/${q.name}/jobs/${id}/events?cap=forged.${'A'.repeat(43)}`;
    expect(await caught(collect(followEventsUrl(forged)))).toMatchObject({ code: 'UNAUTHORIZED', status: 401 });
  });
});

describe('waitForJob on the job stream', () => {
  let redis: ReturnType<typeof createRespClient>;
  beforeAll(() => {
    redis = createRespClient({ port: suite.stack.redisPort });
  });
  afterAll(() => redis?.close());

  /** Every command the stack's redis-server has run (INFO's own calls left out: they are the measuring). */
  async function commands(): Promise<number> {
    const info = String(await redis.call(['INFO', 'commandstats']));
    let total = 0;
    for (const [, name, calls] of info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) if (name !== 'info') total += Number(calls);
    return total;
  }

  /** A client whose requests are noted as "METHOD path?query" once their answer began, sent to `route(url)`. */
  function watchedClient(route: (url: URL) => URL = (url) => url) {
    const sent: string[] = [];
    const answered: ((line: string) => void)[] = [];
    const watched = new GroupqClient({
      url: suite.worker.url,
      token: ADMIN_TOKEN,
      fetch: async (input, init) => {
        const url = route(new URL(String(input)));
        const res = await fetch(url, init);
        const line = `${init?.method} ${url.pathname}${url.search}`;
        sent.push(line);
        for (const listener of answered) listener(line);
        return res;
      },
    });
    const answer = (test: (line: string) => boolean) => new Promise<void>((resolve) => answered.push((line) => test(line) && resolve()));
    return { client: watched, sent, answer };
  }

  it('answers the completed job as soon as it ends, with no GET ?waitMs and no Redis command while it runs', async () => {
    let release = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    const endpoint = await startEndpoint(async ({ job }) => {
      await held;
      return { headers: { 'content-type': 'application/json' }, body: JSON.stringify({ got: job.data }) };
    });
    try {
      const { client: watched, sent, answer } = watchedClient();
      // Default settings: keepCompleted 0; keepResult keeps this job's end for the wait.
      const q = watched.queue<number, { got: number }>(uniqueQueue('cev-wait'));
      await q.configure({ endpoint: endpoint.url });
      const { id } = await q.add({ group: 'g', data: 6, keepResult: true });
      await endpoint.waitFor(1);
      sent.length = 0;
      const streamOpen = answer((line) => line.endsWith('/events'));
      const waiting = q.waitForJob(id, { timeoutMs: 20_000 });
      await streamOpen;
      // The job runs for 2 s: a waiter on the stream asks Redis nothing meanwhile (a GET ?waitMs
      // would look at the job 5 times in its first second, then once a second).
      const before = await commands();
      await new Promise((resolve) => setTimeout(resolve, 2000));
      expect((await commands()) - before).toBe(0);
      const releasedAt = Date.now();
      release();
      const job = await waiting;
      expect(Date.now() - releasedAt).toBeLessThan(2000);
      expect(job).toMatchObject({ id, state: 'completed', result: { got: 6 } });
      expect(sent).toEqual([`GET /v1/queues/${q.name}/jobs/${id}/events`, `GET /v1/queues/${q.name}/jobs/${id}`]);
    } finally {
      release();
      await endpoint.close();
    }
  });

  it('a Worker without the stream route (its 404 NOT_FOUND, not JOB_NOT_FOUND) is polled with GET ?waitMs, as before', async () => {
    // The stream's request goes to a path no Worker routes: the "no route" answer an older Worker gives.
    const { client: watched, sent } = watchedClient((url) => (url.pathname.endsWith('/events') ? new URL(url.href.replace('/v1/', '/v0/')) : url));
    const q = watched.queue(uniqueQueue('cev-wait-old'));
    await q.configure({ endpoint: endpoints.done.url });
    await q.pause();
    await q.add({ group: 'g', id: 'held' });
    sent.length = 0;
    const before = await commands();
    expect(await q.waitForJob('held', { timeoutMs: 1_200 })).toMatchObject({ id: 'held', state: 'waiting' });
    // What the stream saves: the Worker looked at the job at 0, 100, 200, 400 and 800 ms, then read it.
    expect((await commands()) - before).toBeGreaterThanOrEqual(5);
    expect(sent).toHaveLength(2);
    expect(sent[0]).toBe(`GET /v0/queues/${q.name}/jobs/held/events`);
    expect(sent[1]).toMatch(new RegExp(`^GET /v1/queues/${q.name}/jobs/held\\?waitMs=(1[01]\\d\\d|1200)$`));
    // The route's own 404s end the wait: the job is not there.
    expect(await caught(client().queue(q.name).waitForJob('no-such-job'))).toMatchObject({ code: 'JOB_NOT_FOUND', status: 404 });
  });
});
