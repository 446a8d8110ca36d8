// Outcome callbacks survive what jobs survive: the outcome is recorded by the script call that
// ends the job, so a Worker killed while sending it, or a Redis killed (SIGKILL) and restarted
// from its append-only file while it waits for a retry, leaves it pending, and the cron of a
// Worker sends it again. Real Workers in workerd, a real callback server on loopback.
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort, startRedis } from '../../scripts/redis-server.mjs';
import { startBridge } from '../../scripts/rest-bridge.mjs';
import { getJob, poll, putQueue, enqueue, sleep } from '../delivery/support';
import { type Endpoint, startEndpoint } from '../helpers/endpoint';
import { type PrivateStack, type RunningWorker, startPrivateStack, startWorker } from '../helpers/worker';

type RedisProcess = Awaited<ReturnType<typeof startRedis>>;

const cleanups: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {});
});

/** Waits until the job's outcome is in `state`, firing the cron between looks. */
function outcomeIn(worker: RunningWorker, queue: string, id: string, state: string) {
  return poll(
    async () => {
      const job = await getJob(worker, queue, id);
      return job.outcome?.state === state ? job : undefined;
    },
    { pump: worker, intervalMs: 200, timeoutMs: 30_000, what: `the outcome of ${id} to be ${state}` },
  );
}

describe('outcome callbacks across failures', () => {
  it('a Worker killed while sending one: the next Worker sends it again once its lease is over', async () => {
    const stack = await startPrivateStack();
    cleanups.push(() => stack.close());
    const first = await startWorker(stack);
    cleanups.push(() => first.dispose());
    let opened!: () => void;
    const sending = new Promise<void>((resolve) => (opened = resolve));
    const callback: Endpoint = await startEndpoint((r) => {
      if (callback.received.length > 1) return { status: 204 };
      opened(); // the first attempt: never answered, its Worker is killed below
      return { hang: true };
    });
    cleanups.push(() => callback.close());
    const endpoint = await startEndpoint();
    cleanups.push(() => endpoint.close());
    await putQueue(first, 'killed', { endpoint: endpoint.url, callbackUrl: callback.url, keepCompleted: 10 });
    const { id } = await enqueue(first, 'killed', { group: 'g' });
    await sending;
    await first.dispose();

    const second = await startWorker(stack);
    cleanups.push(() => second.dispose());
    const job = await getJob(second, 'killed', id);
    expect(job).toMatchObject({ state: 'completed', outcome: { state: 'pending', attempts: 1 } });
    await second.scheduled(); // its lease still holds: nothing is sent
    expect(callback.received).toHaveLength(1);

    await sleep(Math.max(0, job.outcome!.nextAttemptAt! - Date.now()) + 50);
    const done = await outcomeIn(second, 'killed', id, 'delivered');
    expect(done.outcome).toMatchObject({ attempts: 2 });
    // One message sent twice: the same webhook-id, to dedupe on.
    const [once, again] = callback.received.map((r) => r.headers['webhook-id']);
    expect(once).toMatch(/^out_[0-9a-f]{32}$/);
    expect(again).toBe(once);
    expect(callback.received[1]!.rawBody).toBe(callback.received[0]!.rawBody);
  });

  it('Redis killed and restarted from its AOF while an outcome waits for its retry: it is sent afterwards', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'groupq-outcomes-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const port = await freePort();
    // Every acknowledged write is on disk before the reply: a SIGKILL loses nothing acked.
    const durable = () => startRedis({ port, dir, appendonly: true, appendfsync: 'always' });
    let redis: RedisProcess = await durable();
    cleanups.push(() => redis.stop());
    const restToken = randomBytes(16).toString('hex');
    const bridge = await startBridge({ port: 0, redisPort: port, token: restToken });
    cleanups.push(() => bridge.close());
    const stack: PrivateStack = { restUrl: bridge.url, restToken, redisPort: port, close: async () => {} };
    const worker = await startWorker(stack);
    cleanups.push(() => worker.dispose());

    let up = false; // the callback URL refuses until Redis has been restarted
    const callback = await startEndpoint(() => (up ? { status: 204 } : { status: 503, body: 'not yet' }));
    cleanups.push(() => callback.close());
    const endpoint = await startEndpoint();
    cleanups.push(() => endpoint.close());
    await putQueue(worker, 'restart', { endpoint: endpoint.url, callbackUrl: callback.url, keepCompleted: 10 });
    const { id } = await enqueue(worker, 'restart', { group: 'g', data: { n: 1 } });
    const pending = await poll(async () => {
      const job = await getJob(worker, 'restart', id);
      return job.outcome?.lastError ? job : undefined;
    });
    expect(pending.outcome).toMatchObject({ state: 'pending', attempts: 1, lastError: 'HTTP 503: not yet' });

    redis.process.kill('SIGKILL');
    await redis.exited;
    const down = await worker.api(`/v1/queues/restart/jobs/${id}`);
    expect(down.status).toBe(503);
    redis = await durable();
    up = true;

    const done = await outcomeIn(worker, 'restart', id, 'delivered');
    expect(done).toMatchObject({ state: 'completed', outcome: { state: 'delivered', attempts: 2 } });
    expect(callback.received).toHaveLength(2);
    expect(JSON.parse(callback.received[1]!.rawBody)).toMatchObject({ id, state: 'completed', attempts: 1 });
  });
});
