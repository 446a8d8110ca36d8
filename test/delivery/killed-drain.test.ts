// G3 across a dead invocation: the Worker that holds a push open is torn down before the endpoint
// answers (the invocation ends, nothing settles the lease). A new Worker on the same Redis leaves
// the job alone while its lease (timeoutMs + 5 s) lasts, then the cron expires the lease and
// redelivers the job as attempt 2; it and the job queued behind it complete. Nothing is lost.
import { afterAll, describe, expect, it } from 'vitest';
import { type Endpoint, startEndpoint } from '../helpers/endpoint';
import { type PrivateStack, type RunningWorker, startPrivateStack, startWorker } from '../helpers/worker';
import { enqueueBatch, getJob, jobInState, putQueue, sleep } from './support';

// Short enough to keep the wait near 7 s, long enough that the dying Worker's own abort timer
// cannot fire (and settle the attempt) before the enqueue's answer arrives and the Worker is torn
// down, even on a loaded machine.
const TIMEOUT_MS = 2000;

describe('a drain killed mid-delivery', () => {
  let stack: PrivateStack;
  let endpoint: Endpoint;
  const workers: RunningWorker[] = [];
  afterAll(async () => {
    await endpoint?.close();
    for (const w of workers) await w.dispose().catch(() => {});
    await stack?.close();
  });

  it('the job is redelivered after its lease expires, and everything completes', async () => {
    stack = await startPrivateStack();
    const first = await startWorker(stack);
    workers.push(first);
    let pushOpened!: () => void;
    const pushOpen = new Promise<void>((resolve) => (pushOpened = resolve));
    endpoint = await startEndpoint((r) => {
      if (r.job.id === 'a' && r.job.attempt === 1) {
        // This push is never answered: the Worker holding it is killed below.
        pushOpened();
        return { hang: true };
      }
      return { status: 200, body: `done ${r.job.id}` };
    });
    await putQueue(first, 'killed', { endpoint: endpoint.url, timeoutMs: TIMEOUT_MS, keepCompleted: 10, backoff: { type: 'fixed', delayMs: 0, jitter: false } });
    await enqueueBatch(first, 'killed', [
      { id: 'a', group: 'g', data: { n: 1 } },
      { id: 'b', group: 'g', data: { n: 2 } },
    ]);
    // Killed once the enqueue has its answer (killing it sooner could cut that answer off).
    await pushOpen;
    await first.dispose();

    const second = await startWorker(stack);
    workers.push(second);
    // Nobody settled the attempt: the job still holds its lease, b waits behind it.
    const held = await getJob(second, 'killed', 'a');
    expect(held).toMatchObject({ state: 'active', attempts: 1 });
    expect(held.error).toBeUndefined();
    expect(held.leaseExpiresAt).toBe(endpoint.received[0]!.job.lease.expiresAt);
    expect(held.leaseExpiresAt! - held.startedAt!).toBe(TIMEOUT_MS + 5000);
    expect((await getJob(second, 'killed', 'b')).state).toBe('waiting');

    // A cron run while the lease lasts changes nothing (one job in flight per group).
    await second.scheduled();
    expect(endpoint.received).toHaveLength(1);
    expect((await getJob(second, 'killed', 'a')).state).toBe('active');

    await sleep(Math.max(0, held.leaseExpiresAt! - Date.now()) + 50);
    await second.scheduled();
    const a = await jobInState(second, 'killed', 'a', 'completed', { pump: second });
    const b = await jobInState(second, 'killed', 'b', 'completed', { pump: second });
    expect(a).toMatchObject({ attempts: 2, result: 'done a' });
    expect(b).toMatchObject({ attempts: 1, result: 'done b' });
    expect(endpoint.received.map((r) => [r.job.id, r.job.attempt])).toEqual([
      ['a', 1],
      ['a', 2],
      ['b', 1],
    ]);
    // The redelivery came only once the lease was over.
    expect(endpoint.received[1]!.at).toBeGreaterThanOrEqual(held.leaseExpiresAt!);
    expect(endpoint.received[1]!.headers['groupq-job-id']).toBe('a');
  });
});
