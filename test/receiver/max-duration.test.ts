// createHandler's maxDurationMs, against the real Worker: a job function that never settles is
// given up after maxDurationMs, synchronously (the delivery is answered 500) and after a 202 (the
// fail callback is sent). Either way ctx.signal aborts with a MaxDurationError, the attempt fails
// through the normal path (retried while attempts remain) with an error that says why, and a
// function that settles in time is not touched.
import { afterEach, describe, expect, it } from 'vitest';
import { createHandler, type HandlerOptions, type JobFunction, MaxDurationError } from '../../src/receiver/index';
import { SIGNING_SECRET } from '../helpers/worker';
import { enqueue, jobInState, putQueue, queueName, quickRetries, useWorker } from '../delivery/support';
import { type Server, serve, watchedFetch } from './support';

describe('createHandler, maxDurationMs', () => {
  const env = useWorker();
  const servers: Server[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => s.close()));
  });

  async function queueRunning(fn: JobFunction<unknown>, config: Record<string, unknown>, options: Partial<HandlerOptions<unknown>>) {
    const background: Promise<unknown>[] = [];
    const watched = watchedFetch();
    const server = await serve(
      createHandler(fn, { secret: SIGNING_SECRET, waitUntil: (p) => background.push(p), fetch: watched.fetch, ...options }),
    );
    servers.push(server);
    const queue = queueName('maxduration');
    await putQueue(env.worker, queue, { endpoint: server.url, keepCompleted: 10, backoff: quickRetries, ...config });
    return { queue, server, calls: watched.calls, settled: () => Promise.all(background) };
  }

  /** A job function that never settles, keeping the reason its signal aborted with. */
  function hanging(reasons: unknown[]): JobFunction<unknown> {
    return (_job, ctx) => {
      ctx.signal.addEventListener('abort', () => reasons.push(ctx.signal.reason));
      return new Promise(() => {});
    };
  }

  it('synchronous: a function that never settles fails the attempt with 500, and its signal aborts; attempts go on', async () => {
    const reasons: unknown[] = [];
    const { queue, server } = await queueRunning(hanging(reasons), { maxAttempts: 2 }, { maxDurationMs: 300 });
    const { id } = await enqueue(env.worker, queue, { group: 'g' });
    const failed = await jobInState(env.worker, queue, id, 'failed');
    expect(failed).toMatchObject({ attempts: 2, error: expect.stringContaining('maxDurationMs (300 ms)') });
    expect(server.exchanges.map((e) => e.status)).toEqual([500, 500]);
    expect(reasons).toHaveLength(2);
    expect(reasons[0]).toBeInstanceOf(MaxDurationError);
  });

  it('after a 202: the fail callback reports it and the signal aborts', async () => {
    const reasons: unknown[] = [];
    const { queue, server, calls, settled } = await queueRunning(hanging(reasons), { maxAttempts: 1 }, { async: true, maxDurationMs: 300 });
    const { id } = await enqueue(env.worker, queue, { group: 'g' });
    const failed = await jobInState(env.worker, queue, id, 'failed');
    expect(failed.error).toContain('maxDurationMs (300 ms)');
    expect(server.exchanges.map((e) => e.status)).toEqual([202]);
    await settled();
    expect(calls.filter((c) => c.kind !== 'heartbeat')).toEqual([{ kind: 'fail', status: 200 }]);
    expect(reasons).toEqual([expect.any(MaxDurationError)]);
  });

  it('a function that settles in time completes as usual; its signal never aborts', async () => {
    let signal: AbortSignal | undefined;
    const { queue } = await queueRunning((_job, ctx) => ((signal = ctx.signal), 'done'), {}, { maxDurationMs: 60_000 });
    const { id } = await enqueue(env.worker, queue, { group: 'g' });
    expect((await jobInState(env.worker, queue, id, 'completed')).result).toBe('done');
    expect(signal?.aborted).toBe(false);
  });

  it('refuses a maxDurationMs that is not a positive number', () => {
    for (const maxDurationMs of [0, -1, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => createHandler(() => 1, { secret: SIGNING_SECRET, maxDurationMs })).toThrow(RangeError);
    }
  });
});
