// The dashboard at /dashboard, in real Chromium against the real Worker (workerd), a real Redis
// and a real endpoint: how it is served (open, strict CSP, ETag), sign-in (token kept in
// sessionStorage only; a wrong token, and a token refused later, send you to the form with a
// message), the queue list matching the API's counts, a failed job with its error and the Retry
// button delivering it again, pause/resume through the button, the chart matching the metrics
// route, 375 px without horizontal scroll, and no console error or request to another origin.
import { beforeAll, describe, expect, it } from 'vitest';
import type { BrowserContext, Page } from 'playwright-core';
import type { Endpoint, Reply } from '../helpers/endpoint';
import { ADMIN_TOKEN, type RunningWorker } from '../helpers/worker';
import { enqueue, expectJson, putQueue, waitForState } from '../http/support';
import { TOKEN_KEY, type Watch, refreshNow, screenshot, signInAt, startAt, until } from './browser';
import { useDashboardSuite } from './suite';

// Plain names: the stack is this file's own (and they read well in docs/dashboard.png).
const shop = 'shop';
const reports = 'reports';
const FAILING = 'charge-7';
/** Job data a browser must show as text: the page never parses data as HTML. */
const MARKUP = '<img src=x onerror=document.body.dataset.pwned=1>';
let failingSucceeds = false;

// Chromium logs each 4xx answer to fetch as a console error; only the 401 scenarios cause them.
const EXPECTED_401 = /Failed to load resource: the server responded with a status of 401/;

const suite = useDashboardSuite({
  endpoints: {
    endpoint: (r): Reply => {
      const data = r.job.data as { fail?: boolean } | null;
      if (data?.fail && !failingSucceeds) return { status: 500, headers: { 'groupq-retry': 'false' }, body: 'card declined' };
      return { status: 200, headers: { 'content-type': 'application/json' }, body: '{"ok":true}' };
    },
  },
  expectedConsole: [EXPECTED_401],
});
const { apiJson } = suite;
/** This file's share of the suite, taken from it first thing in beforeAll. */
let worker: RunningWorker, endpoint: Endpoint, context: BrowserContext, page: Page, seen: Watch;

beforeAll(async () => {
  ({ worker, endpoints: { endpoint }, context, page, seen } = suite);
  await putQueue(worker, shop, { endpoint: endpoint.url, keepCompleted: 100 });
  // A paused group keeps its jobs waiting; a delayed job waits an hour; a repeat runs hourly.
  await expectJson(await worker.api(`/v1/queues/${shop}/groups/tenant:slow/pause`, { method: 'POST' }), 200);
  for (const order of ['1001', '1002']) await enqueue(worker, shop, { group: `order:${order}`, data: { order, total: 42.5 } });
  await enqueue(worker, shop, { id: 'order-1003', group: 'order:1003', data: { order: '1003', note: MARKUP } });
  await enqueue(worker, shop, { id: FAILING, group: 'order:1004', data: { fail: true, card: 'visa-4242', total: 19.9 } });
  await enqueue(worker, shop, { group: 'tenant:slow', data: { report: 'monthly' } });
  await enqueue(worker, shop, { group: 'tenant:slow', data: { report: 'weekly' } });
  await enqueue(worker, shop, { id: 'reminder-42', group: 'reminder:42', data: { remind: 'renewal' }, delayMs: 3_600_000 });
  await expectJson(await worker.api(`/v1/queues/${shop}/repeats/nightly-digest`, { method: 'PUT', json: { group: 'digest', every: 3_600_000 } }), 200);
  await putQueue(worker, reports, { endpoint: 'http://127.0.0.1:9/jobs' });
  await expectJson(await worker.api(`/v1/queues/${reports}/pause`, { method: 'POST' }), 200);
  await enqueue(worker, reports, { group: 'team:a', data: { rows: 10 } });

  await waitForState(worker, shop, FAILING, 'failed');
  await until(() => apiJson(`/v1/queues/${shop}`), (q) => q.counts.completed === 3 && q.counts.active === 0, 'the three good jobs to complete');
});

const text = (page: Page, selector: string) => page.locator(selector).first().innerText();

/** Opens the dashboard and signs in from the keyboard. */
const signIn = (page: Page, token = ADMIN_TOKEN) => signInAt(page, worker.url, token);

/** Where a test on the shared page starts, signed in, whatever the test before it left. */
const start = (hash = '/') => startAt(page, worker.url, ADMIN_TOKEN, hash);
/** The shop queue's view, freshly loaded. */
async function openShop(): Promise<void> {
  await start(`/queue/${shop}`);
  await page.locator('#queue-view h1', { hasText: shop }).waitFor();
}

describe('served by the Worker', () => {
  it('GET /dashboard, /dashboard/, app.js and app.css: open, strict CSP, nosniff, no referrer, ETag', async () => {
    for (const [path, type] of [
      ['/dashboard', 'text/html'],
      ['/dashboard/', 'text/html'],
      ['/dashboard/app.js', 'text/javascript'],
      ['/dashboard/app.css', 'text/css'],
    ] as const) {
      const res = await fetch(`${worker.url}${path}`);
      expect(res.status, path).toBe(200);
      expect(res.headers.get('content-type')).toContain(type);
      expect(res.headers.get('content-security-policy')).toBe(
        "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
      );
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      expect(res.headers.get('referrer-policy')).toBe('no-referrer');
      expect(res.headers.get('cache-control')).toBe('no-cache');
      const etag = res.headers.get('etag');
      expect(etag).toMatch(/^"[0-9a-f]{32}"$/);
      expect((await res.text()).length).toBeGreaterThan(100);
      // Revalidation: the same ETag (also weak, also in a list) is a 304 without a body.
      const again = await fetch(`${worker.url}${path}`, { headers: { 'if-none-match': `"other", W/${etag}` } });
      expect(again.status).toBe(304);
      expect(await again.text()).toBe('');
    }
    const html = await (await fetch(`${worker.url}/dashboard`)).text();
    // No inline script or style (the CSP would block them), nothing from another origin.
    expect(html).not.toMatch(/<script>|<style|style=|https?:\/\//);
    // The API reference opens in a new tab that gets no handle on this one (window.opener),
    // whose session storage holds the admin token; nor does the script add a link to it.
    const links = html.match(/<a\b[^>]*href="\/reference"[^>]*>/g) ?? [];
    expect(links).toHaveLength(1);
    for (const link of links) {
      expect(link).toContain('target="_blank"');
      expect(link).toContain('rel="noopener noreferrer"');
    }
    expect(await (await fetch(`${worker.url}/dashboard/app.js`)).text()).not.toContain('/reference');
  });
});

describe('in Chromium', () => {
  it('a wrong token shows an error and keeps nothing', async () => {
    await signIn(page, 'not-the-admin-token-000');
    await page.locator('#sign-in-error', { hasText: 'Wrong token' }).waitFor();
    expect(await page.evaluate(`sessionStorage.getItem('${TOKEN_KEY}')`)).toBeNull();
    expect(await page.locator('#sign-in-view').isVisible()).toBe(true);
    expect(await page.locator('#session-bar').isVisible()).toBe(false);
  });

  it('signs in with the admin token (kept in sessionStorage, not in the URL) and lists the queues with the counts the API reports', async () => {
    await signIn(page);
    await page.locator(`article[data-queue="${shop}"]`).waitFor();
    // The form went away with the focus in it: focus moves to the list's heading, not to nowhere.
    await page.locator('#queues-heading:focus').waitFor({ timeout: 5000 });
    expect(await page.evaluate(`sessionStorage.getItem('${TOKEN_KEY}')`)).toBe(ADMIN_TOKEN);
    expect(await page.evaluate('localStorage.length')).toBe(0);
    expect(page.url()).not.toContain(ADMIN_TOKEN);

    const { queues } = await apiJson('/v1/queues');
    expect(queues.map((q: { name: string }) => q.name).sort()).toEqual([reports, shop].sort());
    await refreshNow(page);
    for (const queue of queues) {
      const card = `article[data-queue="${queue.name}"]`;
      for (const [name, value] of Object.entries(queue.counts)) {
        expect(await text(page, `${card} [data-count="${name}"] dd`), `${queue.name} ${name}`).toBe(String(value));
      }
      expect(await page.locator(`${card} .badge-paused`).count()).toBe(queue.paused ? 1 : 0);
    }
    expect(await page.locator(`article[data-queue="${shop}"] svg[role="img"]`).count()).toBe(1);
  });

  it("a queue's view: the failed job with its error (data shown as text); Retry delivers it again", async () => {
    await start('/');
    await page.locator(`article[data-queue="${shop}"]`).waitFor();
    await refreshNow(page); // "Refreshed.", said on the list
    await page.locator(`article[data-queue="${shop}"] h2 a`).click();
    await page.locator('h1', { hasText: shop }).waitFor();
    expect(page.url()).toBe(`${worker.url}/dashboard#/queue/${shop}`);
    // What was said on the list went with it.
    expect(await page.locator('#status').innerText()).toBe('');

    // Groups with their states; the repeat with its schedule.
    await page.locator('tr[data-group="tenant:slow"] .badge-paused').waitFor();
    expect(await text(page, 'tr[data-repeat="nightly-digest"]')).toContain('every 1 h');

    // The tabs work from the keyboard: End selects the last one, ArrowLeft the one before it
    // (as far as Failed), and focus follows.
    const states = await page.locator('[role="tab"]').evaluateAll((tabs) => tabs.map((tab) => tab.getAttribute('data-state')!));
    const failedAt = states.indexOf('failed');
    expect(failedAt).toBeGreaterThan(0);
    await page.locator('[role="tab"][aria-selected="true"]').focus();
    await page.keyboard.press('End');
    await page.locator(`[role="tab"][data-state="${states.at(-1)}"][aria-selected="true"]:focus`).waitFor();
    for (let at = states.length - 2; at >= failedAt; at--) {
      await page.keyboard.press('ArrowLeft');
      await page.locator(`[role="tab"][data-state="${states[at]}"][aria-selected="true"]:focus`).waitFor();
    }
    const row = page.locator(`tr[data-job="${FAILING}"]`);
    await row.waitFor();
    await page.locator('[role="tab"][data-state="failed"]').blur();
    await screenshot(page, 'dashboard');
    const rowText = await row.innerText();
    expect(rowText).toContain('HTTP 500: card declined');
    expect(rowText).toContain('"card":"visa-4242"');

    const deliveries = () => endpoint.received.filter((r) => r.job.id === FAILING).length;
    const before = deliveries();
    failingSucceeds = true;
    await row.locator('button[data-action="retry"]').click();
    await page.locator('#status', { hasText: `Job ${FAILING} queued to run again` }).waitFor();
    // Its row left the Failed tab with the focused button: focus falls back to the tab panel, not
    // to the page's start.
    await page.locator('#jobs-panel:focus').waitFor({ timeout: 5000 });
    await until(async () => deliveries(), (n) => n === before + 1, 'the retried job to be delivered again');
    const job = await waitForState(worker, shop, FAILING, 'completed');
    expect(job.attempts).toBe(1);
    await refreshNow(page);
    expect(await page.locator(`tr[data-job="${FAILING}"]`).count()).toBe(0);
  });

  it('shows job data as text, never as markup', async () => {
    await openShop();
    await page.locator('[role="tab"][data-state="completed"]').click();
    const row = page.locator('tr[data-job="order-1003"]');
    await row.waitFor();
    expect(await row.innerText()).toContain(MARKUP);
    expect(await row.locator('img').count()).toBe(0);
    expect(await page.evaluate('document.body.dataset.pwned ?? null')).toBeNull();
  });

  it('Promote runs a delayed job now; Remove asks once more (Confirm remove or Cancel), then removes a waiting job', async () => {
    await openShop();
    await page.locator('[role="tab"][data-state="delayed"]').click();
    await page.locator('tr[data-job="reminder-42"] button[data-action="promote"]').click();
    await page.locator('#status', { hasText: 'Job reminder-42 promoted' }).waitFor();
    await waitForState(worker, shop, 'reminder-42', 'completed');

    await page.locator('[role="tab"][data-state="waiting"]').click();
    const [first] = (await apiJson(`/v1/queues/${shop}/jobs?state=waiting&group=tenant:slow`)).jobs;
    const remove = page.locator(`tr[data-job="${first.id}"] button[data-action="remove"]`);
    await remove.click();
    await page.locator('#status', { hasText: 'Confirm remove' }).waitFor();
    expect((await worker.api(`/v1/queues/${shop}/jobs/${first.id}`)).status).toBe(200);
    await page.locator(`tr[data-job="${first.id}"] button[data-action="confirm-remove"]`).click();
    await page.locator('#status', { hasText: `Job ${first.id} removed` }).waitFor();
    expect((await worker.api(`/v1/queues/${shop}/jobs/${first.id}`)).status).toBe(404);
  });

  it("the chart's totals are the metrics route's sums", async () => {
    await openShop();
    const { minutes } = await apiJson(`/v1/queues/${shop}/metrics`);
    expect(minutes).toHaveLength(60);
    const sum = (key: string) => minutes.reduce((total: number, m: Record<string, number>) => total + m[key]!, 0);
    // The three good jobs and the failed one of beforeAll at least; the tests before this one
    // may have completed more (a retry, a promotion).
    expect(sum('completed')).toBeGreaterThanOrEqual(3);
    expect(sum('failed')).toBe(1);
    await refreshNow(page);
    const legend = await page.locator('#queue-view .chart .legend').innerText();
    expect(legend).toMatch(new RegExp(`Completed\\s+${sum('completed')}`));
    expect(legend).toMatch(new RegExp(`Retried\\s+${sum('retried')}`));
    expect(legend).toMatch(new RegExp(`Failed\\s+${sum('failed')}`));
    // Each says what it counts: the legend the last hour's ends, the cards the jobs kept.
    expect(legend).toMatch(/^Last hour:/);
    const kept = page.locator('#queue-view [data-count="completed"] dt');
    expect(await kept.textContent()).toBe('Completed (kept)');
    expect(await kept.getAttribute('title')).toContain('keepCompleted');
    // The screen reader's version: the SVG's title, and the table behind "Per-minute table".
    expect(await page.locator('#queue-view .chart svg title').first().textContent()).toContain(`${sum('completed')} completed`);
    await page.locator('#queue-view .chart-table summary').click();
    expect(await page.locator('#queue-view .chart-table tbody tr').count()).toBeGreaterThan(0);
    // A refresh redraws the chart: the table stays open and its toggle keeps the keyboard focus.
    // (A script click on Refresh, so that the focus stays where the user left it.)
    await page.evaluate(`document.getElementById('status').textContent = ''; document.getElementById('refresh').click()`);
    await page.locator('#status', { hasText: 'Refreshed' }).waitFor();
    expect(await page.locator('#queue-view details.chart-table[open] tbody tr').count()).toBeGreaterThan(0);
    expect(await page.evaluate(`document.activeElement?.matches('#queue-view .chart-table summary') ?? false`)).toBe(true);
  });

  it('pauses and resumes the queue through its button', async () => {
    await openShop();
    await page.locator('button[data-action="pause-queue"]').click();
    await until(() => apiJson(`/v1/queues/${shop}`), (q) => q.paused === true, 'the queue to be paused');
    await page.locator('button[data-action="resume-queue"]', { hasText: 'Resume queue' }).waitFor();
    await page.locator('.title-row .badge-paused').waitFor();
    await page.locator('button[data-action="resume-queue"]').click();
    await until(() => apiJson(`/v1/queues/${shop}`), (q) => q.paused === false, 'the queue to be resumed');
    await page.locator('button[data-action="pause-queue"]').waitFor();
  });

  it('375 px wide: no horizontal scroll on the list or on a queue', async () => {
    const mobile = await context.newPage();
    await mobile.setViewportSize({ width: 375, height: 800 });
    await signIn(mobile);
    await mobile.locator(`article[data-queue="${shop}"]`).waitFor();
    expect(await mobile.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(375);
    await mobile.locator(`article[data-queue="${shop}"] h2 a`).click();
    for (const state of ['waiting', 'completed']) {
      await mobile.locator(`[role="tab"][data-state="${state}"]`).click();
      await mobile.locator('#jobs-panel tr[data-job]').first().waitFor();
      expect(await mobile.evaluate('document.documentElement.scrollWidth'), state).toBeLessThanOrEqual(375);
    }
    // A question asked in a row (Remove) wraps inside it.
    await mobile.locator('#jobs-panel button[data-action="remove"]').first().click();
    await mobile.locator('#jobs-panel [data-confirm]').waitFor();
    expect(await mobile.evaluate('document.documentElement.scrollWidth'), 'a confirmation').toBeLessThanOrEqual(375);
    await mobile.locator('#jobs-panel button[data-action="cancel-confirm"]').click();
    // One phone screen of the queue: header, counts and chart.
    await mobile.evaluate('window.scrollTo(0, 0)');
    await screenshot(mobile, 'dashboard-mobile', { fullPage: false });
    await mobile.close();
  });

  it('a token refused later (rotated) sends you back to sign-in with a message', async () => {
    await start('/');
    await page.evaluate(`sessionStorage.setItem('${TOKEN_KEY}', 'a-token-rotated-away-0000')`);
    await page.reload();
    await page.locator('#sign-in-error', { hasText: 'refused the token' }).waitFor();
    expect(await page.evaluate(`sessionStorage.getItem('${TOKEN_KEY}')`)).toBeNull();
    // Sign out forgets the token too.
    await signIn(page);
    await page.locator('#session-bar').waitFor();
    await page.locator('#sign-out').click();
    await page.locator('#sign-in-view').waitFor();
    expect(await page.evaluate(`sessionStorage.getItem('${TOKEN_KEY}')`)).toBeNull();
  });

  it('the API reference opens in a new tab that has no handle on this one (no opener, no referrer)', async () => {
    await start('/');
    const [reference] = await Promise.all([context.waitForEvent('page'), page.locator('a.docs-link').click()]);
    await reference.waitForLoadState();
    expect(reference.url()).toBe(`${worker.url}/reference`);
    expect(await reference.evaluate('window.opener')).toBeNull();
    expect(await reference.evaluate('document.referrer')).toBe('');
    // The dashboard stays where it was, signed in.
    expect(page.url()).toBe(`${worker.url}/dashboard#/`);
    expect(await page.locator('#session-bar').isVisible()).toBe(true);
    await reference.close();
  });

  it('a view opened while another view is still loading loads itself (not only at the next 5 s refresh)', async () => {
    const paused = await context.newPage();
    // The page's timers stand still, so the 5 s refresh never comes: only route() can fill a view.
    await paused.clock.install();
    await signIn(paused);
    await paused.locator(`article[data-queue="${shop}"]`).waitFor();
    await paused.clock.pauseAt(Date.now() + 1000);
    // Refresh starts a read of the list; the hash changes while it is in flight.
    await paused.evaluate(`document.getElementById('refresh').click(); location.hash = '#/queue/${shop}'`);
    await paused.locator('#queue-view [data-count="waiting"]').waitFor({ timeout: 10_000 });
    // And back: the list is read again although the queue's own refresh is still in flight.
    await paused.evaluate(`document.getElementById('refresh').click(); location.hash = '#/'`);
    await paused.locator(`#queues article[data-queue="${shop}"]`).waitFor({ timeout: 10_000 });
    await paused.close();
  });

  it('no console errors, page errors or failed requests, and no request to another origin', () => {
    expect(seen.problems).toEqual([]);
    expect(seen.foreign).toEqual([]);
  });
});
