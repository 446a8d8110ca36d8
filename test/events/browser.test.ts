// Issue 30's browser test: a page served from another origin (a real loopback HTTP server) enqueues
// with a publish token under CORS, takes `eventsUrl` from the answer and follows its job with
// Chromium's own EventSource, which sends no Authorization header. It must receive its job's
// `added`, `active`, `progress` and `completed`, from a real endpoint that reports progress through
// the lease callback and then answers, and nothing of any other job; the capability opens no other
// job's stream or GET, nor the queue's stream.
//
// Why the page's job waits when its stream opens: a job's stream opens with the job's current
// state (src/core/events/job-state.ts), so a job leased in its own enqueue call (as a ready group's
// job is) would open at `active`, never showing `added`. The page enqueues into a group whose job
// ahead of it (`blocker`) the endpoint holds until the page reports its EventSource open; only then
// does the blocker end, and the page's job start. The admin's queue stream is open before the
// page's enqueue, as a dashboard's would be, so that events are wanted all along; the page's live
// events carry the very ids the queue stream gave them.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compareEventIds, isEventId } from '../../src/protocol/event-id';
import type { SseEvent } from '../../src/protocol/sse';
import { type Watch, launchChromium, until, watch } from '../dashboard/browser';
import { startEndpoint, type Endpoint } from '../helpers/endpoint';
import { type SseReader, openSse } from '../helpers/sse-reader';
import { ADMIN_TOKEN } from '../helpers/worker';
import { enqueue, putQueue, uniqueQueue, useHttpSuite } from '../http/support';
import { checkEvents } from '../openapi/contract';

const suite = useHttpSuite();
const TOKEN = 'pub_events_browser_0001';
const GROUP = 'cart:7';
const BLOCKER = 'blocker';

/**
 * The page a shop would serve: it enqueues with the queue's publish token, follows its job at
 * the answer's eventsUrl with EventSource, and tells the test (window.reportOpen, exposed by
 * Playwright) when the stream is open. `follow` settles once EventSource has stopped for good:
 * after `completed` the stream ends, EventSource reconnects with Last-Event-ID, and the 204 it
 * gets stops it (or after `timeoutMs`, so that a stream that never ends fails with what it read).
 */
const PAGE = `<!doctype html>
<html lang="en"><meta charset="utf-8"><title>Follow my job</title><link rel="icon" href="data:,">
<script>
const NAMES = ['added', 'active', 'progress', 'retrying', 'completed', 'failed', 'cancelled', 'expired', 'gap', 'message'];

async function enqueueJob(api, queue, token, job) {
  const res = await fetch(api + '/v1/queues/' + encodeURIComponent(queue) + '/jobs', {
    method: 'POST',
    headers: { authorization: 'Bearer ' + token, 'content-type': 'application/json' },
    body: JSON.stringify(job),
  });
  return { status: res.status, body: await res.json() };
}

function follow(eventsUrl, timeoutMs) {
  return new Promise((resolve) => {
    const source = new EventSource(eventsUrl);
    const events = [];
    let opens = 0;
    const done = (timedOut) => {
      source.close();
      resolve({ events, opens, timedOut });
    };
    const timer = setTimeout(() => done(true), timeoutMs);
    for (const name of NAMES) source.addEventListener(name, (e) => events.push({ type: e.type, data: e.data, lastEventId: e.lastEventId }));
    source.onopen = () => {
      opens += 1;
      if (opens === 1) window.reportOpen();
    };
    source.onerror = () => {
      if (source.readyState !== EventSource.CLOSED) return;
      clearTimeout(timer);
      done(false);
    };
  });
}

/** EventSource at a URL the page should not open: 'closed' once it gives up, 'open' if it opened. */
function tryStream(url) {
  return new Promise((resolve) => {
    const source = new EventSource(url);
    let events = 0;
    for (const name of NAMES) source.addEventListener(name, () => (events += 1));
    source.onopen = () => {
      source.close();
      resolve({ state: 'open', events });
    };
    source.onerror = () => {
      const state = source.readyState === EventSource.CLOSED ? 'closed' : 'reconnecting';
      source.close();
      resolve({ state, events });
    };
  });
}

/** The same capability on job \`id\`'s routes: its stream (EventSource, then fetch) and its GET. */
async function tryOtherJob(eventsUrl, id) {
  const url = new URL(eventsUrl);
  url.pathname = url.pathname.replace(/[^/]+\\/events$/, encodeURIComponent(id) + '/events');
  const stream = await tryStream(url.href);
  const read = async (href) => {
    const res = await fetch(href);
    return { status: res.status, code: (await res.json()).error?.code };
  };
  const job = new URL(url);
  job.pathname = job.pathname.replace(/\\/events$/, '');
  return { stream, streamGet: await read(url.href), get: await read(job.href) };
}

/** The same capability on the queue's stream. */
function tryQueueStream(eventsUrl) {
  const url = new URL(eventsUrl);
  url.pathname = url.pathname.replace(/\\/jobs\\/[^/]+\\/events$/, '/events');
  return tryStream(url.href);
}
</script>
<h1>Your order is being prepared</h1>
</html>`;

let server: http.Server;
let origin: string;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let seen: Watch;
let endpoint: Endpoint;
let adminStream: SseReader | undefined;

/** Resolved when the page reports its EventSource open: the endpoint holds the blocker until then. */
let reportOpen!: () => void;
const pageOpened = new Promise<void>((resolve) => (reportOpen = resolve));
/** The status the lease callback `progress` answered the endpoint. */
let progressStatus: number | undefined;

beforeAll(async () => {
  server = http.createServer((req, res) => {
    if (req.method === 'GET' && req.url === '/') return res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(PAGE);
    res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  endpoint = await startEndpoint(async ({ job }) => {
    if (job.id === BLOCKER) {
      await pageOpened;
      return {};
    }
    if (job.group !== GROUP) return {};
    // The page's job: progress through its lease callback, then its answer completes it.
    const res = await fetch(job.callbacks.progress, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ lease: job.lease.token, progress: { step: 1, of: 2 } }),
    });
    progressStatus = res.status;
    return { headers: { 'content-type': 'application/json' }, body: JSON.stringify({ receipt: 'r-1' }) };
  });
  browser = await launchChromium();
  context = await browser.newContext();
  // Refusals the page asks for on purpose, which Chromium logs: the 401s, and the queue stream's
  // refusal, which has no CORS headers (only a capability's own routes answer any origin), so
  // Chromium blocks it and logs the request as failed.
  seen = watch(context, [origin, suite.worker.url], [/status of 401/, /blocked by CORS policy/, /Failed to load resource: net::ERR_FAILED/]);
  page = await context.newPage();
  await page.exposeFunction('reportOpen', () => reportOpen());
});

afterAll(async () => {
  adminStream?.close();
  await browser?.close();
  await endpoint?.close();
  if (server) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

interface Followed {
  events: SseEvent[];
  opens: number;
  timedOut: boolean;
}

const parse = (event: SseEvent) => ({ type: event.type, id: event.lastEventId, data: JSON.parse(event.data) as Record<string, unknown> });

describe('a page on another origin follows its own job with EventSource', () => {
  let queue: string;
  let id: string;
  let eventsUrl: string;

  it("enqueues with a publish token and receives its job's added, active, progress and completed", async () => {
    queue = uniqueQueue('browser-events');
    // publishEvents is left to its default ("state"); finished jobs are kept, so that the
    // reconnect after the end finds the job and answers 204 (on a queue that keeps none, that
    // resume answers 404 JOB_NOT_FOUND for now, which stops EventSource too, as an error).
    await putQueue(suite.worker, queue, { endpoint: endpoint.url, allowedOrigins: [origin], publishTokens: [TOKEN], keepCompleted: 10 });
    // The job ahead of the page's, in the page's group: delivered, and held.
    await enqueue(suite.worker, queue, { group: GROUP, id: BLOCKER });
    await endpoint.waitFor(1);
    adminStream = await openSse(`${suite.worker.url}/v1/queues/${queue}/events`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    expect(adminStream.res.status).toBe(200);

    // Every answer to the page's stream, the reconnect after the end included.
    const streamAnswers: { status: number; allowOrigin: string | null }[] = [];
    page.on('response', (res) => {
      if (res.url() === eventsUrl) streamAnswers.push({ status: res.status(), allowOrigin: res.headers()['access-control-allow-origin'] ?? null });
    });

    await page.goto(`${origin}/`);
    const answer = (await page.evaluate(
      `enqueueJob(${JSON.stringify(suite.worker.url)}, ${JSON.stringify(queue)}, ${JSON.stringify(TOKEN)}, ${JSON.stringify({ group: GROUP, data: { cart: 7 } })})`,
    )) as { status: number; body: { id: string; state: string; eventsUrl: string } };
    expect(answer.status).toBe(201);
    ({ id, eventsUrl } = answer.body);
    expect(answer.body).toEqual({ id, state: 'waiting', eventsUrl: expect.any(String) });
    expect(eventsUrl.startsWith(`${suite.worker.url}/v1/queues/${queue}/jobs/${encodeURIComponent(id)}/events?cap=`)).toBe(true);

    // While the page follows, a job of another group comes and goes on the same queue.
    void pageOpened.then(() => enqueue(suite.worker, queue, { group: 'elsewhere', id: 'other' }));
    const followed = (await page.evaluate(`follow(${JSON.stringify(eventsUrl)}, 20000)`)) as Followed;
    expect(followed.timedOut, JSON.stringify(followed.events)).toBe(false);
    expect(followed.opens).toBe(1);
    expect(progressStatus).toBe(200);

    const events = followed.events.map(parse);
    expect(events.map((e) => e.type)).toEqual(['added', 'active', 'progress', 'completed']);
    const where = { id, queue, group: GROUP };
    expect(events.map((e) => e.data)).toEqual([
      { ...where, state: 'waiting', attempt: 0, at: expect.any(Number) },
      { ...where, state: 'active', attempt: 1, at: expect.any(Number) },
      { ...where, state: 'active', attempt: 1, at: expect.any(Number), progress: { step: 1, of: 2 } },
      // publishEvents "state": the endpoint's answer is not the page's to read.
      { ...where, state: 'completed', attempt: 1, at: expect.any(Number) },
    ]);
    const ids = events.map((e) => e.id);
    expect(ids.every(isEventId), ids.join(' ')).toBe(true);
    for (let i = 1; i < ids.length; i++) expect(compareEventIds(ids[i - 1]!, ids[i]!), ids.join(' ')).toBeLessThan(0);
    // What the document says of the job stream's events (test/openapi/contract.ts).
    checkEvents('jobEvents', followed.events);

    // The stream answered the page (CORS: any origin), ended after `completed`, and EventSource's
    // reconnect with Last-Event-ID got 204, which stopped it.
    expect(streamAnswers).toEqual([{ status: 200, allowOrigin: '*' }, { status: 204, allowOrigin: '*' }]);

    // The queue's stream had the same events of this job, with the same ids once the page was open
    // (the page's `added` is its job's state at the open, with the stream's newest id then).
    const live = adminStream.events.map(parse).filter((e) => e.data.id === id);
    expect(live.map((e) => e.type)).toEqual(['added', 'active', 'progress', 'completed']);
    expect(live.slice(1).map((e) => e.id)).toEqual(ids.slice(1));
    expect(live[3]!.data.result).toEqual({ receipt: 'r-1' });
    checkEvents('queueEvents', adminStream.events);
  });

  it("receives nothing of another job: its capability opens neither the blocker's stream or GET, nor the queue's stream", async () => {
    // The other jobs of the queue did have events while the page followed its own.
    const others = adminStream!.events.map(parse).filter((e) => e.data.id !== id);
    expect(others.map((e) => `${e.data.id} ${e.type}`)).toEqual(expect.arrayContaining([`${BLOCKER} completed`, 'other completed']));

    const blocker = await page.evaluate(`tryOtherJob(${JSON.stringify(eventsUrl)}, ${JSON.stringify(BLOCKER)})`);
    expect(blocker).toEqual({
      // EventSource fails the connection on a 401, and does not try again.
      stream: { state: 'closed', events: 0 },
      // The refusal carries CORS, so the page reads why.
      streamGet: { status: 401, code: 'UNAUTHORIZED' },
      get: { status: 401, code: 'UNAUTHORIZED' },
    });
    expect(await page.evaluate(`tryQueueStream(${JSON.stringify(eventsUrl)})`)).toEqual({ state: 'closed', events: 0 });
  });

  it('no request left the two origins, and nothing failed but the refusal the page asked for', async () => {
    expect(seen.foreign).toEqual([]);
    // The queue stream's 401 has no CORS headers: Chromium blocks it and reports the request failed
    // (the blocker's stream, whose 401 the page may read, is only aborted by EventSource). The
    // report may come after the page's answer: wait for it, then nothing else may be there.
    const queueStream = new URL(eventsUrl);
    queueStream.pathname = `/v1/queues/${queue}/events`;
    const expected = [`request failed: ${queueStream.href} net::ERR_FAILED`];
    await until(async () => [...seen.problems], (problems) => problems.length >= expected.length, 'the blocked request');
    expect(seen.problems).toEqual(expected);
  });
});
