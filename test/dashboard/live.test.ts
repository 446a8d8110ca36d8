// The dashboard live (issue 30): its views follow the API's event streams, read with fetch and
// the admin token, in real Chromium against the real Worker, its event hub and Redis. A job's
// page shows the job complete, and a queue's view its counts move, each from its stream: the
// measure is the page's own reads of the view's routes, under the page's clock (runFor): while
// live, 35 seconds of timers make one read, where polling makes seven, and the next timed read
// is then thirty seconds away, so the change that shows at once came from an event. The header
// says "live"; the list follows its first queues' streams (2 on HTTP/1.1, as here). A Worker
// whose event hub cannot be reached (bound to a Worker that is not running, as a deploy without
// it would be) answers 500 to every stream: its dashboard says "polling" and still shows changes.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { DURABLE_OBJECTS, startMiniflareWorker } from '../../scripts/worker-stack.mjs';
import type { Reply } from '../helpers/endpoint';
import { ADMIN_TOKEN, type RunningWorker, SIGNING_SECRET } from '../helpers/worker';
import { enqueue, expectJson, putQueue, waitForState } from '../http/support';
import { isEventStream, openPage, startAt, until } from './browser';
import { useDashboardSuite } from './suite';

const suite = useDashboardSuite({
  endpoints: { endpoint: (): Reply => ({ status: 200, headers: { 'content-type': 'application/json' }, body: '{"ok":true}' }) },
});
let worker: RunningWorker;

const queue = 'live';
/** A group held paused: its jobs wait until the test lets them go. */
const HELD = 'held';

beforeAll(async () => {
  worker = suite.worker;
  await putQueue(worker, queue, { endpoint: suite.endpoints.endpoint.url, keepCompleted: 100 });
  await expectJson(await worker.api(`/v1/queues/${queue}/groups/${HELD}/pause`, { method: 'POST' }), 200);
  await enqueue(worker, queue, { id: 'job-1', group: HELD, data: { n: 1 } });
  // Two more queues for the list, which follows the first two by name (2 streams on HTTP/1.1).
  for (const name of ['live-b', 'live-c']) await putQueue(worker, name, { endpoint: 'http://127.0.0.1:9/jobs' });
});

/**
 * A page of the suite's context whose clock the test runs (time flows as usual until runFor),
 * and its reads of `route` (that pathname exactly: not the stream under it) and of any stream.
 */
async function watchedPage(route: string): Promise<{ page: Page; reads: () => number; streams: string[] }> {
  const page = await suite.context.newPage();
  let reads = 0;
  const streams: string[] = [];
  page.on('request', (request) => {
    const url = new URL(request.url());
    if (isEventStream(request.url())) streams.push(url.pathname + url.search);
    else if (url.pathname === route) reads++;
  });
  await page.clock.install();
  return { page, reads: () => reads, streams };
}

const chip = (page: Page) => page.locator('#live');
const liveNow = (page: Page) => page.locator('#live[data-live="live"]').waitFor();

/**
 * 35 seconds of the page's timers at once (the 5 s refresh ticks seven times): a live view reads
 * once (its timed read comes 30 s after the last), where a polled one reads seven times. Then its
 * next timed read is thirty seconds away.
 */
async function timersRunWhileLive(page: Page, reads: () => number): Promise<void> {
  // The reads the opening caused (the first, and the one once the stream is attached) are over.
  await page.waitForTimeout(500);
  const before = reads();
  await page.clock.runFor(35_000);
  await until(async () => reads(), (n) => n >= before + 1, 'the one timed read of a live view');
  await page.waitForTimeout(300);
  expect(reads()).toBe(before + 1);
}

describe('live from the event streams', () => {
  it("a job's page shows it go from waiting to completed, from its stream, without a reload", async () => {
    const jobRoute = `/v1/queues/${queue}/jobs/job-1`;
    const { page, reads, streams } = await watchedPage(jobRoute);
    await startAt(page, worker.url, ADMIN_TOKEN, `/queue/${queue}/job/job-1`);
    await page.locator('[data-job-state="waiting"]').waitFor();
    await liveNow(page);
    expect(await chip(page).innerText()).toBe('live');
    expect(streams).toEqual([`${jobRoute}/events`]);
    await timersRunWhileLive(page, reads);

    const before = reads();
    const url = page.url();
    await expectJson(await worker.api(`/v1/queues/${queue}/groups/${HELD}/resume`, { method: 'POST' }), 200);
    await page.locator('[data-job-state="completed"]').waitFor({ timeout: 10_000 });
    // Re-read for its events (active, completed: a few reads at most), on the same page.
    expect(reads() - before).toBeGreaterThanOrEqual(1);
    expect(reads() - before).toBeLessThanOrEqual(4);
    expect(page.url()).toBe(url);
    // Its stream ended with the job: the page of a finished job polls it, and says so.
    await page.locator('#live[data-live="polling"]').waitFor();
    expect(streams).toHaveLength(1);
    await page.close();
  });

  it("a queue's view shows its counts change as jobs are added, from its stream", async () => {
    const { page, reads, streams } = await watchedPage(`/v1/queues/${queue}`);
    await expectJson(await worker.api(`/v1/queues/${queue}/groups/${HELD}/pause`, { method: 'POST' }), 200);
    await startAt(page, worker.url, ADMIN_TOKEN, `/queue/${queue}`);
    const waiting = page.locator('#queue-view [data-count="waiting"] dd');
    await until(() => waiting.innerText(), (n) => n === '0', 'no job waiting');
    await liveNow(page);
    expect(streams).toEqual([`/v1/queues/${queue}/events`]);
    await timersRunWhileLive(page, reads);

    await enqueue(worker, queue, { id: 'job-2', group: HELD, data: { n: 2 } });
    await until(() => waiting.innerText(), (n) => n === '1', 'the waiting count to become 1', 10_000);
    await enqueue(worker, queue, { id: 'job-3', group: HELD, data: { n: 3 } });
    await until(() => waiting.innerText(), (n) => n === '2', 'the waiting count to become 2', 10_000);
    await expectJson(await worker.api(`/v1/queues/${queue}/groups/${HELD}/resume`, { method: 'POST' }), 200);
    const completed = page.locator('#queue-view [data-count="completed"] dd');
    await until(() => completed.innerText(), (n) => n === '3', 'three jobs completed', 10_000);
    expect(await waiting.innerText()).toBe('0');
    expect(await chip(page).innerText()).toBe('live');
    await page.close();
  });

  it('the list follows the streams of its first two queues by name, and says so', async () => {
    const { page, streams } = await watchedPage('/v1/queues');
    await startAt(page, worker.url, ADMIN_TOKEN, '/');
    await liveNow(page);
    expect(await chip(page).innerText()).toBe('live · 2 of 3');
    expect(streams.sort()).toEqual(['/v1/queues/live-b/events', `/v1/queues/${queue}/events`]);
    // Leaving the list closes its streams; the queue's view opens its own.
    await page.locator('article[data-queue="live-c"] h2 a').click();
    await page.locator('#queue-view h1', { hasText: 'live-c' }).waitFor();
    await liveNow(page);
    expect(streams.at(-1)).toBe('/v1/queues/live-c/events');
    expect(await chip(page).innerText()).toBe('live');
    await page.close();
  });

  it('no console errors, page errors or failed requests (a stream the page closed is none), nothing to another origin', () => {
    expect(suite.seen.problems).toEqual([]);
    expect(suite.seen.foreign).toEqual([]);
  });
});

describe('a Worker whose event hub cannot be reached', () => {
  let lone: { url: string; dispose(): Promise<void> };
  let registry: string;
  const EXPECTED_500 = /Failed to load resource: the server responded with a status of 500/;

  beforeAll(async () => {
    // Bound to the hub of a Worker named groupq in a registry where none runs: every stream's
    // open fails there (500), while the job path, which publishes after its answer, still works.
    registry = await mkdtemp(path.join(os.tmpdir(), 'groupq-no-hub-'));
    const sink = new Writable({ write: (_chunk, _encoding, done) => done() });
    lone = await startMiniflareWorker(
      suite.stack,
      { GROUPQ_ADMIN_TOKEN: ADMIN_TOKEN, GROUPQ_SIGNING_SECRET: SIGNING_SECRET },
      {
        name: 'groupq-without-hub',
        durableObjects: { EVENT_HUB: { ...DURABLE_OBJECTS.EVENT_HUB, scriptName: 'groupq' } },
        unsafeDevRegistryPath: registry,
        runtimeOutputTo: sink,
      },
    );
  });
  afterAll(async () => {
    await lone?.dispose();
    await rm(registry, { recursive: true, force: true });
  });

  it('says "polling", and the queue view still shows changes by polling', async () => {
    expect((await fetch(`${lone.url}/v1/queues/${queue}/events`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).status).toBe(500);
    const { context, page, seen } = await openPage(suite.browser, [lone.url], [EXPECTED_500]);
    try {
      await startAt(page, lone.url, ADMIN_TOKEN, `/queue/${queue}`);
      await page.locator('#live[data-live="polling"]').waitFor();
      expect(await chip(page).innerText()).toBe('polling');
      expect(await chip(page).getAttribute('title')).toContain('re-reads every 5 s');
      const total = page.locator('#queue-view [data-count="completed"] dd');
      const before = Number(await total.innerText());
      await enqueue(worker, queue, { id: 'job-4', group: 'free', data: { n: 4 } });
      await waitForState(worker, queue, 'job-4', 'completed');
      await until(() => total.innerText(), (n) => Number(n) === before + 1, 'the next timed read to show the completed job', 15_000);
      expect(await chip(page).innerText()).toBe('polling');
      expect(seen.problems).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
