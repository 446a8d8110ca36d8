// Ordered batches on the dashboard (issue 31), in real Chromium against the real Worker, Redis and
// endpoint, driven as a user does: the flow control form sets a queue's batch (max jobs, how long
// the head waits), read back from the API and the config line, emptied back to none, and refused
// next to its fields (by the form, and by the API: a batch bigger than the concurrency); a job
// that ran in a batch shows in its attempt history where it was in that batch, and which batch.
import { beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import type { Endpoint, Reply } from '../helpers/endpoint';
import { ADMIN_TOKEN, type RunningWorker } from '../helpers/worker';
import { expectJson, putQueue } from '../http/support';
import { type Watch, openQueueAt, signedIn, until } from './browser';
import { useDashboardSuite } from './suite';

/** A batch body's shape, as far as the endpoint reads it (src/protocol/batch-body.ts). */
interface BatchBody {
  id: string;
  jobs?: { id: string }[];
}

const suite = useDashboardSuite({
  endpoints: {
    // Every job of a batch completes, each with its own result.
    endpoint: (r): Reply => {
      const body = r.job as unknown as BatchBody;
      const results = (body.jobs ?? []).map((job) => ({ receipt: `r-${job.id}` }));
      return { status: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ results }) };
    },
  },
  // Chromium logs each 400 the API answers (the form shows it).
  expectedConsole: [/status of 400/],
});
const { apiJson } = suite;
/** This file's share of the suite, taken from it first thing in beforeAll. */
let worker: RunningWorker, endpoint: Endpoint, page: Page, seen: Watch;

/** A queue whose batch the form edits; paused, it never delivers. */
const settings = 'settings';
/** Three orders of one group, sent in one batch of three; completed records kept. */
const orders = 'orders';
const customer = 'customer:9';

beforeAll(async () => {
  ({ worker, endpoints: { endpoint }, page, seen } = suite);
  await putQueue(worker, settings, { endpoint: endpoint.url, keepCompleted: 10 });
  await expectJson(await worker.api(`/v1/queues/${settings}/pause`, { method: 'POST' }), 200);

  // Paused while the three are enqueued, then resumed: the group holds all three when its head
  // goes, so one delivery carries them (the head would wait a minute for a full batch anyway).
  await putQueue(worker, orders, { endpoint: endpoint.url, keepCompleted: 100, batch: { maxSize: 3, maxWaitMs: 60_000 } });
  await expectJson(await worker.api(`/v1/queues/${orders}/pause`, { method: 'POST' }), 200);
  const jobs = ['order-1', 'order-2', 'order-3'].map((id) => ({ id, group: customer, data: { id } }));
  await expectJson(await worker.api(`/v1/queues/${orders}/jobs/batch`, { method: 'POST', json: { jobs } }), 201);
  await expectJson(await worker.api(`/v1/queues/${orders}/resume`, { method: 'POST' }), 200);
  // The cron (fired here) delivers it if no drain has.
  await until(async () => (await worker.scheduled(), (await apiJson(`/v1/queues/${orders}/jobs/order-3`)).state), (s) => s === 'completed', 'the batch of orders to complete');

  await signedIn(page, worker.url, ADMIN_TOKEN);
});

const openQueue = (name: string) => openQueueAt(page, worker.url, name);

/** Types the batch's two numbers ('' empties one), clicks Save and waits for what it announces. */
async function saveBatch(maxSize: string, maxWaitMs: string): Promise<void> {
  await page.locator('#flow-batch-max').fill(maxSize);
  await page.locator('#flow-batch-wait').fill(maxWaitMs);
  await page.evaluate(`document.getElementById('status').textContent = ''`);
  await page.locator('button', { hasText: 'Save flow control' }).click();
  await page.locator('#status', { hasText: `Flow control of queue ${settings} saved.` }).waitFor();
}
const configShown = (name: string) => page.locator(`.config [data-config="${name}"] dd`).innerText();
const configOf = async (name: string) => (await apiJson(`/v1/queues/${name}`)).config;

describe("a queue's batches in its flow control", () => {
  it('sets the jobs per delivery and the wait, then the jobs alone (the wait back to 0), then none; the API has each, the rest of the config kept', async () => {
    await openQueue(settings);
    expect(await configShown('Batches')).toBe('none');
    expect(await page.locator('#flow-batch-max').inputValue()).toBe('');
    expect(await page.locator('#flow-batch-wait').inputValue()).toBe('');

    await saveBatch('10', '500');
    expect(await configOf(settings)).toMatchObject({ batch: { maxSize: 10, maxWaitMs: 500 }, endpoint: endpoint.url, keepCompleted: 10, groupConcurrency: 1 });
    expect(await configShown('Batches')).toBe('up to 10 jobs, waiting 0.5 s');
    expect(await page.locator('#flow-batch-max').inputValue()).toBe('10');
    expect(await page.locator('#flow-batch-wait').inputValue()).toBe('500');

    // An empty wait is no wait, not "keep the old one" (PATCH merges an object field).
    await saveBatch('4', '');
    expect((await configOf(settings)).batch).toEqual({ maxSize: 4, maxWaitMs: 0 });
    expect(await configShown('Batches')).toBe('up to 4 jobs');

    await saveBatch('', '');
    expect(await configOf(settings)).toMatchObject({ batch: null, keepCompleted: 10 });
    expect(await configShown('Batches')).toBe('none');
  });

  it("a batch bigger than the concurrency is refused with the API's error on its field; a wait alone is caught before sending; nothing changes", async () => {
    await openQueue(settings);
    const before = await configOf(settings);
    const error = page.locator('#flow-error');

    await page.locator('#flow-batch-max').fill('20');
    await page.locator('button', { hasText: 'Save flow control' }).click();
    await error.filter({ hasText: 'VALIDATION_FAILED' }).waitFor();
    expect(await error.innerText()).toContain('batch.maxSize must be at most concurrency (10)');
    expect(await page.locator('#flow-batch-max').getAttribute('aria-invalid')).toBe('true');
    await page.locator('#flow-batch-max:focus').waitFor();
    expect(await configOf(settings)).toEqual(before);

    await page.locator('#flow-batch-max').fill('');
    await page.locator('#flow-batch-wait').fill('1000');
    await page.locator('button', { hasText: 'Save flow control' }).click();
    await error.filter({ hasText: 'Batches: give the jobs at most' }).waitFor();
    expect(await page.locator('#flow-batch-max').getAttribute('aria-invalid')).toBe('true');
    expect(await configOf(settings)).toEqual(before);

    await page.locator('.flow-form button[type="reset"]').click();
    expect(await page.locator('#flow-batch-wait').inputValue()).toBe('');
    expect(await error.innerText()).toBe('');
  });
});

describe("a job's attempt in a batch", () => {
  it('the attempt history shows the job\'s place in its batch and the batch id, the delivery\'s webhook-id', async () => {
    // One delivery carried the three, in group order.
    const deliveries = endpoint.received.filter((r) => r.headers['groupq-queue'] === orders);
    expect(deliveries).toHaveLength(1);
    const [delivery] = deliveries as [(typeof deliveries)[number]];
    const batchId = delivery.headers['webhook-id'];
    expect(batchId).toMatch(/^bat_[0-9a-f]{32}$/);
    expect((delivery.job as unknown as BatchBody).jobs?.map((job) => job.id)).toEqual(['order-1', 'order-2', 'order-3']);
    const second = await apiJson(`/v1/queues/${orders}/jobs/order-2`);
    expect(second).toMatchObject({ state: 'completed', result: { receipt: 'r-order-2' } });
    expect(second.history).toEqual([expect.objectContaining({ attempt: 1, outcome: 'completed', batch: { id: batchId, index: 1, size: 3 } })]);

    await page.goto('about:blank');
    await page.goto(`${worker.url}/dashboard#/queue/${orders}/job/order-2`);
    const history = page.locator('[data-part="job-history"]');
    await history.waitFor();
    expect(await history.locator('th', { hasText: 'Batch' }).count()).toBe(1);
    const cell = history.locator('tr[data-attempt="1"] td[data-label="Batch"]');
    expect(await cell.getAttribute('data-batch')).toBe(batchId);
    // textContent: "2 of 3" then the id, in its own (muted) line.
    expect(await cell.textContent()).toBe(`2 of 3${batchId}`);
    expect(await cell.locator('.muted code').textContent()).toBe(batchId);
  });

  it('a job delivered alone has no Batch column', async () => {
    await putQueue(worker, 'alone', { endpoint: endpoint.url, keepCompleted: 10 });
    await expectJson(await worker.api('/v1/queues/alone/jobs', { method: 'POST', json: { id: 'solo', group: 'g' } }), 201);
    await until(async () => (await worker.scheduled(), (await apiJson('/v1/queues/alone/jobs/solo')).state), (s) => s === 'completed', 'the lone job to complete');
    await page.goto('about:blank');
    await page.goto(`${worker.url}/dashboard#/queue/alone/job/solo`);
    const history = page.locator('[data-part="job-history"]');
    await history.locator('tr[data-attempt="1"]').waitFor();
    expect(await history.locator('th').allTextContents()).toEqual(['Attempt', 'Started', 'Finished', 'Outcome', 'Status', 'Error']);
  });
});

it('no console errors, page errors or failed requests, and no request to another origin', () => {
  expect(seen.problems).toEqual([]);
  expect(seen.foreign).toEqual([]);
});
