// HTTP API v1, job routes over HTTP against the Worker in workerd: enqueue (single, duplicate,
// batch), GET one, list by state/group with limit and cursor, DELETE, retry, promote, PATCH.
// Jobs are held still for inspection by a paused queue, or by an endpoint answering 202 (the
// job stays active); failed jobs come from an endpoint answering 500 with groupq-retry: false.
import { describe, expect, it } from 'vitest';
import { queueKeys } from '../../src/core/store/keys';
import { startEndpoint, useEndpoints } from '../helpers/endpoint';
import {
  enqueue,
  expectError,
  expectJson,
  expectRefused,
  pausedQueue,
  putQueue,
  quietQueue,
  uniqueQueue,
  useHttpSuite,
  waitForState,
} from './support';

const suite = useHttpSuite();
const endpoints = useEndpoints({
  accepting: () => ({ status: 202 }),
  failing: () => ({ status: 500, headers: { 'groupq-retry': 'false' }, body: 'boom' }),
  completing: () => ({ headers: { 'content-type': 'application/json' }, body: '{"ok":true}' }),
});

const job = (queue: string, id: string) => suite.worker.api(`/v1/queues/${queue}/jobs/${encodeURIComponent(id)}`);

/** A job that is active and stays so: delivered to an endpoint that answered 202. */
async function activeJob(): Promise<{ queue: string; id: string }> {
  const queue = uniqueQueue('active');
  await putQueue(suite.worker, queue, { endpoint: endpoints.accepting.url });
  const { id } = await enqueue(suite.worker, queue, { group: 'g', data: { n: 1 } });
  await waitForState(suite.worker, queue, id, 'active');
  return { queue, id };
}

/** A job that failed for good: one attempt, answered 500 with groupq-retry: false. */
async function failedJob(): Promise<{ queue: string; id: string }> {
  const queue = uniqueQueue('failed');
  await putQueue(suite.worker, queue, { endpoint: endpoints.failing.url, maxAttempts: 1 });
  const { id } = await enqueue(suite.worker, queue, { group: 'g', data: { n: 1 } });
  await waitForState(suite.worker, queue, id, 'failed');
  return { queue, id };
}

describe('POST /v1/queues/{queue}/jobs', () => {
  it('answers 201 {id, state}; generated ids are unique and URL-safe', async () => {
    const queue = uniqueQueue('enqueue');
    await pausedQueue(suite.worker, queue);
    const a = await suite.worker.api(`/v1/queues/${queue}/jobs`, { method: 'POST', json: { group: 'g', data: 1 } });
    const b = await suite.worker.api(`/v1/queues/${queue}/jobs`, { method: 'POST', json: { group: 'g', data: 2 } });
    const first = await expectJson(a, 201);
    const second = await expectJson(b, 201);
    expect(Object.keys(first).sort()).toEqual(['id', 'state']);
    expect(first.state).toBe('waiting');
    expect(first.id).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(second.id).not.toBe(first.id);
  });

  it('a job with delayMs or runAt is delayed', async () => {
    const queue = uniqueQueue('delayed');
    await pausedQueue(suite.worker, queue);
    expect((await enqueue(suite.worker, queue, { group: 'g', delayMs: 600_000 })).state).toBe('delayed');
    expect((await enqueue(suite.worker, queue, { group: 'g', runAt: Date.now() + 600_000 })).state).toBe('delayed');
  });

  it('an existing id answers 200 {id, state, duplicate: true} and changes nothing', async () => {
    const queue = uniqueQueue('dup');
    await pausedQueue(suite.worker, queue);
    await enqueue(suite.worker, queue, { id: 'order-1', group: 'g', data: { v: 1 } });
    const again = await suite.worker.api(`/v1/queues/${queue}/jobs`, {
      method: 'POST',
      json: { id: 'order-1', group: 'other', data: { v: 2 }, delayMs: 60_000 },
    });
    expect(await expectJson(again, 200)).toEqual({ id: 'order-1', state: 'waiting', duplicate: true });
    const shown = await expectJson(await job(queue, 'order-1'), 200);
    expect(shown).toMatchObject({ group: 'g', data: { v: 1 }, state: 'waiting' });
    expect((await expectJson(await suite.worker.api(`/v1/queues/${queue}`), 200)).counts.waiting).toBe(1);
  });

  it('an unknown queue is 404 QUEUE_NOT_FOUND', async () => {
    const res = await suite.worker.api(`/v1/queues/${uniqueQueue('none')}/jobs`, { method: 'POST', json: { group: 'g' } });
    await expectError(res, 404, 'QUEUE_NOT_FOUND');
  });
});

describe('POST /v1/queues/{queue}/jobs/batch', () => {
  it('answers 201 {jobs: [{id, state, duplicate?}]} in the order sent', async () => {
    const queue = uniqueQueue('batch');
    await pausedQueue(suite.worker, queue);
    await enqueue(suite.worker, queue, { id: 'known', group: 'g', data: 0 });
    const res = await suite.worker.api(`/v1/queues/${queue}/jobs/batch`, {
      method: 'POST',
      json: {
        jobs: [
          { id: 'b1', group: 'g', data: 1 },
          { id: 'known', group: 'g', data: 'ignored' },
          { id: 'b2', group: 'h', data: 2, delayMs: 600_000 },
          { group: 'h', data: 3 },
          { id: 'b1', group: 'h', data: 'same id twice in one batch' },
        ],
      },
    });
    const body = await expectJson(res, 201);
    expect(Object.keys(body)).toEqual(['jobs']);
    expect(body.jobs).toEqual([
      { id: 'b1', state: 'waiting' },
      { id: 'known', state: 'waiting', duplicate: true },
      { id: 'b2', state: 'delayed' },
      { id: expect.stringMatching(/^[A-Za-z0-9_-]+$/), state: 'waiting' },
      { id: 'b1', state: 'waiting', duplicate: true },
    ]);
    expect((await expectJson(await job(queue, 'known'), 200)).data).toBe(0);
    expect((await expectJson(await job(queue, 'b1'), 200)).data).toBe(1);
    const counts = (await expectJson(await suite.worker.api(`/v1/queues/${queue}`), 200)).counts;
    expect(counts).toMatchObject({ waiting: 3, delayed: 1 });
  });
});

describe('GET /v1/queues/{queue}/jobs/{id}', () => {
  it('shows a waiting job as {id, queue, group, data, state, orderMs, attempts, maxAttempts, createdAt}', async () => {
    const queue = uniqueQueue('get');
    await pausedQueue(suite.worker, queue);
    const before = Date.now();
    await enqueue(suite.worker, queue, { id: 'j1', group: 'user:42', data: { a: [1, 'x'] }, orderMs: 1_732_000_000_000 });
    const body = await expectJson(await job(queue, 'j1'), 200);
    expect(body).toEqual({
      id: 'j1',
      queue,
      group: 'user:42',
      data: { a: [1, 'x'] },
      state: 'waiting',
      orderMs: 1_732_000_000_000,
      attempts: 0,
      maxAttempts: 3,
      createdAt: expect.any(Number),
      priority: 0,
    });
    expect(body.createdAt).toBeGreaterThanOrEqual(before - 1000);
  });

  it('shows the priority and debounce its record holds: debounce {key, deadline?}', async () => {
    const queue = uniqueQueue('flowview');
    await pausedQueue(suite.worker, queue);
    // The record's flow fields (pr, db, dx; job.lua) written behind the API, so the view is
    // checked on its own.
    const withFields = async (id: string, fields: Record<string, unknown>) => {
      await enqueue(suite.worker, queue, { id, group: 'g' });
      const { jobs } = queueKeys(queue);
      const raw = (await suite.redis.hget<string>(jobs, id))!;
      const newline = raw.indexOf('\n');
      const state = { ...JSON.parse(raw.slice(0, newline)), ...fields };
      await suite.redis.hset(jobs, { [id]: JSON.stringify(state) + raw.slice(newline) });
      return expectJson(await job(queue, id), 200);
    };
    expect(await withFields('capped', { pr: -7, db: 'reindex:42', dx: 1_732_000_000_000 })).toMatchObject({
      priority: -7,
      debounce: { key: 'reindex:42', deadline: 1_732_000_000_000 },
    });
    const uncapped = await withFields('uncapped', { pr: 3, db: 'k' });
    expect(uncapped).toMatchObject({ priority: 3, debounce: { key: 'k' } });
    expect(uncapped.debounce).toEqual({ key: 'k' });
    // Listings show them too.
    const { jobs } = await expectJson(await suite.worker.api(`/v1/queues/${queue}/jobs`), 200);
    expect(jobs.map((j: { priority: number }) => j.priority)).toEqual([-7, 3]);
  });

  it('shows runAt of a delayed job, startedAt of an active one, finishedAt/result of a completed one', async () => {
    const queue = uniqueQueue('shapes');
    await pausedQueue(suite.worker, queue);
    const runAt = Date.now() + 600_000;
    const { id } = await enqueue(suite.worker, queue, { group: 'g', runAt, maxAttempts: 5 });
    expect(await expectJson(await job(queue, id), 200)).toMatchObject({ state: 'delayed', runAt, maxAttempts: 5 });

    const active = await activeJob();
    const shown = await expectJson(await job(active.queue, active.id), 200);
    expect(shown).toMatchObject({ state: 'active', attempts: 1, startedAt: expect.any(Number) });

    const done = uniqueQueue('completed');
    await putQueue(suite.worker, done, { endpoint: endpoints.completing.url, keepCompleted: 10 });
    const { id: doneId } = await enqueue(suite.worker, done, { group: 'g', data: 1 });
    const completed = await waitForState(suite.worker, done, doneId, 'completed');
    expect(completed).toMatchObject({ result: { ok: true }, attempts: 1, finishedAt: expect.any(Number) });
  });

  it('an unknown job is 404 JOB_NOT_FOUND; an unknown queue 404 QUEUE_NOT_FOUND', async () => {
    const queue = uniqueQueue('missing');
    await pausedQueue(suite.worker, queue);
    await expectError(await job(queue, 'nope'), 404, 'JOB_NOT_FOUND');
    await expectError(await job(uniqueQueue('noq'), 'nope'), 404, 'QUEUE_NOT_FOUND');
  });
});

describe('GET /v1/queues/{queue}/jobs', () => {
  it('lists waiting jobs by default; with group, in the order they will run; limit and cursor page through', async () => {
    const queue = uniqueQueue('list');
    await pausedQueue(suite.worker, queue);
    // Enqueued out of order: orderMs decides the order inside the group.
    for (const [id, orderMs] of [['c', 3000], ['a', 1000], ['e', 5000], ['b', 2000], ['d', 4000]] as const) {
      await enqueue(suite.worker, queue, { id, group: 'g', orderMs });
    }
    await enqueue(suite.worker, queue, { id: 'other', group: 'h' });
    await enqueue(suite.worker, queue, { id: 'later', group: 'g', delayMs: 600_000 });

    const all = await expectJson(await suite.worker.api(`/v1/queues/${queue}/jobs`), 200);
    expect(all.cursor).toBeNull();
    expect(all.jobs.map((j: { id: string }) => j.id).sort()).toEqual(['a', 'b', 'c', 'd', 'e', 'other']);
    expect(all.jobs.every((j: { state: string }) => j.state === 'waiting')).toBe(true);

    const pages: string[][] = [];
    let cursor: string | null = null;
    do {
      const query = new URLSearchParams({ state: 'waiting', group: 'g', limit: '2' });
      if (cursor !== null) query.set('cursor', cursor);
      const page = await expectJson(await suite.worker.api(`/v1/queues/${queue}/jobs?${query}`), 200);
      expect(Object.keys(page).sort()).toEqual(['cursor', 'jobs']);
      expect(page.jobs.length).toBeLessThanOrEqual(2);
      pages.push(page.jobs.map((j: { id: string }) => j.id));
      cursor = page.cursor;
    } while (cursor !== null && pages.length < 10);
    expect(pages.flat()).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect(pages[0]).toHaveLength(2);
  });

  it('state=delayed lists by runAt; state=active and state=failed list those jobs', async () => {
    const queue = uniqueQueue('bystate');
    await pausedQueue(suite.worker, queue);
    const now = Date.now();
    await enqueue(suite.worker, queue, { id: 'late', group: 'g', runAt: now + 900_000 });
    await enqueue(suite.worker, queue, { id: 'soon', group: 'h', runAt: now + 300_000 });
    await enqueue(suite.worker, queue, { id: 'mid', group: 'g', runAt: now + 600_000 });
    const delayed = await expectJson(await suite.worker.api(`/v1/queues/${queue}/jobs?state=delayed`), 200);
    expect(delayed.jobs.map((j: { id: string }) => j.id)).toEqual(['soon', 'mid', 'late']);

    const active = await activeJob();
    const listed = await expectJson(await suite.worker.api(`/v1/queues/${active.queue}/jobs?state=active`), 200);
    expect(listed.jobs.map((j: { id: string; state: string }) => [j.id, j.state])).toEqual([[active.id, 'active']]);

    const failed = await failedJob();
    const fl = await expectJson(await suite.worker.api(`/v1/queues/${failed.queue}/jobs?state=failed`), 200);
    expect(fl.jobs).toHaveLength(1);
    expect(fl.jobs[0]).toMatchObject({ id: failed.id, state: 'failed', attempts: 1, error: expect.stringMatching(/^HTTP 500/) });
  });


  it('state=completed lists the kept completed jobs, newest first', async () => {
    // One group, so they finish one after another; the endpoint takes a few ms for each.
    const slow = await startEndpoint(() => ({ delayMs: 5 }));
    try {
      const queue = uniqueQueue('completed');
      await putQueue(suite.worker, queue, { endpoint: slow.url, keepCompleted: 10 });
      for (const id of ['first', 'second', 'third']) await enqueue(suite.worker, queue, { id, group: 'g' });
      await waitForState(suite.worker, queue, 'third', 'completed');
      const body = await expectJson(await suite.worker.api(`/v1/queues/${queue}/jobs?state=completed`), 200);
      expect(body.jobs.map((j: { id: string; state: string }) => [j.id, j.state])).toEqual([
        ['third', 'completed'],
        ['second', 'completed'],
        ['first', 'completed'],
      ]);
    } finally {
      await slow.close();
    }
  });

  it('a malformed cursor, or the cursor of another list, is 400 VALIDATION_FAILED and writes nothing', async () => {
    const queue = await quietQueue(suite, 'badcursor');
    for (const id of ['a', 'b', 'c']) await enqueue(suite.worker, queue, { id, group: 'g', delayMs: 600_000 });
    const page = await expectJson(await suite.worker.api(`/v1/queues/${queue}/jobs?state=delayed&limit=2`), 200);
    expect(page.cursor).toMatch(/^[A-Za-z0-9_-]+$/);
    const failedPage = `/v1/queues/${queue}/jobs?state=failed&cursor=${page.cursor}`;
    const groupsPage = `/v1/queues/${queue}/groups?cursor=${page.cursor}`;
    for (const path of [`/v1/queues/${queue}/jobs?state=delayed&cursor=not-a-cursor`, failedPage, groupsPage]) {
      const body = await expectRefused(suite, queue, 400, 'VALIDATION_FAILED', () => suite.worker.api(path));
      expect(body.error.details).toEqual([{ path: 'cursor', message: expect.stringContaining('not a cursor') }]);
    }
    const rest = await expectJson(await suite.worker.api(`/v1/queues/${queue}/jobs?state=delayed&cursor=${page.cursor}`), 200);
    expect(rest).toMatchObject({ cursor: null, jobs: [{ id: 'c' }] });
  });
});

describe('DELETE /v1/queues/{queue}/jobs/{id}', () => {
  it('removes a waiting job: 204, then GET is 404 JOB_NOT_FOUND and the counts drop', async () => {
    const queue = uniqueQueue('remove');
    await pausedQueue(suite.worker, queue);
    await enqueue(suite.worker, queue, { id: 'x', group: 'g' });
    const res = await suite.worker.api(`/v1/queues/${queue}/jobs/x`, { method: 'DELETE' });
    expect(res.status).toBe(204);
    await expectError(await job(queue, 'x'), 404, 'JOB_NOT_FOUND');
    expect((await expectJson(await suite.worker.api(`/v1/queues/${queue}`), 200)).counts).toMatchObject({ waiting: 0, groups: 0 });
    await expectError(await suite.worker.api(`/v1/queues/${queue}/jobs/x`, { method: 'DELETE' }), 404, 'JOB_NOT_FOUND');
  });

  it('an active job is 409 INVALID_STATE naming the state, and stays active', async () => {
    const { queue, id } = await activeJob();
    const refused = await expectError(await suite.worker.api(`/v1/queues/${queue}/jobs/${id}`, { method: 'DELETE' }), 409, 'INVALID_STATE');
    expect(refused.error.details).toEqual({ state: 'active' });
    expect(refused.error.message).toContain('active');
    expect((await expectJson(await job(queue, id), 200)).state).toBe('active');
  });
});

describe('retry and promote', () => {
  it('retry moves a failed job back to waiting with attempts reset (200, the job as GET shows it)', async () => {
    const { queue, id } = await failedJob();
    // Paused, so the retried job is not pushed (and failed) again while we look.
    await expectJson(await suite.worker.api(`/v1/queues/${queue}/pause`, { method: 'POST' }), 200);
    const res = await suite.worker.api(`/v1/queues/${queue}/jobs/${id}/retry`, { method: 'POST' });
    const body = await expectJson(res, 200);
    expect(body).toMatchObject({ id, queue, state: 'waiting', attempts: 0 });
    expect(await expectJson(await job(queue, id), 200)).toEqual(body);
  });

  it('retry of a job that is not failed is 409 INVALID_STATE naming the state; of an unknown one 404', async () => {
    const queue = uniqueQueue('retry409');
    await pausedQueue(suite.worker, queue);
    await enqueue(suite.worker, queue, { id: 'w', group: 'g' });
    await enqueue(suite.worker, queue, { id: 'd', group: 'g', delayMs: 600_000 });
    for (const [id, state] of [['w', 'waiting'], ['d', 'delayed']]) {
      const refused = await expectError(await suite.worker.api(`/v1/queues/${queue}/jobs/${id}/retry`, { method: 'POST' }), 409, 'INVALID_STATE');
      expect(refused.error.details).toEqual({ state });
      expect((await expectJson(await job(queue, id!), 200)).state).toBe(state);
    }
    const active = await activeJob();
    const refused = await expectError(await suite.worker.api(`/v1/queues/${active.queue}/jobs/${active.id}/retry`, { method: 'POST' }), 409, 'INVALID_STATE');
    expect(refused.error.details).toEqual({ state: 'active' });
    await expectError(await suite.worker.api(`/v1/queues/${queue}/jobs/nope/retry`, { method: 'POST' }), 404, 'JOB_NOT_FOUND');
  });

  it('promote moves a delayed job to waiting now; a job that is not delayed is 409', async () => {
    const queue = uniqueQueue('promote');
    await pausedQueue(suite.worker, queue);
    await enqueue(suite.worker, queue, { id: 'd', group: 'g', delayMs: 600_000 });
    const body = await expectJson(await suite.worker.api(`/v1/queues/${queue}/jobs/d/promote`, { method: 'POST' }), 200);
    expect(body).toMatchObject({ id: 'd', state: 'waiting' });
    if (body.runAt !== undefined) expect(body.runAt).toBeLessThanOrEqual(Date.now());
    expect((await expectJson(await job(queue, 'd'), 200)).state).toBe('waiting');

    const refused = await expectError(await suite.worker.api(`/v1/queues/${queue}/jobs/d/promote`, { method: 'POST' }), 409, 'INVALID_STATE');
    expect(refused.error.details).toEqual({ state: 'waiting' });
    const failed = await failedJob();
    const again = await expectError(await suite.worker.api(`/v1/queues/${failed.queue}/jobs/${failed.id}/promote`, { method: 'POST' }), 409, 'INVALID_STATE');
    expect(again.error.details).toEqual({ state: 'failed' });
  });
});

describe('PATCH /v1/queues/{queue}/jobs/{id}', () => {
  it('replaces the data of a waiting job (200, the job as GET shows it)', async () => {
    const queue = uniqueQueue('patch');
    await pausedQueue(suite.worker, queue);
    await enqueue(suite.worker, queue, { id: 'p', group: 'g', data: { v: 1 } });
    const res = await suite.worker.api(`/v1/queues/${queue}/jobs/p`, { method: 'PATCH', json: { data: { v: 2 } } });
    const body = await expectJson(res, 200);
    expect(body).toMatchObject({ id: 'p', state: 'waiting', data: { v: 2 } });
    expect(await expectJson(await job(queue, 'p'), 200)).toEqual(body);
  });

  it('delayMs delays a waiting job from now; delayMs 0 on a delayed job promotes it', async () => {
    const queue = uniqueQueue('patchdelay');
    await pausedQueue(suite.worker, queue);
    await enqueue(suite.worker, queue, { id: 'p', group: 'g' });
    const before = Date.now();
    const delayed = await expectJson(
      await suite.worker.api(`/v1/queues/${queue}/jobs/p`, { method: 'PATCH', json: { delayMs: 600_000 } }),
      200,
    );
    expect(delayed.state).toBe('delayed');
    expect(delayed.runAt).toBeGreaterThanOrEqual(before + 600_000);
    // It left its group until due.
    await expectError(await suite.worker.api(`/v1/queues/${queue}/groups/g`), 404, 'GROUP_NOT_FOUND');

    const promoted = await expectJson(
      await suite.worker.api(`/v1/queues/${queue}/jobs/p`, { method: 'PATCH', json: { delayMs: 0, data: 'now' } }),
      200,
    );
    expect(promoted).toMatchObject({ state: 'waiting', data: 'now' });
  });

  it('an active or failed job is 409 INVALID_STATE and keeps its data', async () => {
    const active = await activeJob();
    const patchActive = await suite.worker.api(`/v1/queues/${active.queue}/jobs/${active.id}`, {
      method: 'PATCH',
      json: { data: 'changed' },
    });
    expect((await expectError(patchActive, 409, 'INVALID_STATE')).error.details).toEqual({ state: 'active' });
    expect(await expectJson(await job(active.queue, active.id), 200)).toMatchObject({ state: 'active', data: { n: 1 } });

    const failed = await failedJob();
    const patchFailed = await suite.worker.api(`/v1/queues/${failed.queue}/jobs/${failed.id}`, {
      method: 'PATCH',
      json: { delayMs: 1000 },
    });
    expect((await expectError(patchFailed, 409, 'INVALID_STATE')).error.details).toEqual({ state: 'failed' });
    expect((await expectJson(await job(failed.queue, failed.id), 200)).state).toBe('failed');
  });
});
