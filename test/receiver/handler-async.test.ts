// createHandler finishing jobs asynchronously, against the real Worker: 202 at once with
// `async: true`, or when the function would outlive the dispatcher's wait; then heartbeats keep
// the lease (past its first end, with the cron sweeping expired leases meanwhile), progress shows
// on the job, and the complete or fail callback ends it. A lease lost (the queue deleted under
// the job) or a job cancelled aborts ctx.signal and nothing more is sent.
import { afterEach, describe, expect, it } from 'vitest';
import {
  createHandler,
  type HandlerOptions,
  JobCancelledError,
  type JobFunction,
  LeaseLostError,
  NonRetryableError,
  RetryAfterError,
} from '../../src/receiver/index';
import { SIGNING_SECRET } from '../helpers/worker';
import { enqueue, getJob, jobInState, poll, putQueue, queueName, quickRetries, useWorker } from '../delivery/support';
import { gate, type Server, serve, watchedFetch } from './support';

describe('createHandler, asynchronous jobs', () => {
  const env = useWorker();
  const servers: Server[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => s.close()));
  });

  /**
   * A queue whose endpoint runs `fn` through createHandler. Background work is collected through
   * waitUntil (as a serverless host would keep it), callbacks are watched, background errors kept.
   */
  async function queueRunning<T>(fn: JobFunction<T>, config: Record<string, unknown> = {}, options: Partial<HandlerOptions<T>> = {}) {
    const background: Promise<unknown>[] = [];
    const errors: unknown[] = [];
    const watched = watchedFetch();
    const server = await serve(
      createHandler<T>(fn, {
        secret: SIGNING_SECRET,
        waitUntil: (p) => background.push(p),
        onError: (error) => errors.push(error),
        fetch: watched.fetch,
        ...options,
      }),
    );
    servers.push(server);
    const queue = queueName('async');
    await putQueue(env.worker, queue, { endpoint: server.url, keepCompleted: 10, backoff: quickRetries, ...config });
    /** Waits for every background task handed to waitUntil so far. */
    const settled = () => Promise.all(background);
    return { queue, server, calls: watched.calls, errors, settled };
  }

  it('async: true answers 202 at once; progress shows while it runs; complete stores the result', async () => {
    const release = gate();
    const { queue, server, calls, errors, settled } = await queueRunning(
      async (job, ctx) => {
        await ctx.progress({ step: 'fetched', of: 2 });
        await release.wait;
        return { echoed: job.data };
      },
      {},
      { async: true },
    );
    const { id } = await enqueue(env.worker, queue, { group: 'g', data: [1, 2] });
    const [exchange] = await server.waitFor(1);
    // The function is still waiting on the gate: the 202 came before it ended.
    expect(exchange!.status).toBe(202);
    const running = await poll(async () => {
      const job = await getJob(env.worker, queue, id);
      return job.progress === undefined ? undefined : job;
    }, { what: 'progress on the job' });
    expect(running).toMatchObject({ state: 'active', progress: { step: 'fetched', of: 2 } });

    release.open();
    const done = await jobInState(env.worker, queue, id, 'completed');
    expect(done).toMatchObject({ attempts: 1, result: { echoed: [1, 2] } });
    await settled();
    expect(calls).toEqual([
      { kind: 'progress', status: 200 },
      { kind: 'complete', status: 200 },
    ]);
    expect(errors).toEqual([]);
  });

  it('heartbeats keep the job alive past its first lease while the cron sweeps expired leases', async () => {
    const release = gate();
    let seenExpiresAt: number[] = [];
    const { queue, server, calls, errors, settled } = await queueRunning(
      async (job, ctx) => {
        seenExpiresAt.push(ctx.leaseExpiresAt);
        await release.wait;
        seenExpiresAt.push(ctx.leaseExpiresAt);
        return `done after attempt ${job.attempt}`;
      },
      { timeoutMs: 1000, maxAttempts: 3 },
      { async: true },
    );
    const { id } = await enqueue(env.worker, queue, { group: 'g' });
    await server.waitFor(1);
    const firstLeaseEnd = seenExpiresAt[0]!;
    // Past the first lease's end (timeoutMs + 5 s) with heartbeats extending it by timeoutMs
    // (1 s) each; the cron runs all along, so a lapse would retry the job as attempt 2.
    await poll(async () => {
      const job = await getJob(env.worker, queue, id);
      expect(job.state).toBe('active');
      return Date.now() > firstLeaseEnd + 1_500 && job.leaseExpiresAt! > firstLeaseEnd ? job : undefined;
    }, { pump: env.worker, intervalMs: 100, timeoutMs: 20_000, what: 'the job to outlive its first lease' });

    release.open();
    const done = await jobInState(env.worker, queue, id, 'completed', { pump: env.worker });
    expect(done).toMatchObject({ attempts: 1, result: 'done after attempt 1' });
    expect(server.exchanges).toHaveLength(1);
    await settled();
    const heartbeats = calls.filter((c) => c.kind === 'heartbeat');
    expect(heartbeats.length).toBeGreaterThanOrEqual(3);
    expect(heartbeats.every((c) => c.status === 200)).toBe(true);
    expect(calls.at(-1)).toEqual({ kind: 'complete', status: 200 });
    expect(seenExpiresAt[1]).toBeGreaterThan(firstLeaseEnd);
    expect(errors).toEqual([]);
    seenExpiresAt = [];
  });

  it('fail paths: NonRetryableError fails at once, a throw retries, RetryAfterError sets runAt', async () => {
    const { queue, calls, errors, settled } = await queueRunning<{ kind: string }>(
      (job) => {
        if (job.data.kind === 'poison') throw new NonRetryableError('cannot parse invoice');
        if (job.data.kind === 'flaky' && job.attempt === 1) throw new Error('connection reset');
        if (job.data.kind === 'busy') throw new RetryAfterError(120_000, 'quota used up');
        return `ok on attempt ${job.attempt}`;
      },
      { maxAttempts: 3 },
      { async: true },
    );
    const poison = await enqueue(env.worker, queue, { group: 'p', data: { kind: 'poison' } });
    const flaky = await enqueue(env.worker, queue, { group: 'f', data: { kind: 'flaky' } });
    const before = Date.now();
    const busy = await enqueue(env.worker, queue, { group: 'b', data: { kind: 'busy' } });

    expect(await jobInState(env.worker, queue, poison.id, 'failed', { pump: env.worker })).toMatchObject({
      attempts: 1,
      error: 'cannot parse invoice',
    });
    expect(await jobInState(env.worker, queue, flaky.id, 'completed', { pump: env.worker })).toMatchObject({
      attempts: 2,
      result: 'ok on attempt 2',
    });
    const waiting = await poll(async () => {
      const job = await getJob(env.worker, queue, busy.id);
      return job.state === 'waiting' && job.attempts === 1 ? job : undefined;
    }, { what: 'the busy job back in its group' });
    expect(waiting.error).toBe('quota used up');
    expect(waiting.runAt).toBeGreaterThanOrEqual(before + 120_000);
    expect(waiting.runAt).toBeLessThanOrEqual(Date.now() + 120_000);

    await settled();
    expect(calls.filter((c) => c.kind === 'fail')).toEqual([
      { kind: 'fail', status: 200 },
      { kind: 'fail', status: 200 },
      { kind: 'fail', status: 200 },
    ]);
    expect(errors).toEqual([]);
  });

  /**
   * An async job whose function waits for ctx.signal to abort, leased and running; `aborted`
   * waits for the abort, then for the background work, and answers the signal's reason.
   */
  async function runningUntilAborted(config: Record<string, unknown>) {
    let reason: unknown;
    const run = await queueRunning(
      async (_job, ctx) => {
        await new Promise((resolve) => ctx.signal.addEventListener('abort', resolve));
        reason = ctx.signal.reason;
        return 'finished anyway';
      },
      { timeoutMs: 1000, ...config },
      { async: true },
    );
    const { id } = await enqueue(env.worker, run.queue, { group: 'g' });
    await run.server.waitFor(1);
    expect((await getJob(env.worker, run.queue, id)).state).toBe('active');
    const aborted = async () => {
      await poll(async () => reason, { what: 'the signal to abort' });
      await run.settled();
      // Nothing is sent after the refused heartbeat; losing a lease is expected life, not
      // background trouble.
      expect(run.calls.at(-1)).toEqual({ kind: 'heartbeat', status: 409 });
      expect(run.calls.some((c) => c.kind === 'complete' || c.kind === 'fail')).toBe(false);
      expect(run.errors).toEqual([]);
      return reason;
    };
    return { ...run, id, aborted };
  }

  it('a lost lease (the queue deleted under the job) aborts ctx.signal; complete is then not sent', async () => {
    const { queue, id, aborted } = await runningUntilAborted({});
    const deleted = await env.worker.api(`/v1/queues/${queue}`, { method: 'DELETE' });
    expect(deleted.status).toBe(204);
    const reason = await aborted();
    expect(reason).toBeInstanceOf(LeaseLostError);
    expect(reason).not.toBeInstanceOf(JobCancelledError);
    const gone = await env.worker.api(`/v1/queues/${queue}/jobs/${id}`);
    expect(gone.status).toBe(404);
  });

  it('a cancelled job aborts ctx.signal with JobCancelledError at the next heartbeat; nothing more is sent', async () => {
    const { queue, id, aborted } = await runningUntilAborted({ keepFailed: 10 });
    const cancelled = await env.worker.api(`/v1/queues/${queue}/jobs/${id}/cancel`, { method: 'POST' });
    expect(cancelled.status).toBe(200);
    const reason = await aborted();
    expect(reason).toBeInstanceOf(JobCancelledError);
    expect(reason).toBeInstanceOf(LeaseLostError);
    expect(await getJob(env.worker, queue, id)).toMatchObject({ state: 'cancelled', attempts: 1 });
  });

  it("without async, a function about to outlive the dispatcher's wait is switched to 202 and finished by callbacks", async () => {
    const release = gate();
    const { queue, server, calls, errors, settled } = await queueRunning(
      async (_job, ctx) => {
        await ctx.progress(10);
        await release.wait;
        return 'slow but done';
      },
      { timeoutMs: 2000, maxAttempts: 1 },
    );
    const { id } = await enqueue(env.worker, queue, { group: 'g' });
    const [exchange] = await server.waitFor(1);
    expect(exchange!.status).toBe(202);
    release.open();
    const done = await jobInState(env.worker, queue, id, 'completed', { pump: env.worker });
    expect(done).toMatchObject({ attempts: 1, result: 'slow but done', progress: 10 });
    expect(done.error).toBeUndefined();
    await settled();
    expect(calls[0]).toEqual({ kind: 'progress', status: 200 });
    expect(calls.at(-1)).toEqual({ kind: 'complete', status: 200 });
    expect(server.exchanges).toHaveLength(1);
    expect(errors).toEqual([]);
  });
});
