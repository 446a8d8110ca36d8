// What a new user tripped on in the dashboard (issue 32), in real Chromium against the real
// Worker, Redis and endpoint: a partitioned queue's partitions (read only once their list is
// opened), a queue whose only jobs failed opening on its Failed tab, counts written "1 job" and
// never "1 jobs", the chart's scale label naming the top its bars reach, JSON that wraps between
// its parts and never inside a word, and a job failed for good by its endpoint (groupq-retry:
// false, as a NonRetryableError answers) told apart from one that ran out of attempts.
import { beforeAll, describe, expect, it } from 'vitest';
import type { Locator, Page, Request } from 'playwright-core';
import type { Reply } from '../helpers/endpoint';
import { ADMIN_TOKEN, type RunningWorker } from '../helpers/worker';
import { enqueue, expectJson, putQueue } from '../http/support';
import { openQueueAt, signedIn, startAt, until } from './browser';
import { useDashboardSuite } from './suite';

const suite = useDashboardSuite({
  endpoints: {
    endpoint: (r): Reply => {
      const { mode } = (r.job.data ?? {}) as { mode?: string };
      // What the receiver answers for a NonRetryableError: fail now, no further attempt.
      if (mode === 'final') return { status: 500, headers: { 'groupq-retry': 'false' }, body: 'card declined' };
      if (mode === 'broken') return { status: 500, body: 'upstream down' };
      return { status: 200, headers: { 'content-type': 'application/json' }, body: '{"ok":true}' };
    },
  },
});
const { apiJson } = suite;
/** This file's share of the suite, taken from it first thing in beforeAll. */
let worker: RunningWorker, page: Page;

/** Failed jobs only: one failed for good at its first attempt, one after its three. */
const refunds = 'refunds';
/** Three partitions, paused, one waiting job: the only job not finished in any queue. */
const shards = 'shards';
/** Two jobs completed: the chart's busiest minute. */
const pulses = 'pulses';

const refundData = {
  customer: 'northwind-traders-international',
  reason: 'duplicate-charge',
  items: [{ sku: 'espresso-grinder-deluxe', quantity: 2 }, { sku: 'milk-frother-classic', quantity: 1 }],
  note: 'refund requested by the customer through the support portal after a duplicate charge',
};

beforeAll(async () => {
  ({ worker, page } = suite);
  const url = suite.endpoints.endpoint.url;
  await putQueue(worker, refunds, { endpoint: url, keepFailed: 100, maxAttempts: 3, backoff: { type: 'fixed', delayMs: 100, jitter: false } });
  await enqueue(worker, refunds, { id: 'refund-final', group: 'card:1', data: { mode: 'final', ...refundData } });
  await enqueue(worker, refunds, { id: 'refund-broken', group: 'card:2', data: { mode: 'broken' } });
  await putQueue(worker, shards, { endpoint: url, partitions: 3 });
  await expectJson(await worker.api(`/v1/queues/${shards}/pause`, { method: 'POST' }), 200);
  await enqueue(worker, shards, { id: 'shard-job', group: 'tenant:7' });
  await putQueue(worker, pulses, { endpoint: url });
  await expectJson(await worker.api(`/v1/queues/${pulses}/jobs/batch`, { method: 'POST', json: { jobs: [{ group: 'a' }, { group: 'b' }] } }), 201);
  // The retries are due 100 ms after each 500: the cron (fired here) delivers them if no drain has.
  await until(async () => (await worker.scheduled(), (await apiJson(`/v1/queues/${refunds}`)).counts.failed), (n) => n === 2, 'both refunds to fail');
  await until(async () => (await apiJson(`/v1/queues/${pulses}/metrics`)).minutes.reduce((n: number, m: any) => n + m.completed, 0), (n) => n === 2, 'both pulses to complete');
  await signedIn(page, worker.url, ADMIN_TOKEN);
});

const openQueue = (name: string) => openQueueAt(page, worker.url, name);
const row = (id: string) => page.locator(`#jobs-panel tr[data-job="${id}"]`);
const selectedTab = () => page.locator('[role="tab"][aria-selected="true"]').getAttribute('data-state');

/** A count written with a plural noun after "1": "1 jobs", "1 partitions". */
const ONE_PLURAL = /(^|[^\d.,])1 (jobs|queues|partitions|attempts|groups)\b/;

/**
 * Where `element`'s text wraps: for each line after the first, the character that ends the line
 * before and the one that starts it. A wrap inside a word has a letter or digit on both sides.
 */
function wrapsOf(element: Locator): Promise<string[]> {
  return element.evaluate((el) => {
    const pairs: string[] = [];
    const doc = el.ownerDocument;
    const walker = doc.createTreeWalker(el, 4); // NodeFilter.SHOW_TEXT: the test's types have no DOM
    let last: { char: string; top: number } | null = null;
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const text = node.textContent ?? '';
      for (let i = 0; i < text.length; i++) {
        const range = doc.createRange();
        range.setStart(node, i);
        range.setEnd(node, i + 1);
        const box = range.getClientRects()[0];
        if (!box || text[i] === '\n') continue; // collapsed, or the end of a line of its own
        if (last && box.top > last.top + 2) pairs.push(last.char + text[i]);
        last = { char: text[i]!, top: box.top };
      }
    }
    return pairs;
  });
}

describe('what a new user tripped on', () => {
  it('a partitioned queue lists its partitions (database, counts) once asked; no read before', async () => {
    const asked: string[] = [];
    const record = (request: Request) => new URL(request.url()).pathname.endsWith('/partitions') && asked.push(request.url());
    page.on('request', record);
    await openQueue(pulses);
    expect(await page.locator('[data-part="partitions"]').count()).toBe(0); // one partition: nothing to show
    await openQueue(shards);
    const part = page.locator('[data-part="partitions"]');
    expect(await part.locator('summary').innerText()).toBe('3 partitions');
    expect(asked).toEqual([]);

    await part.locator('summary').click();
    await part.locator('tr[data-partition]').nth(2).waitFor();
    const { partitions } = await apiJson(`/v1/queues/${shards}/partitions`);
    expect(partitions).toHaveLength(3);
    for (const { partition, database, counts } of partitions) {
      const line = part.locator(`tr[data-partition="${partition}"]`);
      expect(await line.locator('[data-cell="database"]').innerText()).toBe(String(database));
      expect(await line.locator('[data-count="waiting"]').innerText()).toBe(String(counts.waiting));
      expect(await line.locator('[data-count="groups"]').innerText()).toBe(String(counts.groups));
    }
    expect(await part.locator('[data-count="waiting"]').allInnerTexts()).toContain('1');
    expect(asked.length).toBeGreaterThan(0);
    page.off('request', record);
  });

  it('a queue whose only jobs failed opens on its Failed tab', async () => {
    await openQueue(refunds);
    await row('refund-final').waitFor();
    expect(await selectedTab()).toBe('failed');
    // A queue with waiting jobs still opens on them.
    await openQueue(shards);
    await row('shard-job').waitFor();
    expect(await selectedTab()).toBe('waiting');
  });

  it('a job failed for good by its endpoint reads "not retried"; one that used its attempts, "after 3 attempts"', async () => {
    await openQueue(refunds);
    const how = (id: string) => row(id).locator('td[data-label="Attempts"] .failed-how');
    await how('refund-final').waitFor();
    expect(await how('refund-final').innerText()).toBe('not retried, after 1 of 3 attempts');
    expect(await how('refund-final').getAttribute('data-failed')).toBe('not-retried');
    expect(await how('refund-broken').innerText()).toBe('after 3 attempts');
    expect(await how('refund-broken').getAttribute('data-failed')).toBe('out-of-attempts');

    await row('refund-final').locator('a.job-link').click();
    const state = page.locator('[data-field="State"] dd');
    await state.locator('.failed-how').waitFor();
    expect(await state.textContent()).toBe('failed not retried, after 1 of 3 attempts');
    expect(await page.locator('[data-field="Attempts"] dd').innerText()).toBe('1 / 3');
  });

  it('writes one of anything in the singular: "1 job not finished", never "1 jobs"', async () => {
    await startAt(page, worker.url, ADMIN_TOKEN, '/');
    const summary = page.locator('[data-overview="summary"]', { hasText: 'not finished' });
    await summary.waitFor();
    expect(await summary.innerText()).toContain('3 queues · 1 job not finished · 2 failed in the last hour');
    expect(await page.locator('body').innerText()).not.toMatch(ONE_PLURAL);
    await openQueue(refunds);
    await row('refund-broken').waitFor();
    await page.locator('button[data-action="clean"]').click();
    expect(await page.locator('[data-confirm="bulk:clean:failed"]').innerText()).toContain('Delete all 2 failed jobs?');
    await page.locator('[data-confirm="bulk:clean:failed"] button[data-action="cancel-confirm"]').click();
    expect(await page.locator('body').innerText()).not.toMatch(ONE_PLURAL);
  });

  it("the chart's scale label names the top its bars reach: the busiest minute's bar under its count", async () => {
    await openQueue(pulses);
    const label = await page.locator('#queue-view .chart .axis-top').innerText();
    const top = Number(/^(\d+)\/min$/.exec(label)?.[1]);
    const { minutes } = await apiJson(`/v1/queues/${pulses}/metrics`);
    const totals: number[] = minutes.map((m: any) => m.completed + m.retried + m.failed);
    const busiest = Math.max(...totals);
    expect(busiest).toBeGreaterThan(0);
    // Up to 5 a minute, the top is the busiest minute itself: its bar reaches the label.
    expect(top).toBe(busiest);
    // Each bar, read against the label's scale (the plot is 100 units high), is its minute's count
    // (compared without their minutes: one may have begun between the page's read and this one).
    const heights = await page.locator('#queue-view .chart svg g.minute').evaluateAll((slots) =>
      slots.map((slot) => [...slot.querySelectorAll('rect.bar')].reduce((sum, bar) => sum + Number(bar.getAttribute('height')), 0)),
    );
    const busy = (counts: number[]) => counts.filter((n) => n > 0).sort();
    expect(busy(heights.map((height) => Math.round((height * top) / 100)))).toEqual(busy(totals));
  });

  it('JSON wraps between its parts, never inside a word (a phone-wide list, and the job)', async () => {
    const phone = await suite.context.newPage();
    try {
      await phone.setViewportSize({ width: 375, height: 800 });
      await startAt(phone, worker.url, ADMIN_TOKEN, `/queue/${refunds}`);
      const data = phone.locator('tr[data-job="refund-final"] td[data-label="Data"] summary code');
      await data.waitFor();
      // Again until measured: a redraw (at each read) may replace the element found, detached then.
      const listWraps = await until(() => wrapsOf(data), (pairs) => pairs.length > 0, 'the data preview to wrap');
      expect(listWraps.filter((pair) => /^\w\w$/.test(pair))).toEqual([]);
      expect(await data.innerText()).toMatch(/^\{"mode":"final","customer":"northwind-traders-international",/);

      await phone.locator('tr[data-job="refund-final"] a.job-link').click();
      const pre = phone.locator('[data-part="job-data"] pre');
      await pre.waitFor();
      expect(JSON.parse(await pre.innerText())).toEqual({ mode: 'final', ...refundData });
      const jobWraps = await until(() => wrapsOf(pre), (pairs) => pairs.length > 0, "the job's data to wrap");
      expect(jobWraps.filter((pair) => /^\w\w$/.test(pair))).toEqual([]);
      expect(await phone.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(375);
    } finally {
      await phone.close();
    }
  });

  it('nothing went wrong in the page', () => {
    expect(suite.seen.problems).toEqual([]);
    expect(suite.seen.foreign).toEqual([]);
  });
});
