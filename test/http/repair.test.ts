// POST /v1/queues/{q}/repair and `groupq repair`, through the Worker against real Redis: a job
// stranded in no index (here a delayed job a failed tick took out of `delayed`, written straight
// to Redis as the old layout left it) comes back; a healthy queue is left as it was.
import { describe, expect, it } from 'vitest';
import { queueKeys } from '../../src/core/store/keys';
import { cli, envFor, json } from '../cli/support';
import { enqueue, expectError, expectJson, pausedQueue, snapshotQueue, uniqueQueue, useHttpSuite } from './support';

const suite = useHttpSuite();

describe('repair', () => {
  it('puts a stranded delayed job back, and changes nothing on a second run', async () => {
    const queue = uniqueQueue('repair');
    await pausedQueue(suite.worker, queue);
    const { id } = await enqueue(suite.worker, queue, { group: 'g', data: 1, delayMs: 600_000 });
    await suite.redis.zrem(queueKeys(queue).delayed, `${id} g`);
    const counts = async () => (await expectJson(await suite.worker.api(`/v1/queues/${queue}`), 200)).counts;
    expect((await counts()).delayed).toBe(0);

    const repaired = await expectJson(await suite.worker.api(`/v1/queues/${queue}/repair`, { method: 'POST' }), 200);
    expect(repaired).toEqual({ reindexed: 1, offered: 0 });
    expect((await counts()).delayed).toBe(1);

    const before = await snapshotQueue(suite.redis, queue);
    expect(await expectJson(await suite.worker.api(`/v1/queues/${queue}/repair`, { method: 'POST' }), 200)).toEqual({ reindexed: 0, offered: 0 });
    expect(await snapshotQueue(suite.redis, queue)).toEqual(before);
  });

  it('is an admin route; an unknown queue is 404', async () => {
    const queue = uniqueQueue('repair');
    await pausedQueue(suite.worker, queue, { publishTokens: ['pub_0123456789abcdef'] });
    const res = await suite.worker.api(`/v1/queues/${queue}/repair`, { method: 'POST', headers: { authorization: 'Bearer pub_0123456789abcdef' } });
    await expectError(res, 401, 'UNAUTHORIZED');
    await expectError(await suite.worker.api('/v1/queues/no-such-queue/repair', { method: 'POST' }), 404, 'QUEUE_NOT_FOUND');
  });

  it('groupq repair prints what it brought back, or the JSON document', async () => {
    const queue = uniqueQueue('cli-repair');
    await pausedQueue(suite.worker, queue);
    const { id } = await enqueue(suite.worker, queue, { group: 'g', data: 1, delayMs: 600_000 });
    await suite.redis.zrem(queueKeys(queue).delayed, `${id} g`);
    const env = envFor(suite.worker);
    expect(await cli(['repair', queue], env)).toEqual({ code: 0, stdout: 're-indexed 1 jobs, offered 0 groups again\n', stderr: '' });
    expect(json(await cli(['repair', queue, '--json'], env))).toEqual({ reindexed: 0, offered: 0 });
  });
});
