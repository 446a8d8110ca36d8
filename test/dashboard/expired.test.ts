// Jobs that expired (a ttlMs not met: docs/flow-control.md#job-ttl), in real Chromium against the
// real Worker and Redis, as a user reads them: the queue's Expired count and tab, the job's row
// and its view (its deadline to start), and Clean expired with its count. The queue is paused, so
// nothing is delivered; the cron (fired here) expires the jobs.
import { beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { ADMIN_TOKEN, type RunningWorker } from '../helpers/worker';
import { expectJson, putQueue } from '../http/support';
import { openQueueAt, signedIn, until } from './browser';
import { useDashboardSuite } from './suite';

const suite = useDashboardSuite();
const { apiJson } = suite;
/** This file's share of the suite, taken from it first thing in beforeAll. */
let worker: RunningWorker, page: Page;

const queue = 'codes';

beforeAll(async () => {
  ({ worker, page } = suite);
  await putQueue(worker, queue, { endpoint: 'https://hooks.example/codes', keepFailed: 100 });
  await expectJson(await worker.api(`/v1/queues/${queue}/pause`, { method: 'POST' }), 200);
  await expectJson(
    await worker.api(`/v1/queues/${queue}/jobs/batch`, {
      method: 'POST',
      json: { jobs: [{ id: 'code-1', group: 'user:1', data: { code: 1 }, ttlMs: 1 }, { id: 'code-2', group: 'user:2', data: { code: 2 }, ttlMs: 1 }] },
    }),
    201,
  );
  await expectJson(await worker.api(`/v1/queues/${queue}/jobs`, { method: 'POST', json: { id: 'later', group: 'user:3', ttlMs: 3_600_000 } }), 201);
  await until(async () => (await worker.scheduled(), (await apiJson(`/v1/queues/${queue}`)).counts.expired), (n) => n === 2, 'both codes to expire');
  await signedIn(page, worker.url, ADMIN_TOKEN);
});

const tab = (state: string) => page.locator(`[role="tab"][data-state="${state}"]`);
const countOf = (state: string) => page.locator(`#queue-view [data-count="${state}"] dd`).innerText();
const row = (id: string) => page.locator(`#jobs-panel tr[data-job="${id}"]`);

describe('expired jobs in the dashboard', () => {
  it('are counted and listed on the Expired tab; Clean expired deletes them', async () => {
    await openQueueAt(page, worker.url, queue);
    await row('later').waitFor(); // waiting, with its deadline to come
    expect(await countOf('expired')).toBe('2');
    expect(await tab('expired').locator('.tab-count').innerText()).toBe('2');
    await tab('expired').click();
    await row('code-1').waitFor();
    expect(await row('code-2').count()).toBe(1);
    expect(await row('later').count()).toBe(0);

    await page.locator('button[data-action="clean"]').click();
    await page.locator('[data-confirm="bulk:clean:expired"]', { hasText: 'Delete all 2 expired jobs?' }).waitFor();
    await page.locator('button[data-action="confirm-clean"]').click();
    await page.locator('[data-bulk-result="expired"]', { hasText: 'Deleted 2 expired jobs.' }).waitFor();
    await page.locator('#jobs-panel .empty-row', { hasText: 'No expired jobs.' }).waitFor();
    expect((await apiJson(`/v1/queues/${queue}`)).counts).toMatchObject({ expired: 0, waiting: 1 });
  });
});
