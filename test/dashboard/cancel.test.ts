// Cancelling jobs and reading how they ended, in real Chromium against the real Worker, Redis
// and endpoint, driven as a user does: Cancel on a waiting job in the jobs table (asked first, the
// question kept across a refresh and closed with "Keep job"), the Cancelled tab and count; Cancel
// on an active job (an async 202 lease) from its own view, after which its group's next job runs;
// a job's attempt history (a 500, then a 200 on the retry); the outcome callback of a completed job
// delivered to a real callback server; and Clean cancelled with its count.
import { beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import type { Endpoint, Reply } from '../helpers/endpoint';
import { ADMIN_TOKEN, type RunningWorker } from '../helpers/worker';
import { enqueue, expectJson, putQueue, waitForState } from '../http/support';
import { type Watch, openQueueAt, refreshNow, screenshot, signedIn, until } from './browser';
import { useDashboardSuite } from './suite';

const suite = useDashboardSuite({
  endpoints: {
    endpoint: (r): Reply => {
      const { mode } = (r.job.data ?? {}) as { mode?: string };
      if (mode === 'async') return { status: 202 };
      if (mode === 'flaky' && r.job.attempt === 1) return { status: 500, body: 'gateway timeout upstream' };
      return { status: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ receipt: `r-${r.job.id}` }) };
    },
    callbacks: () => ({ status: 204 }),
  },
});
const { apiJson } = suite;
/** This file's share of the suite, taken from it first thing in beforeAll. */
let worker: RunningWorker, endpoint: Endpoint, callbacks: Endpoint, page: Page, seen: Watch;

// One group of exports: the first is held by its endpoint (202, finished later by callback), so
// the next two wait behind it.
const exportsQueue = 'exports';
const payments = 'payments';
const invoices = 'invoices';

beforeAll(async () => {
  ({ worker, endpoints: { endpoint, callbacks }, page, seen } = suite);
  await putQueue(worker, exportsQueue, { endpoint: endpoint.url, keepCompleted: 100, timeoutMs: 600_000 });
  await expectJson(
    await worker.api(`/v1/queues/${exportsQueue}/jobs/batch`, {
      method: 'POST',
      json: { jobs: ['export-1', 'export-2', 'export-3'].map((id, i) => ({ id, group: 'customer:7', data: i === 0 ? { mode: 'async', rows: 120_000 } : { rows: i } })) },
    }),
    201,
  );
  await putQueue(worker, payments, { endpoint: endpoint.url, keepCompleted: 100, maxAttempts: 3, backoff: { type: 'fixed', delayMs: 100, jitter: false } });
  await enqueue(worker, payments, { id: 'charge-1', group: 'card:4242', data: { mode: 'flaky', amount: 19.9 } });
  await putQueue(worker, invoices, { endpoint: endpoint.url, keepCompleted: 100, callbackUrl: callbacks.url });
  await enqueue(worker, invoices, { id: 'invoice-1', group: 'customer:7', data: { total: 42 } });

  await until(async () => endpoint.received.some((r) => r.job.id === 'export-1'), Boolean, 'the async export to be delivered');
  // The retry is due 100 ms after the 500: the cron (fired here) delivers it if no drain has.
  await until(async () => (await worker.scheduled(), (await apiJson(`/v1/queues/${payments}/jobs/charge-1`)).state), (s) => s === 'completed', 'the retried charge to complete');
  await until(() => apiJson(`/v1/queues/${invoices}/jobs/invoice-1`), (j) => j.outcome?.state === 'delivered', 'the invoice outcome to be delivered');

  await signedIn(page, worker.url, ADMIN_TOKEN);
});

const openQueue = (name: string) => openQueueAt(page, worker.url, name);

const tab = (state: string) => page.locator(`[role="tab"][data-state="${state}"]`);
const countOf = (state: string) => page.locator(`#queue-view [data-count="${state}"] dd`).innerText();
const row = (id: string) => page.locator(`#jobs-panel tr[data-job="${id}"]`);
const said = (text: string) => page.locator('#status', { hasText: text }).waitFor();

describe('cancel', () => {
  it('Cancel on a waiting job asks (the question stays across a refresh; Keep job keeps it), then the job is in the Cancelled tab and counted', async () => {
    await openQueue(exportsQueue);
    await row('export-2').waitFor();
    expect(await countOf('cancelled')).toBe('0');
    expect(await tab('cancelled').locator('.tab-count').innerText()).toBe('0');

    await row('export-2').locator('button[data-action="cancel"]').click();
    const question = page.locator('[data-confirm="cancel:export-2"]');
    expect(await question.innerText()).toContain('Cancel job export-2? It will not run.');
    // "Keep job" closes the question; a second "Cancel" button would read as going ahead.
    await question.locator('button[data-action="cancel-confirm"]', { hasText: 'Keep job' }).click();
    await said('Job export-2 kept.');
    expect(await page.evaluate(`document.activeElement?.dataset.focusKey`)).toBe('cancel:export-2');
    expect((await apiJson(`/v1/queues/${exportsQueue}/jobs/export-2`)).state).toBe('waiting');

    await row('export-2').locator('button[data-action="cancel"]').click();
    await refreshNow(page);
    await question.waitFor();
    expect((await apiJson(`/v1/queues/${exportsQueue}/jobs/export-2`)).state).toBe('waiting');
    await question.locator('button[data-action="confirm-cancel"]').click();
    await said('Job export-2 cancelled.');
    await row('export-2').waitFor({ state: 'detached' });
    expect(await row('export-3').count()).toBe(1);
    expect(await countOf('cancelled')).toBe('1');
    expect(await tab('cancelled').locator('.tab-count').innerText()).toBe('1');

    await tab('cancelled').click();
    await row('export-2').waitFor();
    expect(await row('export-2').locator('td[data-label="Finished"]').innerText()).toMatch(/ago\)$|\(now\)$/);
    // A finished job can no longer be cancelled.
    expect(await row('export-2').locator('button[data-action="cancel"]').count()).toBe(0);
    expect(await apiJson(`/v1/queues/${exportsQueue}/jobs/export-2`)).toMatchObject({ state: 'cancelled', attempts: 0 });
  });

  it("Cancel on an active job from its own view: the lease is revoked and the group's next job runs", async () => {
    await openQueue(exportsQueue);
    await tab('active').click();
    await row('export-1').locator('a.job-link').click();
    await page.locator('#queue-view h1', { hasText: 'export-1' }).waitFor();
    expect(await page.locator('[data-job-state]').textContent()).toBe('active');
    expect(await page.locator('button[data-action="remove"]').count()).toBe(0);

    await page.locator('button[data-action="cancel"]').click();
    const question = page.locator('[data-confirm="cancel"]');
    expect(await question.innerText()).toContain('Cancel job export-1? It will not run again; its endpoint learns of it at its next callback.');
    await question.locator('button[data-action="confirm-cancel"]').click();
    await said('Job export-1 cancelled.');
    await page.locator('[data-job-state]', { hasText: 'cancelled' }).waitFor();
    // Finished: no Cancel any more, Remove instead; the running attempt counts, and is in the history.
    expect(await page.locator('button[data-action="cancel"]').count()).toBe(0);
    expect(await page.locator('button[data-action="remove"]').count()).toBe(1);
    expect(await page.locator('[data-part="job-history"] tr[data-attempt="1"] td[data-label="Outcome"]').textContent()).toBe('cancelled');

    expect(await apiJson(`/v1/queues/${exportsQueue}/jobs/export-1`)).toMatchObject({ state: 'cancelled', attempts: 1 });
    const next = await waitForState(worker, exportsQueue, 'export-3', 'completed');
    expect(next.result).toEqual({ receipt: 'r-export-3' });
  });
});

describe("a job's records", () => {
  it('a job that failed once then succeeded shows both attempts, with the 500 and its error', async () => {
    await openQueue(payments);
    await page.locator('#search-by').selectOption('id');
    await page.locator('#search-text').fill('charge-1');
    await page.locator('#search-text').press('Enter');
    await page.locator('#queue-view h1', { hasText: 'charge-1' }).waitFor();
    expect(await page.locator('[data-job-state]').textContent()).toBe('completed');
    expect(await page.locator('.fields [data-field="Attempts"] dd').first().innerText()).toBe('2 / 3');

    const history = page.locator('[data-part="job-history"]');
    await history.waitFor();
    // textContent: badges are capitalized by CSS only.
    const cells = (attempt: number) => history.locator(`tr[data-attempt="${attempt}"] td`).allTextContents();
    expect(await history.locator('tr[data-attempt]').count()).toBe(2);
    const [first, second] = [await cells(1), await cells(2)];
    expect([first[0], first[3], first[4], first[5]]).toEqual(['1', 'failed', '500', 'HTTP 500: gateway timeout upstream']);
    expect([second[0], second[3], second[4], second[5]]).toEqual(['2', 'completed', '200', '—']);
    await screenshot(page, 'dashboard-job-history');
  });

  it("a completed job of a queue with a callbackUrl shows the URL and that its outcome was delivered", async () => {
    await openQueue(invoices);
    await tab('completed').click();
    await row('invoice-1').locator('a.job-link').click();
    await page.locator('#queue-view h1', { hasText: 'invoice-1' }).waitFor();
    const callback = page.locator('[data-part="job-callback"]');
    await callback.waitFor();
    expect(await callback.locator('[data-field="URL"] dd').innerText()).toBe(callbacks.url);
    expect(await callback.locator('[data-field="Delivery"] dd').textContent()).toBe('delivered');
    expect(await callback.locator('[data-field="Attempts"] dd').innerText()).toBe('1');
    expect(await callback.locator('[data-field="Delivered"] dd').innerText()).toMatch(/ago\)$|\(now\)$/);
    // What the callback server got is what the view says was delivered.
    const outcomes = callbacks.received.filter((r) => JSON.parse(r.rawBody).id === 'invoice-1');
    expect(outcomes.map((r) => r.headers['groupq-outcome'])).toEqual(['completed']);
  });
});

describe('bulk', () => {
  it('Clean cancelled on the Cancelled tab asks, deletes every cancelled job and shows the count', async () => {
    // A cancelled job of its own, beside those the tests before this one cancelled (if they ran).
    await enqueue(worker, exportsQueue, { id: 'export-9', group: 'customer:9', data: { rows: 9 }, delayMs: 3_600_000 });
    await expectJson(await worker.api(`/v1/queues/${exportsQueue}/jobs/export-9/cancel`, { method: 'POST' }), 200);
    const cancelled = (await apiJson(`/v1/queues/${exportsQueue}`)).counts.cancelled;
    const jobs = cancelled === 1 ? 'job' : 'jobs';
    await openQueue(exportsQueue);
    await tab('cancelled').click();
    await row('export-9').waitFor();
    await page.locator('button[data-action="clean"]').click();
    await page.locator('[data-confirm="bulk:clean:cancelled"]', { hasText: `Delete all ${cancelled} cancelled ${jobs}?` }).waitFor();
    await page.locator('button[data-action="confirm-clean"]').click();
    await said(`Deleted ${cancelled} cancelled ${jobs}.`);
    expect(await page.locator('[data-bulk-result="cancelled"]').innerText()).toBe(`Deleted ${cancelled} cancelled ${jobs}.`);
    await page.locator('#jobs-panel .empty-row', { hasText: 'No cancelled jobs.' }).waitFor();
    expect(await countOf('cancelled')).toBe('0');
    expect((await apiJson(`/v1/queues/${exportsQueue}`)).counts.cancelled).toBe(0);
  });
});

it('no console errors, page errors or failed requests, and no request to another origin', () => {
  expect(seen.problems).toEqual([]);
  expect(seen.foreign).toEqual([]);
});
