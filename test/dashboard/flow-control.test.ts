// Flow control on the dashboard, in real Chromium against the real Worker, Redis and endpoint,
// driven as a user does: the queue's flow control form (group concurrency, both rate limits, the
// dedup window, what a 429 holds) saved and read back from the API, and refused with the API's
// validation error next to it; a group's view with its active jobs out of its concurrency, its
// limits set (a raised concurrency starts a waiting job at once) and cleared; a job's priority
// and debounce key in the jobs table and in its own view.
import { beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import type { Endpoint } from '../helpers/endpoint';
import { ADMIN_TOKEN, type RunningWorker } from '../helpers/worker';
import { enqueue, expectJson, pausedQueue, putQueue } from '../http/support';
import { type Watch, openQueueAt, signedIn, until } from './browser';
import { useDashboardSuite } from './suite';

const suite = useDashboardSuite({
  endpoints: { endpoint: () => ({ status: 202 }) },
  // Chromium logs each 400 the API answers (the form shows it), and the 404 of a group the API
  // does not know (the view says so).
  expectedConsole: [/status of 400/, /status of 404/],
});
const { apiJson } = suite;
/** This file's share of the suite, taken from it first thing in beforeAll. */
let worker: RunningWorker, endpoint: Endpoint, page: Page, seen: Watch;

/** A queue whose flow control the form edits. */
const settings = 'settings';
/** One group of three exports, each held by its endpoint (202) until the test ends. */
const exportsQueue = 'exports';
const tenant = 'tenant:a';
/** Paused: its jobs stay waiting and delayed, with their priority and debounce. */
const inbox = 'inbox';

beforeAll(async () => {
  ({ worker, endpoints: { endpoint }, page, seen } = suite);
  await putQueue(worker, settings, { endpoint: endpoint.url, timeoutMs: 45_000, keepCompleted: 50 });
  await putQueue(worker, exportsQueue, { endpoint: endpoint.url, timeoutMs: 600_000 });
  const batch = ['export-1', 'export-2', 'export-3'].map((id) => ({ id, group: tenant, data: { id } }));
  await expectJson(await worker.api(`/v1/queues/${exportsQueue}/jobs/batch`, { method: 'POST', json: { jobs: batch } }), 201);
  await until(async () => endpoint.received.some((r) => r.job.id === 'export-1'), Boolean, 'the first export to be delivered');

  await pausedQueue(worker, inbox);
  await enqueue(worker, inbox, { id: 'urgent', group: 'user:1', priority: 5, data: { kind: 'alert' } });
  await enqueue(worker, inbox, { id: 'digest', group: 'user:2', data: { n: 1 }, debounce: { key: 'digest:user:2', delayMs: 60_000, maxDelayMs: 120_000 } });

  await signedIn(page, worker.url, ADMIN_TOKEN);
});

const openQueue = (name: string) => openQueueAt(page, worker.url, name);
/** A group's view of the exports queue, freshly loaded (signed in already). */
async function openGroup(group: string, heading = page.locator('#queue-view h1', { hasText: `Group ${group}` })): Promise<void> {
  await page.goto('about:blank');
  await page.goto(`${worker.url}/dashboard#/queue/${exportsQueue}/group/${encodeURIComponent(group)}`);
  await heading.waitFor();
}

/** Clicks a form's button and waits for what it announces (an earlier, same message cleared first). */
async function press(button: string, announced: string): Promise<void> {
  await page.evaluate(`document.getElementById('status').textContent = ''`);
  await page.locator('button', { hasText: button }).click();
  await page.locator('#status', { hasText: announced }).waitFor();
}
const configShown = (name: string) => page.locator(`.config [data-config="${name}"] dd`).innerText();

describe("a queue's flow control", () => {
  it('sets group concurrency, both rate limits, the dedup window and what a 429 holds; the API has them and the rest of the config is kept', async () => {
    await openQueue(settings);
    expect(await configShown('Group concurrency')).toBe('1');
    expect(await configShown('Rate limit')).toBe('none');
    expect(await configShown('Dedup window')).toBe('5 min');
    expect(await configShown('Backoff')).toBe('1 s, doubling up to 1 h, jittered');
    expect(await page.locator('#flow-group-concurrency').inputValue()).toBe('1');

    await page.locator('#flow-group-concurrency').fill('3');
    await page.locator('#flow-rate-limit-max').fill('10');
    await page.locator('#flow-rate-limit-period').fill('1000');
    await page.locator('#flow-group-rate-limit-max').fill('2');
    await page.locator('#flow-group-rate-limit-period').fill('60000');
    await page.locator('#flow-dedup-window').fill('600000');
    await page.locator('#flow-backpressure').selectOption('group');
    await press('Save flow control', `Flow control of queue ${settings} saved.`);

    const { config } = await apiJson(`/v1/queues/${settings}`);
    expect(config).toMatchObject({
      groupConcurrency: 3,
      rateLimit: { max: 10, periodMs: 1000 },
      groupRateLimit: { max: 2, periodMs: 60_000 },
      dedupWindowMs: 600_000,
      backpressure: 'group',
      endpoint: endpoint.url,
      timeoutMs: 45_000,
      keepCompleted: 50,
    });
    expect(await configShown('Group concurrency')).toBe('3');
    expect(await configShown('Rate limit')).toBe('10 per 1 s');
    expect(await configShown('Group rate limit')).toBe('2 per 1 min');
    expect(await configShown('Dedup window')).toBe('10 min');
    expect(await configShown('A 429')).toBe('holds its group');

    // Both fields of a rate limit emptied: no rate limit.
    await page.locator('#flow-rate-limit-max').fill('');
    await page.locator('#flow-rate-limit-period').fill('');
    await press('Save flow control', `Flow control of queue ${settings} saved.`);
    expect((await apiJson(`/v1/queues/${settings}`)).config).toMatchObject({ rateLimit: null, groupRateLimit: { max: 2, periodMs: 60_000 }, groupConcurrency: 3 });
    expect(await configShown('Rate limit')).toBe('none');
  });

  it("a value out of range is refused with the API's validation error next to the form, the field marked, and nothing changes", async () => {
    await openQueue(settings);
    const before = (await apiJson(`/v1/queues/${settings}`)).config;
    await page.locator('#flow-group-concurrency').fill('5000');
    await page.locator('button', { hasText: 'Save flow control' }).click();
    const error = page.locator('#flow-error');
    await error.filter({ hasText: 'VALIDATION_FAILED' }).waitFor();
    expect(await error.innerText()).toContain('groupConcurrency');
    expect(await page.locator('#flow-group-concurrency').getAttribute('aria-invalid')).toBe('true');
    await page.locator('#flow-group-concurrency:focus').waitFor();
    expect((await apiJson(`/v1/queues/${settings}`)).config).toEqual(before);

    // Half a rate limit is caught before anything is sent.
    await page.locator('#flow-group-concurrency').fill(String(before.groupConcurrency));
    await page.locator('#flow-rate-limit-max').fill('10');
    await page.locator('#flow-rate-limit-period').fill('');
    await page.locator('button', { hasText: 'Save flow control' }).click();
    await error.filter({ hasText: 'give the period' }).waitFor();
    expect(await page.locator('#flow-group-concurrency').getAttribute('aria-invalid')).toBeNull();
    expect(await page.locator('#flow-rate-limit-period').getAttribute('aria-invalid')).toBe('true');
    expect((await apiJson(`/v1/queues/${settings}`)).config).toEqual(before);

    // Reset goes back to the saved values and clears the error.
    await page.locator('.flow-form button[type="reset"]').click();
    expect(await page.locator('#flow-rate-limit-max').inputValue()).toBe(before.rateLimit ? String(before.rateLimit.max) : '');
    expect(await page.locator('#flow-group-concurrency').inputValue()).toBe(String(before.groupConcurrency));
    expect(await error.innerText()).toBe('');
  });

  it('a queue with publish tokens and its own signing secret is edited here, and keeps them (the save is a PATCH)', async () => {
    const secret = `whsec_${Buffer.alloc(24, 3).toString('base64')}`;
    await putQueue(worker, settings, { endpoint: endpoint.url, publishTokens: ['pt_0123456789abcdef'], signingSecret: secret });
    await openQueue(settings);
    await page.locator('#flow-group-concurrency').fill('4');
    await press('Save flow control', `Flow control of queue ${settings} saved.`);
    expect((await apiJson(`/v1/queues/${settings}`)).config).toMatchObject({ groupConcurrency: 4, publishTokens: 1, signingSecret: true });
  });
});

describe("a group's limits", () => {
  it('the groups list shows active out of concurrency; the group view shows where its limits come from', async () => {
    await openQueue(exportsQueue);
    const row = page.locator(`tr[data-group="${tenant}"]`);
    await row.waitFor();
    expect(await row.locator('td[data-label="Active"]').innerText()).toBe('1/1');
    await row.locator('a.group-link').click();
    await page.locator('#queue-view h1', { hasText: `Group ${tenant}` }).waitFor();
    expect(page.url()).toBe(`${worker.url}/dashboard#/queue/${exportsQueue}/group/${encodeURIComponent(tenant)}`);

    const fieldOf = (name: string) => page.locator(`[data-field="${name}"] dd`).innerText();
    await page.locator('[data-field="Active"]').waitFor();
    expect(await fieldOf('Active')).toBe('1 / 1');
    expect(await fieldOf('Concurrency')).toBe("1 (the queue's groupConcurrency)");
    expect(await fieldOf('Rate limit')).toBe("none (the queue's groupRateLimit)");
    const order = await page.locator('.jobs-table td[data-label="Job"]').allInnerTexts();
    expect(order).toEqual(['export-1', 'export-2', 'export-3']);
  });

  it('set: a concurrency of 2 starts the next export at once, with its own rate limit; the API shows them', async () => {
    await openGroup(tenant);
    await page.locator('#limits-concurrency').fill('2');
    await page.locator('#limits-rate-choice').selectOption('own');
    await page.locator('#limits-rate-max').fill('5');
    await page.locator('#limits-rate-period').fill('1000');
    await press('Save limits', `Limits of group ${tenant} saved.`);

    const group = await apiJson(`/v1/queues/${exportsQueue}/groups/${encodeURIComponent(tenant)}`);
    expect(group.limits).toEqual({ concurrency: 2, rateLimit: { max: 5, periodMs: 1000 } });
    expect(group.concurrency).toBe(2);
    await until(async () => endpoint.received.some((r) => r.job.id === 'export-2'), Boolean, 'the second export to start');
    await page.locator('#refresh').click();
    await page.locator('[data-field="Active"] dd', { hasText: '2 / 2' }).waitFor();
    expect(await page.locator('[data-field="Concurrency"] dd').innerText()).toBe("2 (this group's limit)");
    expect(await page.locator('[data-field="Rate limit"] dd').innerText()).toBe("5 per 1 s (this group's limit)");

    // "None" is no rate limit at all, whatever the queue's.
    await page.locator('#limits-rate-choice').selectOption('none');
    expect(await page.locator('#limits-rate-max').isVisible()).toBe(false);
    await press('Save limits', `Limits of group ${tenant} saved.`);
    expect((await apiJson(`/v1/queues/${exportsQueue}/groups/${encodeURIComponent(tenant)}`)).limits).toEqual({ concurrency: 2, rateLimit: null });
  });

  it("a concurrency out of range is refused next to the form and changes nothing", async () => {
    await openGroup(tenant);
    const before = (await apiJson(`/v1/queues/${exportsQueue}/groups/${encodeURIComponent(tenant)}`)).limits;
    await page.locator('#limits-concurrency').fill('0');
    await page.locator('button', { hasText: 'Save limits' }).click();
    const error = page.locator('#limits-error');
    await error.filter({ hasText: 'VALIDATION_FAILED' }).waitFor();
    expect(await error.innerText()).toContain('concurrency');
    expect(await page.locator('#limits-concurrency').getAttribute('aria-invalid')).toBe('true');
    expect((await apiJson(`/v1/queues/${exportsQueue}/groups/${encodeURIComponent(tenant)}`)).limits).toEqual(before);
  });

  it("clear: the limits are deleted and the queue's defaults show again", async () => {
    await openGroup(tenant);
    await press('Clear limits', `Limits of group ${tenant} cleared.`);
    const group = await apiJson(`/v1/queues/${exportsQueue}/groups/${encodeURIComponent(tenant)}`);
    expect(group.limits).toBeNull();
    expect(group.concurrency).toBe(1);
    await page.locator('[data-field="Concurrency"] dd', { hasText: "the queue's groupConcurrency" }).waitFor();
    expect(await page.locator('#limits-concurrency').inputValue()).toBe('');
    expect(await page.locator('#limits-rate-choice').inputValue()).toBe('queue');
    expect(await page.locator('#limits-error').innerText()).toBe('');
  });

  it('a group without jobs: limits set there are kept (the group is idle), and cleared', async () => {
    await openGroup('tenant:b', page.locator('[data-notice="no-group"]'));
    await page.locator('#limits-concurrency').fill('4');
    await press('Save limits', 'Limits of group tenant:b saved.');
    expect(await apiJson(`/v1/queues/${exportsQueue}/groups/tenant%3Ab`)).toMatchObject({ state: 'idle', limits: { concurrency: 4 }, active: 0, jobs: [] });
    expect(await page.locator('[data-field="Active"] dd').innerText()).toBe('0 / 4');
    expect(await page.locator('[data-field="State"] dd').textContent()).toBe('idle');
    await page.locator('.empty-row', { hasText: 'No waiting or active job.' }).waitFor();

    await press('Clear limits', 'Limits of group tenant:b cleared.');
    await page.locator('[data-notice="no-group"]').waitFor();
    expect((await worker.api(`/v1/queues/${exportsQueue}/groups/tenant%3Ab`)).status).toBe(404);
  });
});

describe("jobs' priority and debounce", () => {
  it('the jobs table shows a priority and a debounce key next to the id; the job view shows them', async () => {
    await openQueue(inbox);
    const urgent = page.locator('#jobs-panel tr[data-job="urgent"]');
    await urgent.waitFor();
    expect(await urgent.locator('[data-priority]').textContent()).toBe('priority 5');

    await page.locator('[role="tab"][data-state="delayed"]').click();
    const digest = page.locator('#jobs-panel tr[data-job="digest"]');
    await digest.waitFor();
    expect(await digest.locator('[data-debounce]').textContent()).toBe('debounce digest:user:2');
    expect(await digest.locator('[data-priority]').count()).toBe(0);

    await digest.locator('a.job-link').click();
    await page.locator('#queue-view h1', { hasText: 'digest' }).waitFor();
    expect(await page.locator('[data-field="Debounce key"] dd').innerText()).toBe('digest:user:2');
    expect(await page.locator('[data-field="Debounce deadline"] dd').innerText()).toMatch(/\(in \d+ min\)$/);
    expect(await page.locator('[data-field="Priority"]').count()).toBe(0);

    await page.goto(`${worker.url}/dashboard#/queue/${inbox}/job/urgent`);
    await page.locator('[data-field="Priority"] dd', { hasText: '5' }).waitFor();
  });
});

it('no console errors, page errors or failed requests, and no request to another origin', () => {
  expect(seen.problems).toEqual([]);
  expect(seen.foreign).toEqual([]);
});
