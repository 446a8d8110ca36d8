// groupq/client against the real Worker: every method, typed data round trips, the error type,
// and paging by `await` (one page) and `for await` (every item).
import { describe, expect, it } from 'vitest';
import { GroupqClient } from '../../src/client';
import { startEndpoint } from '../helpers/endpoint';
import { ADMIN_TOKEN } from '../helpers/worker';
import { caught } from './support';
import { uniqueQueue, useHttpSuite } from '../http/support';

const suite = useHttpSuite();
const client = () => new GroupqClient({ url: suite.worker.url, token: ADMIN_TOKEN });

interface Email {
  to: string;
  n: number;
}

describe('groupq/client', () => {
  it('configures, reads, lists, pauses and deletes a queue', async () => {
    const name = uniqueQueue('client-q');
    const q = client().queue(name);
    const created = await q.configure({ endpoint: 'https://example.com/hook', concurrency: 3 });
    expect(created).toMatchObject({ name, config: { concurrency: 3, timeoutMs: 30_000 }, counts: { waiting: 0 } });
    expect(await q.get()).toMatchObject({ name, paused: false, config: { endpoint: 'https://example.com/hook' } });
    // update changes what it names and keeps the rest; null is the default again.
    const updated = await q.update({ maxAttempts: 9, concurrency: null });
    expect(updated.config).toMatchObject({ endpoint: 'https://example.com/hook', maxAttempts: 9, concurrency: 10 });
    expect(await q.pause()).toEqual({ name, paused: true });
    expect((await client().queues()).find((s) => s.name === name)).toMatchObject({ paused: true, counts: { waiting: 0 } });
    expect(await q.resume()).toEqual({ name, paused: false });
    await q.delete();
    expect(await caught(q.get())).toMatchObject({ code: 'QUEUE_NOT_FOUND', status: 404 });
  });

  it('adds jobs with typed data and reads them back, duplicates included', async () => {
    const q = client().queue<Email>(uniqueQueue('client-jobs'));
    await q.configure({ endpoint: 'https://example.com/hook' });
    await q.pause();
    const first = await q.add({ group: 'user:1', id: 'welcome-1', data: { to: 'a@example.com', n: 1 } });
    expect(first).toEqual({ id: 'welcome-1', state: 'waiting' });
    expect(await q.add({ group: 'user:1', id: 'welcome-1', data: { to: 'other', n: 9 } })).toEqual({
      id: 'welcome-1',
      state: 'waiting',
      duplicate: true,
    });
    const batch = await q.addBatch([
      { group: 'user:1', data: { to: 'b@example.com', n: 2 } },
      { group: 'user:2', data: { to: 'c@example.com', n: 3 }, delayMs: 3_600_000 },
    ]);
    expect(batch.map((r) => r.state)).toEqual(['waiting', 'delayed']);
    const job = await q.getJob('welcome-1');
    const to: string = job.data.to;
    expect(to).toBe('a@example.com');
    expect(job).toMatchObject({ group: 'user:1', state: 'waiting', attempts: 0, maxAttempts: 3 });
    expect(await q.counts()).toMatchObject({ waiting: 2, delayed: 1, groups: 1 });
  });

  it('pages jobs and groups by cursor, or iterates them all', async () => {
    const q = client().queue<number>(uniqueQueue('client-pages'));
    await q.configure({ endpoint: 'https://example.com/hook' });
    await q.pause();
    await q.addBatch(Array.from({ length: 7 }, (_, i) => ({ group: `g${i % 3}`, data: i, orderMs: 1_000 + i })));
    const page = await q.listJobs({ state: 'waiting', group: 'g0', limit: 2 });
    expect(page.jobs.map((j) => j.data)).toEqual([0, 3]);
    expect(page.cursor).not.toBeNull();
    const rest = await q.listJobs({ state: 'waiting', group: 'g0', limit: 2, cursor: page.cursor! });
    expect(rest.jobs.map((j) => j.data)).toEqual([6]);
    const all: number[] = [];
    for await (const job of q.listJobs({ limit: 3 })) all.push(job.data);
    expect(all.sort()).toEqual([0, 1, 2, 3, 4, 5, 6]);
    const groups: string[] = [];
    for await (const g of q.groups({ limit: 1 })) groups.push(g.group);
    expect(groups.sort()).toEqual(['g0', 'g1', 'g2']);
    const firstPage = await q.groups({ limit: 2 });
    expect(firstPage.groups).toHaveLength(2);
  });

  it('updates, promotes, removes and reads groups', async () => {
    const q = client().queue<{ v: number }>(uniqueQueue('client-ops'));
    await q.configure({ endpoint: 'https://example.com/hook' });
    await q.pause();
    await q.add({ group: 'g', id: 'a', data: { v: 1 } });
    await q.add({ group: 'g', id: 'b', data: { v: 2 }, delayMs: 3_600_000 });
    expect(await q.updateJob('a', { data: { v: 10 } })).toMatchObject({ id: 'a', data: { v: 10 }, state: 'waiting' });
    expect(await q.promoteJob('b')).toMatchObject({ id: 'b', state: 'waiting' });
    expect((await q.group('g')).jobs.map((j) => j.id)).toEqual(['a', 'b']);
    expect(await q.pauseGroup('g')).toEqual({ group: 'g', state: 'paused' });
    expect(await q.resumeGroup('g')).toEqual({ group: 'g', state: 'ready' });
    await q.removeJob('a');
    expect(await caught(q.getJob('a'))).toMatchObject({ code: 'JOB_NOT_FOUND', status: 404 });
    expect(await caught(q.promoteJob('b'))).toMatchObject({ code: 'INVALID_STATE', status: 409 });
    expect(await caught(q.group('nobody'))).toMatchObject({ code: 'GROUP_NOT_FOUND' });
  });

  it("sets and clears a group's limits, shown by group() and groups()", async () => {
    const q = client().queue(uniqueQueue('client-limits'));
    await q.configure({ endpoint: 'https://example.com/hook', groupConcurrency: 2 });
    await q.pause();
    await q.add({ group: 'g', id: 'first', data: 1, priority: 5 });
    expect(await q.group('g')).toMatchObject({ limits: null, active: 0, concurrency: 2 });
    expect((await q.getJob('first')).priority).toBe(5);
    const limits = { concurrency: 4, rateLimit: { max: 10, periodMs: 1000 } };
    expect(await q.setGroupLimits('g', limits)).toEqual({ group: 'g', limits });
    expect(await q.group('g')).toMatchObject({ limits, active: 0, concurrency: 4 });
    expect((await q.groups()).groups).toMatchObject([{ group: 'g', waiting: 1, active: 0, concurrency: 4 }]);
    expect(await q.setGroupLimits('g', { rateLimit: null })).toEqual({ group: 'g', limits: { rateLimit: null } });
    expect(await q.group('g')).toMatchObject({ limits: { rateLimit: null }, concurrency: 2 });
    await q.clearGroupLimits('g');
    await q.clearGroupLimits('g');
    expect(await q.group('g')).toMatchObject({ limits: null, concurrency: 2 });
    expect(await caught(q.setGroupLimits('g', {}))).toMatchObject({ code: 'VALIDATION_FAILED', status: 400 });
  });

  it('cancels a job, which is then listed and counted as cancelled', async () => {
    const q = client().queue(uniqueQueue('client-cancel'));
    await q.configure({ endpoint: 'https://example.com/hook' });
    await q.pause();
    await q.add({ group: 'g', id: 'a', data: 1 });
    expect(await q.cancel('a')).toEqual({ id: 'a', state: 'cancelled' });
    expect((await q.listJobs({ state: 'cancelled' })).jobs.map((j) => j.id)).toEqual(['a']);
    expect((await q.counts()).cancelled).toBe(1);
    expect(await caught(q.cancel('a'))).toMatchObject({ code: 'INVALID_STATE', status: 409 });
  });

  it('retries a failed job, which then runs again', async () => {
    let calls = 0;
    const endpoint = await startEndpoint(() => (++calls === 1 ? { status: 500, body: 'boom' } : { status: 200, body: '"ok"' }));
    try {
      const q = client().queue(uniqueQueue('client-retry'));
      await q.configure({ endpoint: endpoint.url, maxAttempts: 1, keepCompleted: 10 });
      await q.add({ group: 'g', id: 'j', data: 1 });
      await endpoint.waitFor(1);
      await expect.poll(async () => (await q.getJob('j')).state).toBe('failed');
      expect((await q.listJobs({ state: 'failed' })).jobs[0]).toMatchObject({ id: 'j', error: 'HTTP 500: boom' });
      expect(await q.retryJob('j')).toMatchObject({ id: 'j', attempts: 0 });
      await endpoint.waitFor(2);
      await expect.poll(async () => (await q.getJob('j')).state).toBe('completed');
    } finally {
      await endpoint.close();
    }
  });

  it('manages repeatable jobs', async () => {
    const q = client().queue<string>(uniqueQueue('client-repeats'));
    await q.configure({ endpoint: 'https://example.com/hook' });
    const put = await q.repeats.put('digest', { group: 'g', data: 'hi', pattern: '0 9 * * 1-5', tz: 'Europe/Berlin' });
    expect(put.key).toBe('digest');
    expect(put.nextRunAt).toBeGreaterThan(Date.now());
    const [repeat] = await q.repeats.list();
    expect(repeat).toMatchObject({ key: 'digest', data: 'hi', pattern: '0 9 * * 1-5', tz: 'Europe/Berlin', count: 0 });
    await q.repeats.delete('digest');
    expect(await q.repeats.list()).toEqual([]);
    expect(await caught(q.repeats.delete('digest'))).toMatchObject({ code: 'REPEAT_NOT_FOUND', status: 404 });
  });

  it('throws GroupqError with the API code, status, message and details', async () => {
    const q = client().queue(uniqueQueue('client-errors'));
    await q.configure({ endpoint: 'https://example.com/hook' });
    const invalid = await caught(q.add({ group: '', data: 1 }));
    expect(invalid).toMatchObject({ code: 'VALIDATION_FAILED', status: 400, name: 'GroupqError' });
    expect(invalid.details).toBeInstanceOf(Array);
    const badQueue = await caught(client().queue('no/such').get());
    expect(badQueue.status).toBe(400);
    const wrongToken = new GroupqClient({ url: suite.worker.url, token: 'wrong-token-0123456789' });
    expect(await caught(wrongToken.queues())).toMatchObject({ code: 'UNAUTHORIZED', status: 401 });
  });

  it('checks health, and says NETWORK_ERROR when nothing answers', async () => {
    expect(await client().health()).toEqual({ ok: true, redis: 'ok' });
    const nowhere = new GroupqClient({ url: 'http://127.0.0.1:9', token: ADMIN_TOKEN, retries: 0 });
    expect(await caught(nowhere.queues())).toMatchObject({ code: 'NETWORK_ERROR', status: 0 });
  });

  it('enqueues with a publish token, which opens nothing else', async () => {
    const name = uniqueQueue('client-publish');
    await client().queue(name).configure({ endpoint: 'https://example.com/hook', publishTokens: ['pub_0123456789abcdef'] });
    await client().queue(name).pause();
    const publisher = new GroupqClient({ url: suite.worker.url, token: 'pub_0123456789abcdef' }).queue(name);
    expect((await publisher.add({ group: 'g', data: 1 })).state).toBe('waiting');
    expect(await caught(publisher.get())).toMatchObject({ code: 'UNAUTHORIZED', status: 401 });
  });
});
