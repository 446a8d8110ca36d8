// The dashboard's production flows, in real Chromium against the real Worker, Redis and endpoint,
// driven as a user does: a job's own view (data, result, progress, lease expiry), the result
// column, finding jobs by id and by group, the bulk actions with their counts, deleting a repeat
// and a queue behind a confirmation that stays until answered, enqueueing a test job and seeing
// it complete, and a tab on a deleted queue that says so and stops polling.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { BrowserContext, Page } from 'playwright-core';
import type { Endpoint, Reply } from '../helpers/endpoint';
import { ADMIN_TOKEN, type RunningWorker } from '../helpers/worker';
import { enqueue, expectJson, putQueue, waitForState } from '../http/support';
import { type Watch, refreshNow, requestsInFlight, screenshot, signedIn, startAt, until, watch } from './browser';
import { useDashboardSuite } from './suite';

const orders = 'orders';
const FAILED = 30;
let failingSucceeds = false;

const suite = useDashboardSuite({
  endpoints: {
    endpoint: (r): Reply => {
      const data = r.job.data as { fail?: boolean; slow?: boolean } | null;
      if (data?.slow) return { status: 202 }; // async: the job stays active until a callback
      if (data?.fail && !failingSucceeds) return { status: 500, headers: { 'groupq-retry': 'false' }, body: 'warehouse offline' };
      return { status: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ receipt: `r-${r.job.id}` }) };
    },
  },
});
const { apiJson } = suite;
/** This file's share of the suite, taken from it first thing in beforeAll. */
let worker: RunningWorker, endpoint: Endpoint, page: Page, seen: Watch;

beforeAll(async () => {
  ({ worker, endpoints: { endpoint }, page, seen } = suite);
  await putQueue(worker, orders, { endpoint: endpoint.url, keepCompleted: 1000, maxAttempts: 1, timeoutMs: 600_000 });
  await enqueue(worker, orders, { id: 'order-1', group: 'customer:1', data: { sku: 'A1', qty: 2 } });
  await enqueue(worker, orders, { id: 'export-9', group: 'exports', data: { slow: true, rows: 120_000 } });
  const batch = Array.from({ length: FAILED }, (_, i) => ({ id: `ship-${i}`, group: `batch:${i % 5}`, data: { fail: true, parcel: i } }));
  await expectJson(await worker.api(`/v1/queues/${orders}/jobs/batch`, { method: 'POST', json: { jobs: batch } }), 201);
  await expectJson(await worker.api(`/v1/queues/${orders}/repeats/hourly-report`, { method: 'PUT', json: { group: 'reports', every: 3_600_000 } }), 200);
  await waitForState(worker, orders, 'order-1', 'completed');
  const slow = await until(async () => endpoint.received.find((r) => r.job.id === 'export-9'), Boolean, 'the slow job to be delivered');
  // The endpoint reports progress on its lease, as groupq/receiver's job.progress() does.
  await expectJson(await worker.api(`/v1/queues/${orders}/jobs/export-9/progress`, { method: 'POST', json: { lease: slow!.job.lease.token, progress: { pct: 40 } } }), 200);
  await until(() => apiJson(`/v1/queues/${orders}`), (q) => q.counts.failed === FAILED, 'the failing jobs to fail');

  // Timers under the test's control: fastForward proves what a refresh (every 5 s) or an old
  // 5-second timeout does, without waiting for it.
  await page.clock.install();
  await signIn(page);
});

const signIn = (p: Page) => signedIn(p, worker.url, ADMIN_TOKEN);

/**
 * Each test of the shared page starts here: a fresh load of the orders queue's view, signed in, so
 * a test that failed half-way (on a job's view, with a question open) leaves nothing to the next.
 */
async function openOrders(): Promise<void> {
  await startAt(page, worker.url, ADMIN_TOKEN, `/queue/${orders}`);
  await page.locator('#queue-view h1', { hasText: orders }).waitFor();
}

const tab = (p: Page, state: string) => p.locator(`[role="tab"][data-state="${state}"]`).click();
const cell = (p: Page, id: string, label: string) => p.locator(`tr[data-job="${id}"] td[data-label="${label}"]`).innerText();

describe('jobs and their own view', () => {
  beforeEach(openOrders);

  it('completed jobs show their result; the id opens the job with its data, result, attempts and times', async () => {
    await tab(page, 'completed');
    await page.locator('tr[data-job="order-1"]').waitFor();
    expect(await cell(page, 'order-1', 'Result')).toBe('{"receipt":"r-order-1"}');

    await page.locator('tr[data-job="order-1"] a.job-link').click();
    expect(page.url()).toBe(`${worker.url}/dashboard#/queue/${orders}/job/order-1`);
    await page.locator('#queue-view h1', { hasText: 'order-1' }).waitFor();
    expect(await page.locator('[data-job-state]').textContent()).toBe('completed');
    expect(await page.locator('[data-field="Attempts"] dd').innerText()).toBe('1 / 1');
    // When it finished, as the clock and how long ago: "(now)" when the page renders within a
    // second of it, which a fast machine does.
    expect(await page.locator('[data-field="Finished"] dd').innerText()).toMatch(/\((now|\d+ (s|min|h) ago)\)$/);
    expect(JSON.parse(await page.locator('[data-part="job-data"] pre').innerText())).toEqual({ sku: 'A1', qty: 2 });
    expect(JSON.parse(await page.locator('[data-part="job-result"] pre').innerText())).toEqual({ receipt: 'r-order-1' });
    // History and the outcome callback show when the API has them for this job.
    const job = await apiJson(`/v1/queues/${orders}/jobs/order-1`);
    expect(await page.locator('[data-part="job-history"]').count()).toBe(job.history ? 1 : 0);
    expect(await page.locator('[data-part="job-callback"]').count()).toBe(job.callbackUrl || job.outcome ? 1 : 0);
    await screenshot(page, 'dashboard-job');
    await page.locator('a.back').click();
    await page.locator('#queue-view h1', { hasText: orders }).waitFor();
  });

  it('an active job shows its progress and when its lease expires, in the list and in its view', async () => {
    await tab(page, 'active');
    await page.locator('tr[data-job="export-9"]').waitFor();
    expect(await cell(page, 'export-9', 'Progress')).toBe('{"pct":40}');
    expect(await cell(page, 'export-9', 'Lease expires')).toMatch(/\(in \d+ min\)$/);
    await page.locator('tr[data-job="export-9"] a.job-link').click();
    await page.locator('[data-part="job-progress"]').waitFor();
    expect(JSON.parse(await page.locator('[data-part="job-progress"] pre').innerText())).toEqual({ pct: 40 });
    expect(await page.locator('[data-field="Lease expires"] dd').innerText()).toMatch(/\(in \d+ min\)$/);
    // An active job cannot be removed: its view offers no Remove.
    expect(await page.locator('button[data-action="remove"]').count()).toBe(0);
    await page.goBack();
  });

  it('finds a job by id (its view) and jobs by group (every tab narrows to that group)', async () => {
    await page.locator('#search-by').selectOption('id');
    await page.locator('#search-text').fill('ship-7');
    await page.locator('#search-text').press('Enter');
    await page.locator('#queue-view h1', { hasText: 'ship-7' }).waitFor();
    expect(await page.locator('[data-part="job-error"]').innerText()).toContain('HTTP 500: warehouse offline');
    await page.goBack();

    await page.locator('#search-by').selectOption('group');
    await page.locator('#search-text').fill('batch:2');
    await page.locator('.search-form button[type="submit"]').click();
    await page.locator('[data-filter-group="batch:2"]').waitFor();
    await tab(page, 'failed');
    await until(() => page.locator('#jobs-panel tr[data-job]').count(), (n) => n === FAILED / 5, 'the group\'s failed jobs');
    const groups = await page.locator('#jobs-panel td[data-label="Group"]').allInnerTexts();
    expect(new Set(groups)).toEqual(new Set(['batch:2']));
    // No bulk action on a filtered list: it would act on the whole queue.
    expect(await page.locator('button[data-action="retry-all"]').count()).toBe(0);
    await page.locator('button[data-action="clear-group"]').click();
    await until(() => page.locator('#jobs-panel tr[data-job]').count(), (n) => n === 25, 'a first page of every group');
  });
});

describe('bulk actions', () => {
  beforeEach(openOrders);

  it('Retry all failed asks first, keeps asking across refreshes, then retries all 30 and says so', async () => {
    failingSucceeds = true;
    await tab(page, 'failed');
    await page.locator('button[data-action="retry-all"]').click();
    const question = page.locator('[data-confirm="bulk:retry"]');
    await question.waitFor();
    expect(await question.innerText()).toContain(`Run all ${FAILED} failed jobs again?`);
    // The keyboard focus moved onto the confirm button.
    expect(await page.evaluate(`document.activeElement?.dataset.action`)).toBe('confirm-retry-all');
    await page.clock.fastForward(12_000); // two refreshes' worth: the question stays
    await refreshNow(page);
    await question.waitFor();
    expect((await apiJson(`/v1/queues/${orders}`)).counts.failed).toBe(FAILED);

    await page.locator('button[data-action="confirm-retry-all"]').click();
    await page.locator('#status', { hasText: `Retried ${FAILED} failed jobs.` }).waitFor();
    expect(await page.locator('[data-bulk-result="failed"]').innerText()).toBe(`Retried ${FAILED} failed jobs.`);
    await until(() => apiJson(`/v1/queues/${orders}`), (q) => q.counts.completed === FAILED + 1, 'the retried jobs to complete');
  });

  it('Clean completed deletes every completed job and shows the count', async () => {
    // As many as the API counts now, whatever the tests before this one completed.
    const completed = (await apiJson(`/v1/queues/${orders}`)).counts.completed;
    expect(completed).toBeGreaterThan(0);
    await tab(page, 'completed');
    await refreshNow(page);
    await page.locator('button[data-action="clean"]').click();
    await page.locator('[data-confirm="bulk:clean:completed"]', { hasText: `Delete all ${completed} completed jobs?` }).waitFor();
    await page.locator('button[data-action="confirm-clean"]').click();
    await page.locator('#status', { hasText: `Deleted ${completed} completed jobs.` }).waitFor();
    expect((await apiJson(`/v1/queues/${orders}`)).counts.completed).toBe(0);
    await page.locator('#jobs-panel .empty-row', { hasText: 'No completed jobs.' }).waitFor();
  });
});

describe('confirmations that stay until answered', () => {
  beforeEach(openOrders);

  it('Delete on a repeat asks; Cancel keeps it; asked again and confirmed, it is gone', async () => {
    const row = page.locator('tr[data-repeat="hourly-report"]');
    await row.locator('button[data-action="delete-repeat"]').click();
    await row.locator('[data-confirm]').waitFor();
    await page.clock.fastForward(12_000);
    await refreshNow(page);
    await row.locator('[data-confirm]').waitFor();
    await row.locator('button[data-action="cancel-confirm"]').click();
    await page.locator('#status', { hasText: 'Cancelled.' }).waitFor();
    expect(await page.evaluate(`document.activeElement?.dataset.action`)).toBe('delete-repeat');
    expect((await apiJson(`/v1/queues/${orders}/repeats`)).repeats).toHaveLength(1);

    await row.locator('button[data-action="delete-repeat"]').click();
    await row.locator('button[data-action="confirm-delete-repeat"]').click();
    await page.locator('#status', { hasText: 'Repeatable job hourly-report deleted.' }).waitFor();
    expect((await apiJson(`/v1/queues/${orders}/repeats`)).repeats).toEqual([]);
    await page.locator('tr[data-repeat]').waitFor({ state: 'detached' });
  });
});

describe('enqueue a test job', () => {
  beforeEach(openOrders);

  it('refuses data that is not JSON in place, then enqueues one that runs and completes', async () => {
    const before = (await apiJson(`/v1/queues/${orders}`)).counts;
    await page.locator('#enqueue-group').fill('smoke-test');
    await page.locator('#enqueue-data').fill('{"ping": tru');
    await page.locator('.enqueue-form button[type="submit"]').click();
    await page.locator('#enqueue-error', { hasText: 'Data is not JSON' }).waitFor();
    expect(await page.evaluate(`document.activeElement?.id`)).toBe('enqueue-data');
    expect((await apiJson(`/v1/queues/${orders}`)).counts).toEqual(before);

    await page.locator('#enqueue-data').fill('{"ping": true}');
    await page.locator('.enqueue-form button[type="submit"]').click();
    const link = page.locator('[data-job-link]');
    await link.waitFor();
    const id = (await link.getAttribute('data-job-link'))!;
    await page.locator('#status', { hasText: `Job ${id} enqueued` }).waitFor();
    await link.click();
    await page.locator('#queue-view h1', { hasText: id }).waitFor();
    await until(async () => (await refreshNow(page), page.locator('[data-job-state]').textContent()), (s) => s === 'completed', 'the test job to complete');
    expect(JSON.parse(await page.locator('[data-part="job-data"] pre').innerText())).toEqual({ ping: true });
    expect(JSON.parse(await page.locator('[data-part="job-result"] pre').innerText())).toEqual({ receipt: `r-${id}` });
    await page.locator('a.back').click();
  });
});

describe('deleted queues and jobs', () => {
  // A deleted queue's and an unknown job's reads answer 404; Chromium logs each one.
  const EXPECTED_404 = /Failed to load resource: the server responded with a status of 404/;
  let other: BrowserContext;
  let seen404: Watch;
  let tabOn: Page;
  /** Requests of tabOn not answered yet: the clock must not jump past their 30 s timeout. */
  let inFlight: () => number;
  const answered = () => until(async () => inFlight(), (n) => n === 0, 'the requests in flight to end');

  beforeAll(async () => {
    other = await suite.browser.newContext({ viewport: { width: 1280, height: 900 } });
    seen404 = watch(other, [worker.url], [EXPECTED_404]);
    tabOn = await other.newPage();
    inFlight = requestsInFlight(tabOn);
    await tabOn.clock.install();
    await signIn(tabOn);
  });
  afterAll(() => other?.close());

  /** Requests the tab makes to a queue's routes. */
  function countRequests(p: Page, queue: string): { n: number } {
    const counter = { n: 0 };
    p.on('request', (request) => {
      if (new URL(request.url()).pathname.startsWith(`/v1/queues/${queue}`)) counter.n++;
    });
    return counter;
  }

  it('a tab open on a queue deleted elsewhere says so and stops polling it', async () => {
    await putQueue(worker, 'scratch', { endpoint: endpoint.url });
    await tabOn.goto(`${worker.url}/dashboard#/queue/scratch`);
    await tabOn.locator('#queue-view [data-count="waiting"]').waitFor();
    expect((await worker.api('/v1/queues/scratch', { method: 'DELETE' })).status).toBe(204);

    await tabOn.clock.fastForward(30_000); // the next refresh finds it gone (a live view's comes after 30 s)
    await tabOn.locator('[data-gone="queue"]', { hasText: 'does not exist' }).waitFor();
    await answered();
    const requests = countRequests(tabOn, 'scratch');
    await tabOn.clock.fastForward(60_000); // twelve refreshes' worth
    await refreshNow(tabOn);
    expect(requests.n).toBe(0);
  });

  it('Delete queue asks, keeps asking across refreshes, then deletes the queue and goes to the list', async () => {
    await putQueue(worker, 'doomed', { endpoint: endpoint.url });
    await enqueue(worker, 'doomed', { group: 'g', data: 1, delayMs: 3_600_000 });
    await tabOn.goto(`${worker.url}/dashboard#/queue/doomed`);
    await tabOn.locator('button[data-action="delete-queue"]').click();
    const question = tabOn.locator('[data-confirm="queue:delete"]');
    await question.waitFor();
    expect(await question.innerText()).toContain('Delete queue doomed with all its jobs');
    await tabOn.clock.fastForward(12_000);
    await refreshNow(tabOn);
    await question.waitFor();
    expect((await worker.api('/v1/queues/doomed')).status).toBe(200);

    await tabOn.locator('button[data-action="confirm-delete-queue"]').click();
    await tabOn.locator('#status', { hasText: 'Queue doomed deleted.' }).waitFor();
    await tabOn.locator('#queues-view h1').waitFor();
    expect(tabOn.url()).toBe(`${worker.url}/dashboard#/`);
    expect((await worker.api('/v1/queues/doomed')).status).toBe(404);
    expect(await tabOn.locator('article[data-queue="doomed"]').count()).toBe(0);
  });

  it('an unknown job id says so and stops polling', async () => {
    await tabOn.goto(`${worker.url}/dashboard#/queue/${orders}/job/no-such-job`);
    await tabOn.locator('[data-gone="JOB_NOT_FOUND"]').waitFor();
    await answered();
    const requests = countRequests(tabOn, orders);
    await tabOn.clock.fastForward(30_000);
    expect(requests.n).toBe(0);
  });

  it('no console error but the expected 404s, and no request to another origin', () => {
    expect(seen404.problems).toEqual([]);
    expect(seen404.foreign).toEqual([]);
  });
});

it('no console errors, page errors or failed requests, and no request to another origin', () => {
  expect(seen.problems).toEqual([]);
  expect(seen.foreign).toEqual([]);
});
