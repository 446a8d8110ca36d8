// The dashboard's first view as an operator's overview, in real Chromium against the real
// Worker, Redis and endpoint: every queue in one table with its backlog (waiting, delayed,
// active), how long its oldest ready job has waited (a queue whose one slot is held by its
// endpoint, a paused queue; not a job behind its group's running job), its failures after jobs
// that failed, worst first or in the order chosen, each row leading to the queue's view; it
// refreshes on its own (a job enqueued after the page loaded shows up, no reload), stops while
// the tab is hidden or another view is open, and fits a 375 px phone.
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { BrowserContext, Page } from 'playwright-core';
import type { Endpoint, Reply } from '../helpers/endpoint';
import { ADMIN_TOKEN, type RunningWorker } from '../helpers/worker';
import { enqueue, expectJson, putQueue, waitForState } from '../http/support';
import { type Watch, refreshNow, requestsInFlight, screenshot, signedIn, startAt, until } from './browser';
import { useDashboardSuite } from './suite';

// orders: one slot (concurrency 1), held by an async job (202), so other customers' jobs wait
// for the queue; emails: paused, its jobs enqueued with an orderMs six minutes ago; billing: its
// endpoint refuses every job for good; webhooks: nothing.
const orders = 'orders';
const emails = 'emails';
const billing = 'billing';
const webhooks = 'webhooks';
const SIX_MIN = 6 * 60_000;
const FAILING = 3;

const suite = useDashboardSuite({
  endpoints: {
    endpoint: (r): Reply => {
      const data = (r.job.data ?? {}) as { hold?: boolean; fail?: boolean };
      if (data.hold) return { status: 202 }; // async: the job stays active until a callback
      if (data.fail) return { status: 500, headers: { 'groupq-retry': 'false' }, body: 'card declined' };
      return { status: 200 };
    },
  },
});
const { apiJson } = suite;
/** This file's share of the suite, taken from it first thing in beforeAll. */
let worker: RunningWorker, endpoint: Endpoint, context: BrowserContext, page: Page, seen: Watch;

beforeAll(async () => {
  ({ worker, endpoints: { endpoint }, context, page, seen } = suite);
  await putQueue(worker, orders, { endpoint: endpoint.url, concurrency: 1, timeoutMs: 600_000 });
  await enqueue(worker, orders, { id: 'order-1', group: 'customer:1', data: { hold: true } });
  await until(async () => endpoint.received.some((r) => r.job.id === 'order-1'), Boolean, 'the held order to be delivered');
  for (const [id, group] of [['order-2', 'customer:2'], ['order-3', 'customer:3'], ['order-4', 'customer:1']] as const) {
    await enqueue(worker, orders, { id, group, data: { sku: id } });
  }

  await putQueue(worker, emails, { endpoint: endpoint.url });
  await expectJson(await worker.api(`/v1/queues/${emails}/pause`, { method: 'POST' }), 200);
  const longAgo = Date.now() - SIX_MIN;
  await enqueue(worker, emails, { id: 'welcome-1', group: 'user:1', data: { template: 'welcome' }, orderMs: longAgo });
  await enqueue(worker, emails, { id: 'welcome-2', group: 'user:2', data: { template: 'welcome' }, orderMs: longAgo + 1000 });
  await enqueue(worker, emails, { id: 'digest-1', group: 'user:1', data: { template: 'digest' }, delayMs: 3_600_000 });

  await putQueue(worker, billing, { endpoint: endpoint.url, keepFailed: 100 });
  for (let i = 1; i <= FAILING; i++) await enqueue(worker, billing, { id: `charge-${i}`, group: `card:${i}`, data: { fail: true } });
  for (let i = 1; i <= FAILING; i++) await waitForState(worker, billing, `charge-${i}`, 'failed');

  await putQueue(worker, webhooks, { endpoint: endpoint.url });

  await signedIn(page, worker.url, ADMIN_TOKEN);
});

const row = (p: Page, queue: string) => p.locator(`[data-overview="queues"] tr[data-queue="${queue}"]`);
const cellOf = (p: Page, queue: string, cell: string) => row(p, queue).locator(`td[data-cell="${cell}"]`);
const valueOf = async (p: Page, queue: string, cell: string) => cellOf(p, queue, cell).getAttribute('data-value');
const listedOrder = (p: Page) => p.locator('[data-overview="queues"] tbody tr').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-queue')));

describe('the overview of every queue', () => {
  // Each test on the shared page starts from a fresh load of the list (the default order, no view
  // a test before it opened), signed in.
  beforeEach(async () => {
    await startAt(page, worker.url, ADMIN_TOKEN, '/');
    await row(page, webhooks).waitFor();
  });

  it('lists every queue with its backlog, as the API counts it', async () => {
    await refreshNow(page);
    const { queues } = await apiJson('/v1/queues');
    expect(queues.map((q: { name: string }) => q.name).sort()).toEqual([billing, emails, orders, webhooks]);
    expect((await listedOrder(page)).sort()).toEqual([billing, emails, orders, webhooks]);
    for (const { name, counts } of queues) {
      expect(await valueOf(page, name, 'backlog'), name).toBe(String(counts.waiting + counts.delayed + counts.active));
      expect(await cellOf(page, name, 'backlog').innerText()).toContain(`${counts.waiting} waiting · ${counts.delayed} delayed · ${counts.active} active`);
    }
    expect(await valueOf(page, orders, 'backlog')).toBe('4'); // 3 waiting, 1 active
    expect(await valueOf(page, emails, 'backlog')).toBe('3'); // 2 waiting, 1 delayed
    expect(await valueOf(page, webhooks, 'backlog')).toBe('0');
    expect(await row(page, emails).locator('.badge-paused').count()).toBe(1);
  });

  it("shows how long each queue's oldest ready job has waited, linking to that job", async () => {
    // emails: paused, its oldest job's orderMs six minutes ago.
    const emailsWait = Number(await valueOf(page, emails, 'oldest'));
    expect(emailsWait).toBeGreaterThanOrEqual(SIX_MIN);
    expect(emailsWait).toBeLessThan(SIX_MIN + 5 * 60_000);
    expect(await cellOf(page, emails, 'oldest').locator('a').innerText()).toMatch(/^\d+ min( \d+ s)?$/);
    expect(await cellOf(page, emails, 'oldest').locator('a').getAttribute('href')).toBe(`#/queue/${emails}/job/welcome-1`);
    // orders: its slot is held by order-1, so order-2 waits for the queue; order-4 (customer:1)
    // waits behind its own group's running job, and is not the figure.
    expect(await cellOf(page, orders, 'oldest').locator('a').getAttribute('href')).toBe(`#/queue/${orders}/job/order-2`);
    expect((await apiJson(`/v1/queues/${orders}`)).oldestReady.id).toBe('order-2');
    for (const name of [billing, webhooks]) {
      expect(await valueOf(page, name, 'oldest'), name).toBe('');
      expect(await cellOf(page, name, 'oldest').innerText()).toBe('none ready');
    }
    // The link opens the job.
    await cellOf(page, emails, 'oldest').locator('a').click();
    await page.locator('#queue-view h1', { hasText: 'welcome-1' }).waitFor();
    await page.goBack();
    await row(page, emails).waitFor();
  });

  it('counts the jobs that failed, in the last hour and the last minutes', async () => {
    expect((await apiJson(`/v1/queues/${billing}`)).counts.failed).toBe(FAILING);
    expect(await valueOf(page, billing, 'failures')).toBe(String(FAILING));
    const text = await cellOf(page, billing, 'failures').innerText();
    expect(text).toContain(`${FAILING} in 5 min`);
    expect(await cellOf(page, billing, 'failures').getAttribute('class')).toContain('failing');
    for (const name of [orders, emails, webhooks]) expect(await valueOf(page, name, 'failures'), name).toBe('0');
    // Rates come from the same per-minute metrics: a number for every queue.
    for (const name of [orders, emails, billing, webhooks]) expect(Number(await valueOf(page, name, 'rate')), name).toBeGreaterThanOrEqual(0);
    expect(await page.locator('[data-overview="summary"]').innerText()).toContain(`${FAILING} failed in the last hour`);
  });

  it('lists the worst first (longest wait, then backlog, then failures), or in the order chosen, kept across refreshes', async () => {
    expect(await listedOrder(page)).toEqual([emails, orders, billing, webhooks]);
    await page.locator('#overview-order').selectOption('name');
    expect(await listedOrder(page)).toEqual([billing, emails, orders, webhooks]);
    await refreshNow(page);
    expect(await listedOrder(page)).toEqual([billing, emails, orders, webhooks]);
    await page.locator('#overview-order').selectOption('failures');
    expect((await listedOrder(page))[0]).toBe(billing);
    await page.locator('#overview-order').selectOption('backlog');
    expect(await listedOrder(page)).toEqual([orders, emails, billing, webhooks]);
    await page.locator('#overview-order').selectOption('waited');
  });

  it('refreshes on its own: a job enqueued after the page loaded shows up without a reload', async () => {
    await page.evaluate('window.loadedOnce = true');
    expect(await valueOf(page, emails, 'backlog')).toBe('3');
    await enqueue(worker, emails, { id: 'welcome-3', group: 'user:3', data: { template: 'welcome' } });
    // The timed refresh (every 5 s) redraws the row: wait for it, with no click and no reload.
    await cellOf(page, emails, 'backlog').and(page.locator('[data-value="4"]')).waitFor({ timeout: 15_000 });
    expect(await page.evaluate('window.loadedOnce')).toBe(true);
    await page.evaluate(`document.getElementById('status').textContent = ''; delete document.getElementById('status').dataset.kind`);
    await screenshot(page, 'dashboard-overview', { fullPage: false });
  });

  it("each queue's name opens its own view", async () => {
    await row(page, orders).locator('td[data-cell="queue"] a').click();
    await page.locator('#queue-view h1', { hasText: orders }).waitFor();
    expect(page.url()).toBe(`${worker.url}/dashboard#/queue/${orders}`);
    await page.locator('a.back').click();
    await row(page, orders).waitFor();
  });

  it('stops reading the list while the tab is hidden, or while another view is open', async () => {
    const tab = await context.newPage();
    let listReads = 0;
    // Requests not answered yet: the clock must not jump past their timeout (an abort).
    const inFlight = requestsInFlight(tab);
    tab.on('request', (request) => {
      if (new URL(request.url()).pathname === '/v1/queues') listReads++;
    });
    const answered = () => until(async () => inFlight(), (n) => n === 0, 'the requests in flight to end');
    const updated = () => tab.locator('#updated').innerText();
    const setVisibility = (state: string) =>
      tab.evaluate(`Object.defineProperty(document, 'visibilityState', { configurable: true, get: () => '${state}' }); document.dispatchEvent(new Event('visibilitychange'))`);
    // A request of the page's own after the timers ran: Chromium reports requests in the order
    // they were made, so once this one is seen, a read the timers made would have been too.
    const barrier = async () => {
      const seenIt = tab.waitForRequest((request) => new URL(request.url()).pathname === '/dashboard/app.css');
      await tab.evaluate(`fetch('/dashboard/app.css', { cache: 'no-store' }).then((r) => r.text())`);
      await seenIt;
    };
    await tab.clock.install();
    await signedIn(tab, worker.url, ADMIN_TOKEN);
    await row(tab, emails).waitFor();
    await tab.clock.pauseAt(Date.now() + 1000);
    // Visible: the 5 s timer reads the list, and the page says when.
    let before = listReads;
    const shown = await updated();
    await tab.clock.fastForward(5_000);
    await until(updated, (text) => text !== shown, 'the timed refresh of the list');
    expect(listReads).toBe(before + 1);

    // Hidden: a minute of timers reads nothing; Refresh (the user asks) still does.
    await setVisibility('hidden');
    before = listReads;
    await tab.clock.fastForward(60_000);
    await barrier();
    expect(listReads).toBe(before);
    await refreshNow(tab);
    expect(listReads).toBe(before + 1);
    // Visible again: it reads at once.
    await setVisibility('visible');
    await until(async () => listReads, (n) => n === before + 2, 'the refresh on becoming visible');

    // Another view open: its own reads, not the list's.
    await row(tab, orders).locator('td[data-cell="queue"] a').click();
    await tab.locator('#queue-view [data-count="waiting"]').waitFor();
    await answered();
    before = listReads;
    await tab.clock.fastForward(30_000);
    await barrier();
    await refreshNow(tab);
    expect(listReads).toBe(before);
    await tab.close();
  });

  it('375 px wide: rows stack, nothing scrolls sideways', async () => {
    const phone = await context.newPage();
    await phone.setViewportSize({ width: 375, height: 800 });
    await signedIn(phone, worker.url, ADMIN_TOKEN);
    await row(phone, emails).waitFor();
    expect(await phone.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(375);
    // Each stacked cell says what it is (the column's name, from data-label).
    const label = await phone.evaluate(
      `getComputedStyle(document.querySelector('[data-overview="queues"] tr[data-queue="${emails}"] td[data-cell="oldest"]'), '::before').content`,
    );
    expect(label).toBe('"Oldest waiting"');
    await screenshot(phone, 'dashboard-overview-mobile', { fullPage: false });
    await phone.close();
  });

  it('no console errors, page errors or failed requests, and no request to another origin', () => {
    expect(seen.problems).toEqual([]);
    expect(seen.foreign).toEqual([]);
  });
});
