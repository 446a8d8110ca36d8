// HTTP API v1, group and repeat routes over HTTP against the Worker in workerd: list groups
// (with their states), one group, pause/resume one group, set and delete a group's limits;
// PUT/GET/DELETE repeatable jobs, and a run the cron makes from a repeat.
import { describe, expect, it } from 'vitest';
import { startEndpoint, useEndpoints } from '../helpers/endpoint';
import {
  enqueue,
  expectError,
  expectJson,
  pausedQueue,
  putQueue,
  uniqueQueue,
  useHttpSuite,
  waitForState,
} from './support';

const suite = useHttpSuite();
const endpoints = useEndpoints({ accepting: () => ({ status: 202 }) });

const api = (path: string, init?: RequestInit & { json?: unknown }) => suite.worker.api(path, init);

describe('groups', () => {
  it('GET groups lists {group, waiting, active, state, concurrency}; a paused queue leaves group states alone', async () => {
    const queue = uniqueQueue('groups');
    await pausedQueue(suite.worker, queue);
    await enqueue(suite.worker, queue, { group: 'a', data: 1 });
    await enqueue(suite.worker, queue, { group: 'a', data: 2 });
    await enqueue(suite.worker, queue, { group: 'b', data: 3 });
    const body = await expectJson(await api(`/v1/queues/${queue}/groups`), 200);
    expect(body.cursor).toBeNull();
    expect([...body.groups].sort((x: { group: string }, y: { group: string }) => (x.group < y.group ? -1 : 1))).toEqual([
      { group: 'a', waiting: 2, active: 0, state: 'ready', concurrency: 1 },
      { group: 'b', waiting: 1, active: 0, state: 'ready', concurrency: 1 },
    ]);
  });

  it('limit and cursor page through the groups', async () => {
    const queue = uniqueQueue('gpages');
    await pausedQueue(suite.worker, queue);
    const names = ['g1', 'g2', 'g3', 'g4', 'g5'];
    for (const group of names) await enqueue(suite.worker, queue, { group });
    const seen: string[] = [];
    let cursor: string | null = null;
    for (let page = 0; page < 10; page++) {
      const query: string = cursor === null ? 'limit=2' : `limit=2&cursor=${encodeURIComponent(cursor)}`;
      const body = await expectJson(await api(`/v1/queues/${queue}/groups?${query}`), 200);
      expect(body.groups.length).toBeLessThanOrEqual(2);
      seen.push(...body.groups.map((g: { group: string }) => g.group));
      cursor = body.cursor;
      if (cursor === null) break;
    }
    expect(seen.sort()).toEqual(names);
  });

  it('a group with a job in flight is active; one waiting out a retry backoff is held', async () => {
    const queue = uniqueQueue('gstates');
    await putQueue(suite.worker, queue, { endpoint: endpoints.accepting.url });
    const { id } = await enqueue(suite.worker, queue, { group: 'busy', data: 1 });
    await enqueue(suite.worker, queue, { group: 'busy', data: 2 });
    await waitForState(suite.worker, queue, id, 'active');
    const busy = await expectJson(await api(`/v1/queues/${queue}/groups/busy`), 200);
    expect(busy.group).toBe('busy');
    expect(busy.state).toBe('active');
    expect(busy).toMatchObject({ limits: null, active: 1, concurrency: 1 });
    expect(busy.jobs.map((j: { state: string }) => j.state)).toEqual(['active', 'waiting']);

    const failing = await startEndpoint(() => ({ status: 500 }));
    try {
      const retrying = uniqueQueue('held');
      await putQueue(suite.worker, retrying, {
        endpoint: failing.url,
        backoff: { type: 'fixed', delayMs: 600_000, jitter: false },
      });
      await enqueue(suite.worker, retrying, { id: 'r', group: 'sick', data: 1 });
      await failing.waitFor(1);
      // The failed attempt is recorded after the endpoint answered: poll until it is.
      let group: any;
      for (let i = 0; i < 200; i++) {
        group = await expectJson(await api(`/v1/queues/${retrying}/groups`), 200);
        if (group.groups[0]?.state === 'held') break;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(group.groups).toEqual([{ group: 'sick', waiting: 1, active: 0, state: 'held', concurrency: 1 }]);
      expect(await expectJson(await api(`/v1/queues/${retrying}/jobs/r`), 200)).toMatchObject({ state: 'waiting', attempts: 1 });
    } finally {
      await failing.close();
    }
  });

  it('GET one group answers {group, state, limits, active, concurrency, jobs}, jobs in run order; a group without jobs is 404', async () => {
    const queue = uniqueQueue('onegroup');
    await pausedQueue(suite.worker, queue);
    await enqueue(suite.worker, queue, { id: 'second', group: 'g', orderMs: 2000 });
    await enqueue(suite.worker, queue, { id: 'first', group: 'g', orderMs: 1000 });
    const body = await expectJson(await api(`/v1/queues/${queue}/groups/g`), 200);
    expect(Object.keys(body).sort()).toEqual(['active', 'concurrency', 'group', 'jobs', 'limits', 'state']);
    expect(body).toMatchObject({ group: 'g', state: 'ready', limits: null, active: 0, concurrency: 1 });
    expect(body.jobs.map((j: { id: string }) => j.id)).toEqual(['first', 'second']);
    expect(body.jobs[0]).toMatchObject({ id: 'first', queue, group: 'g', state: 'waiting', orderMs: 1000 });

    await expectError(await api(`/v1/queues/${queue}/groups/empty`), 404, 'GROUP_NOT_FOUND');
    await expectError(await api(`/v1/queues/${uniqueQueue('noq')}/groups/g`), 404, 'QUEUE_NOT_FOUND');
  });

  it('pause and resume answer {group, state}; a paused group is skipped while others run', async () => {
    const endpoint = await startEndpoint();
    try {
      const queue = uniqueQueue('gpause');
      // One in flight at a time: if g were not paused, its older job would go first (G5).
      await putQueue(suite.worker, queue, { endpoint: endpoint.url, concurrency: 1, keepCompleted: 10 });
      expect(await expectJson(await api(`/v1/queues/${queue}/groups/g/pause`, { method: 'POST' }), 200)).toEqual({
        group: 'g',
        state: 'paused',
      });
      const { id: gJob } = await enqueue(suite.worker, queue, { group: 'g', data: 'g' });
      const { id: hJob } = await enqueue(suite.worker, queue, { group: 'h', data: 'h' });
      await waitForState(suite.worker, queue, hJob, 'completed');
      expect(endpoint.received.map((r) => r.job.id)).toEqual([hJob]);
      const paused = await expectJson(await api(`/v1/queues/${queue}/groups/g`), 200);
      expect(paused.state).toBe('paused');
      expect(paused.jobs.map((j: { id: string; state: string }) => [j.id, j.state])).toEqual([[gJob, 'waiting']]);
      const listed = await expectJson(await api(`/v1/queues/${queue}/groups`), 200);
      expect(listed.groups).toEqual([{ group: 'g', waiting: 1, active: 0, state: 'paused', concurrency: 1 }]);

      const resumed = await expectJson(await api(`/v1/queues/${queue}/groups/g/resume`, { method: 'POST' }), 200);
      expect(resumed.group).toBe('g');
      expect(['ready', 'active']).toContain(resumed.state);
      await endpoint.waitFor(2);
      expect(endpoint.received.map((r) => r.job.id)).toEqual([hJob, gJob]);
    } finally {
      await endpoint.close();
    }
  });
});

describe('group limits', () => {
  it('PUT answers 200 {group, limits} and replaces them; GET group and GET groups show them; DELETE answers 204', async () => {
    const queue = uniqueQueue('glimits');
    await pausedQueue(suite.worker, queue, { groupConcurrency: 2, groupRateLimit: { max: 5, periodMs: 1000 } });
    await enqueue(suite.worker, queue, { group: 'g' });
    const limitsOf = `/v1/queues/${queue}/groups/g/limits`;
    const group = async () => expectJson(await api(`/v1/queues/${queue}/groups/g`), 200);
    expect(await group()).toMatchObject({ limits: null, concurrency: 2 });

    const both = { concurrency: 4, rateLimit: { max: 10, periodMs: 60_000 } };
    expect(await expectJson(await api(limitsOf, { method: 'PUT', json: both }), 200)).toEqual({ group: 'g', limits: both });
    expect(await group()).toMatchObject({ limits: both, active: 0, concurrency: 4 });
    expect((await expectJson(await api(`/v1/queues/${queue}/groups`), 200)).groups).toEqual([
      { group: 'g', waiting: 1, active: 0, state: 'ready', concurrency: 4 },
    ]);

    // A second PUT replaces the whole: the concurrency it leaves out is the queue's again.
    expect(await expectJson(await api(limitsOf, { method: 'PUT', json: { rateLimit: null } }), 200)).toEqual({
      group: 'g',
      limits: { rateLimit: null },
    });
    expect(await group()).toMatchObject({ limits: { rateLimit: null }, concurrency: 2 });

    expect((await api(limitsOf, { method: 'DELETE' })).status).toBe(204);
    expect((await api(limitsOf, { method: 'DELETE' })).status).toBe(204);
    expect(await group()).toMatchObject({ limits: null, concurrency: 2 });
  });

  it('limits are kept while the group has no jobs, and deleted with the queue', async () => {
    const queue = uniqueQueue('glimitskept');
    await pausedQueue(suite.worker, queue);
    await expectJson(await api(`/v1/queues/${queue}/groups/later/limits`, { method: 'PUT', json: { concurrency: 3 } }), 200);
    // A group without jobs but with limits is shown, idle.
    expect(await expectJson(await api(`/v1/queues/${queue}/groups/later`), 200)).toEqual({
      group: 'later', state: 'idle', limits: { concurrency: 3 }, active: 0, concurrency: 3, jobs: [],
    });
    await enqueue(suite.worker, queue, { group: 'later' });
    expect(await expectJson(await api(`/v1/queues/${queue}/groups/later`), 200)).toMatchObject({ limits: { concurrency: 3 }, concurrency: 3 });

    expect((await api(`/v1/queues/${queue}`, { method: 'DELETE' })).status).toBe(204);
    await pausedQueue(suite.worker, queue);
    await enqueue(suite.worker, queue, { group: 'later' });
    expect(await expectJson(await api(`/v1/queues/${queue}/groups/later`), 200)).toMatchObject({ limits: null, concurrency: 1 });

    // Without jobs and without limits, a group is gone.
    await expectJson(await api(`/v1/queues/${queue}/groups/brief/limits`, { method: 'PUT', json: { concurrency: 2 } }), 200);
    expect((await api(`/v1/queues/${queue}/groups/brief/limits`, { method: 'DELETE' })).status).toBe(204);
    await expectError(await api(`/v1/queues/${queue}/groups/brief`), 404, 'GROUP_NOT_FOUND');
  });
});

describe('repeatable jobs', () => {
  it('PUT with every answers 200 {key, nextRunAt}: now + every, or startAt when given', async () => {
    const queue = uniqueQueue('every');
    await pausedQueue(suite.worker, queue);
    const before = Date.now();
    const res = await api(`/v1/queues/${queue}/repeats/hourly`, { method: 'PUT', json: { group: 'g', data: { k: 1 }, every: 3_600_000 } });
    const body = await expectJson(res, 200);
    const after = Date.now();
    expect(Object.keys(body).sort()).toEqual(['key', 'nextRunAt']);
    expect(body.key).toBe('hourly');
    expect(body.nextRunAt).toBeGreaterThanOrEqual(before + 3_600_000);
    expect(body.nextRunAt).toBeLessThanOrEqual(after + 3_600_000);

    const startAt = Date.now() + 86_400_000;
    const started = await api(`/v1/queues/${queue}/repeats/daily`, { method: 'PUT', json: { group: 'g', every: 60_000, startAt } });
    expect(await expectJson(started, 200)).toEqual({ key: 'daily', nextRunAt: startAt });
  });

  it('PUT with a cron pattern and tz: the next occurrence in that zone', async () => {
    const queue = uniqueQueue('pattern');
    await pausedQueue(suite.worker, queue);
    const res = await api(`/v1/queues/${queue}/repeats/report:weekday`, {
      method: 'PUT',
      json: { group: 'reports', pattern: '0 9 * * 1-5', tz: 'Europe/Berlin' },
    });
    const { nextRunAt } = await expectJson(res, 200);
    expect(nextRunAt).toBeGreaterThan(Date.now());
    expect(nextRunAt).toBeLessThanOrEqual(Date.now() + 4 * 86_400_000);
    const berlin = new Intl.DateTimeFormat('en-GB', {
      timeZone: 'Europe/Berlin',
      weekday: 'short',
      hour: '2-digit',
      minute: '2-digit',
      hourCycle: 'h23',
    }).formatToParts(new Date(nextRunAt));
    const part = (type: string) => berlin.find((p) => p.type === type)?.value;
    expect([part('hour'), part('minute')]).toEqual(['09', '00']);
    expect(['Mon', 'Tue', 'Wed', 'Thu', 'Fri']).toContain(part('weekday'));
  });

  it('GET lists {key, group, every|pattern, tz, nextRunAt, count}; a second PUT replaces the key', async () => {
    const queue = uniqueQueue('replist');
    await pausedQueue(suite.worker, queue);
    await api(`/v1/queues/${queue}/repeats/b`, { method: 'PUT', json: { group: 'g', every: 60_000 } });
    const { nextRunAt } = await expectJson(
      await api(`/v1/queues/${queue}/repeats/b`, { method: 'PUT', json: { group: 'g2', every: 120_000 } }),
      200,
    );
    const cron = await expectJson(
      await api(`/v1/queues/${queue}/repeats/a`, { method: 'PUT', json: { group: 'g', pattern: '*/5 * * * *' } }),
      200,
    );
    const body = await expectJson(await api(`/v1/queues/${queue}/repeats`), 200);
    expect(Object.keys(body)).toEqual(['repeats']);
    expect(body.repeats).toHaveLength(2);
    const byKey = Object.fromEntries(body.repeats.map((r: { key: string }) => [r.key, r]));
    expect(byKey.b).toMatchObject({ key: 'b', group: 'g2', every: 120_000, tz: 'UTC', nextRunAt, count: 0 });
    expect(byKey.b.pattern).toBeUndefined();
    expect(byKey.a).toMatchObject({ key: 'a', group: 'g', pattern: '*/5 * * * *', tz: 'UTC', nextRunAt: cron.nextRunAt, count: 0 });
    expect(byKey.a.every).toBeUndefined();
  });

  it('DELETE answers 204; the key is gone, a second DELETE is 404 REPEAT_NOT_FOUND', async () => {
    const queue = uniqueQueue('repdel');
    await pausedQueue(suite.worker, queue);
    await expectJson(await api(`/v1/queues/${queue}/repeats/k`, { method: 'PUT', json: { group: 'g', every: 60_000 } }), 200);
    const res = await api(`/v1/queues/${queue}/repeats/k`, { method: 'DELETE' });
    expect(res.status).toBe(204);
    expect((await expectJson(await api(`/v1/queues/${queue}/repeats`), 200)).repeats).toEqual([]);
    await expectError(await api(`/v1/queues/${queue}/repeats/k`, { method: 'DELETE' }), 404, 'REPEAT_NOT_FOUND');
  });

  it('a repeat on an unknown queue is 404 QUEUE_NOT_FOUND', async () => {
    const queue = uniqueQueue('repnoq');
    const res = await api(`/v1/queues/${queue}/repeats/k`, { method: 'PUT', json: { group: 'g', every: 60_000 } });
    await expectError(res, 404, 'QUEUE_NOT_FOUND');
    await expectError(await api(`/v1/queues/${queue}/repeats`), 404, 'QUEUE_NOT_FOUND');
  });

  it('a due run becomes the job repeat:{key}:{runAt}, counted; deleting the repeat leaves the run', async () => {
    const queue = uniqueQueue('reprun');
    await pausedQueue(suite.worker, queue);
    const startAt = Date.now();
    const put = await api(`/v1/queues/${queue}/repeats/tick`, {
      method: 'PUT',
      json: { group: 'g', data: { from: 'repeat' }, every: 3_600_000, startAt },
    });
    expect(await expectJson(put, 200)).toEqual({ key: 'tick', nextRunAt: startAt });

    await suite.worker.scheduled();

    const run = await expectJson(await api(`/v1/queues/${queue}/jobs/${encodeURIComponent(`repeat:tick:${startAt}`)}`), 200);
    expect(run).toMatchObject({ group: 'g', data: { from: 'repeat' }, state: 'waiting' });
    const [spec] = (await expectJson(await api(`/v1/queues/${queue}/repeats`), 200)).repeats;
    expect(spec).toMatchObject({ key: 'tick', count: 1, nextRunAt: startAt + 3_600_000 });

    expect((await api(`/v1/queues/${queue}/repeats/tick`, { method: 'DELETE' })).status).toBe(204);
    expect((await expectJson(await api(`/v1/queues/${queue}/jobs/repeat:tick:${startAt}`), 200)).state).toBe('waiting');
  });
});
