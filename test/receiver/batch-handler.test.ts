// createBatchHandler on batches signed by the official `standardwebhooks` package. Synchronously:
// every answer shape of the wire contract (all results, none, a partial answer from BatchError
// partway, a throw failing the first job, 429 for a RetryAfterError, a job whose data does not
// parse ending the batch there, results that are not JSON) and each read back with the Worker's
// batchAnswerSchema; refusals (401 forged, 409 replayed, 413 too large). Asynchronously, against a
// real loopback server standing in for groupq's callback routes: 202 at once, heartbeats through
// the first job not yet ended, then complete and fail job by job in group order.
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { batchAnswerSchema } from '../../src/protocol/batch-body';
import {
  type BatchContext,
  BatchError,
  type BatchFunction,
  type BatchHandlerOptions,
  type Delivery,
  LeaseLostError,
  NonRetryableError,
  RetryAfterError,
  createBatchHandler,
} from '../../src/receiver/index';
import { type BatchShape, type CallbackServer, OTHER_SECRET, SECRET, batchBody, callbackServer, poll, post, signedBatch } from './batch-fixtures';
import { gate } from './support';

const fresh = { secret: SECRET, seen: () => false };

/** The answer to a batch of `size` jobs run through `fn`; the jobs the function got; the answer as the Worker reads it. */
async function answer<T>(fn: BatchFunction<T>, size = 3, options: Partial<BatchHandlerOptions<T>> = {}, shape: BatchShape = {}) {
  const runs: Delivery<T>[][] = [];
  const handle = createBatchHandler<T>((jobs, ctx) => {
    runs.push(jobs);
    return fn(jobs, ctx);
  }, { ...fresh, ...options });
  const batch = batchBody(size, shape);
  const response = await handle(post(signedBatch(batch)));
  const text = await response.text();
  // What the Worker reads of a 200 with a body: it must be one of the contract's answer shapes.
  const read = response.status === 200 && text !== '' ? batchAnswerSchema.parse(JSON.parse(text)) : undefined;
  return { batch, status: response.status, headers: response.headers, text, read, runs };
}

describe('createBatchHandler, synchronous answers', () => {
  it('answers every result in order; the function gets the jobs in group order, parsed, and the batch context', async () => {
    let seen: BatchContext | undefined;
    const { batch, status, text, read, runs } = await answer<{ n: number }>(
      (jobs, ctx) => {
        seen = ctx;
        return jobs.map((job) => ({ doubled: job.data.n * 2 }));
      },
      3,
      { data: z.object({ n: z.number() }) },
    );
    expect(status).toBe(200);
    expect(JSON.parse(text)).toEqual({ results: [{ doubled: 0 }, { doubled: 2 }, { doubled: 4 }] });
    expect(read).toEqual({ results: [{ doubled: 0 }, { doubled: 2 }, { doubled: 4 }] });
    expect(runs[0]!.map((job) => job.id)).toEqual(['job-0', 'job-1', 'job-2']);
    expect(seen).toMatchObject({ batchId: batch.id, queue: 'emails', group: 'user:42', leaseExpiresAt: batch.jobs[0]!.lease.expiresAt });
    expect(seen!.signal.aborted).toBe(false);
  });

  it('answers 200 with no body when the function returns nothing: every job completes with null', async () => {
    const { status, text } = await answer(() => {});
    expect(status).toBe(200);
    expect(text).toBe('');
  });

  it('BatchError(k) partway completes jobs 0..k-1 with their results and fails job k', async () => {
    const partial = await answer((jobs) => {
      throw new BatchError(2, new Error('upstream said no'), [jobs[0]!.id, jobs[1]!.id, 'not one of the completed']);
    }, 4);
    expect(partial.status).toBe(200);
    expect(JSON.parse(partial.text)).toEqual({ completed: 2, results: ['job-0', 'job-1'], error: 'upstream said no' });
    expect(partial.read).toEqual({ completed: 2, results: ['job-0', 'job-1'], error: 'upstream said no' });

    const final = await answer(() => {
      throw new BatchError(1, new NonRetryableError('card declined'), ['paid']);
    });
    expect(final.read).toEqual({ completed: 1, results: ['paid'], error: 'card declined', retry: false });

    // At or past the batch's length every job completes, with the results it gave.
    const past = await answer(() => {
      throw new BatchError(3, 'nothing left to fail', [1, 2, 3]);
    });
    expect(past.read).toEqual({ results: [1, 2, 3] });
  });

  it('any other throw fails the first job (completed 0); NonRetryableError for good', async () => {
    const plain = await answer(() => {
      throw new Error('database down');
    });
    expect(plain.read).toEqual({ completed: 0, results: [], error: 'database down' });
    const poison = await answer(async () => {
      throw new NonRetryableError('cannot parse invoice');
    });
    expect(poison.read).toEqual({ completed: 0, results: [], error: 'cannot parse invoice', retry: false });
  });

  it('RetryAfterError answers 429 with Retry-After (whole seconds, rounded up): groupq holds the batch', async () => {
    const held = await answer(() => {
      throw new RetryAfterError(59_001, 'quota used up');
    });
    expect(held.status).toBe(429);
    expect(held.headers.get('retry-after')).toBe('60');
    expect(held.text).toBe('quota used up');
    // For a job past the first the partial answer has no delay to give: that job fails by the backoff.
    const later = await answer(() => {
      throw new BatchError(1, new RetryAfterError(5_000, 'slow down'), ['ok']);
    });
    expect(later.read).toEqual({ completed: 1, results: ['ok'], error: 'slow down' });
  });

  it('data that does not parse at job k: the function runs over jobs 0..k-1 only, then job k fails for good', async () => {
    const schema = z.object({ email: z.email() });
    const valid = (index: number) => (index === 2 ? { email: 'not an address' } : { email: `user${index}@example.com` });
    const atTwo = await answer((jobs) => jobs.map((job) => job.data.email), 4, { data: schema }, { data: valid });
    expect(atTwo.runs.map((jobs) => jobs.map((job) => job.id))).toEqual([['job-0', 'job-1']]);
    expect(atTwo.read).toEqual({
      completed: 2,
      results: ['user0@example.com', 'user1@example.com'],
      error: "the job's data is not valid: email: Invalid email address",
      retry: false,
    });
    // The function's own BatchError before k still decides.
    const earlier = await answer(() => {
      throw new BatchError(1, 'first job was fine, the second not', ['a']);
    }, 4, { data: schema }, { data: valid });
    expect(earlier.read).toEqual({ completed: 1, results: ['a'], error: 'first job was fine, the second not' });
    // At the first job nothing runs.
    const atZero = await answer(() => ['ran'], 3, { data: schema }, { data: () => ({ email: 42 }) });
    expect(atZero.runs).toEqual([]);
    expect(atZero.read).toMatchObject({ completed: 0, results: [], retry: false });
  });

  it('results that are not JSON end the batch at the first such job, for good; a return that is no array fails the first', async () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    const notJson = await answer(() => ['fine', 10n, cyclic]);
    expect(notJson.read).toEqual({ completed: 1, results: ['fine'], error: expect.stringMatching(/^the result is not JSON: /), retry: false });
    const notArray = await answer((() => ({ all: 'done' })) as unknown as BatchFunction<unknown>);
    expect(notArray.read).toEqual({
      completed: 0,
      results: [],
      error: 'the batch function returned object, not an array of results (or nothing)',
      retry: false,
    });
  });

  it('refuses a forged batch (401), a replayed copy (409) and a body past maxBodyBytes (413) without running the function', async () => {
    const runs: string[] = [];
    const handle = createBatchHandler((jobs) => void runs.push(jobs[0]!.id), { secret: SECRET, maxBodyBytes: 4_096 });
    const batch = batchBody(2);
    const forged = await handle(post(signedBatch(batch, { secret: OTHER_SECRET })));
    expect(forged.status).toBe(401);
    expect(await forged.text()).toBe('no signature matches the signing secret (wrong secret, or the body was changed)');
    const genuine = signedBatch(batch);
    expect((await handle(post(genuine))).status).toBe(200);
    const replayed = await handle(post(genuine));
    expect(replayed.status).toBe(409);
    expect(await replayed.text()).toMatch(/^this batch \(webhook-id bat_[0-9a-f]{32}, webhook-timestamp \d+\) was accepted before/);
    const large = await handle(post(signedBatch(batchBody(20))));
    expect(large.status).toBe(413);
    expect(runs).toEqual(['job-0']);
  });

  it('refuses bad options at once', () => {
    expect(() => createBatchHandler(() => {}, { secret: 'whsec_c2hvcnQ=' })).toThrow(/at least 16 bytes/);
    expect(() => createBatchHandler(() => {}, { secret: SECRET, maxDurationMs: 0 })).toThrow(RangeError);
    expect(() => new BatchError(-1, 'x')).toThrow(RangeError);
    expect(() => new BatchError(1.5, 'x')).toThrow(RangeError);
  });
});

describe('createBatchHandler, asynchronous batches', () => {
  const servers: CallbackServer[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => s.close()));
  });

  /**
   * A batch of `size` jobs whose callbacks go to a fresh stand-in for groupq, posted to a handler
   * running `fn`; background work is collected through waitUntil, background errors kept.
   */
  async function runAsync<T>(
    fn: BatchFunction<T>,
    size: number,
    options: Partial<BatchHandlerOptions<T>> = {},
    shape: BatchShape = {},
    stand: Parameters<typeof callbackServer>[0] = {},
  ) {
    const groupq = await callbackServer(stand);
    servers.push(groupq);
    const background: Promise<unknown>[] = [];
    const errors: unknown[] = [];
    const handle = createBatchHandler<T>(fn, {
      ...fresh,
      async: true,
      waitUntil: (p) => background.push(p),
      onError: (error) => errors.push(error),
      ...options,
    });
    const batch = batchBody(size, { origin: groupq.origin, ...shape });
    const response = await handle(post(signedBatch(batch)));
    const settled = async () => {
      await Promise.all(background);
      return groupq.calls.filter((call) => call.kind !== 'heartbeat').map(({ index, kind, body, status }) => ({ index, kind, body, status }));
    };
    return { batch, response, calls: groupq.calls, errors, settled };
  }

  const leaseOf = (batch: ReturnType<typeof batchBody>, index: number) => batch.jobs[index]!.lease.token;

  it('answers 202 at once, then completes every job in order with its own lease token and result', async () => {
    const release = gate();
    const { batch, response, calls, errors, settled } = await runAsync(async (jobs) => {
      await release.wait;
      return jobs.map((job) => `done ${job.id}`);
    }, 3);
    expect(response.status).toBe(202);
    expect(calls).toEqual([]);
    release.open();
    expect(await settled()).toEqual([0, 1, 2].map((index) => ({
      index,
      kind: 'complete',
      body: { lease: leaseOf(batch, index), result: `done job-${index}` },
      status: 200,
    })));
    expect(errors).toEqual([]);
  });

  it('heartbeats go through the first job not yet ended, while the function runs and between the completes', async () => {
    const release = gate();
    // A lease shorter than its grace: the handler heartbeats every 100 ms; each complete takes 250 ms.
    const { calls, errors, settled } = await runAsync(
      async (jobs, ctx) => {
        await ctx.heartbeat(300);
        await release.wait;
        return jobs.map((job) => job.id);
      },
      3,
      {},
      { leaseMs: 1_500 },
      { delayMs: 250 },
    );
    await poll(() => calls.filter((call) => call.kind === 'heartbeat').length >= 3, 'heartbeats while the function runs');
    release.open();
    const ends = await settled();
    expect(ends.map((call) => `${call.kind} ${call.index}`)).toEqual(['complete 0', 'complete 1', 'complete 2']);
    // Every heartbeat went through the job that was next to end when it was sent, and was answered 200.
    let ended = 0;
    for (const call of calls) {
      if (call.kind === 'complete') ended++;
      else expect({ index: call.index, status: call.status }).toEqual({ index: ended, status: 200 });
    }
    expect(calls[0]).toMatchObject({ index: 0, kind: 'heartbeat', body: { extendMs: 300 } });
    // Some heartbeats fell between completes, through jobs 1 and 2.
    expect(new Set(calls.filter((call) => call.kind === 'heartbeat').map((call) => call.index)).size).toBeGreaterThan(1);
    expect(errors).toEqual([]);
  });

  it('BatchError(k): completes jobs 0..k-1, fails job k (retry: false for a NonRetryableError), sends nothing for the rest', async () => {
    const { batch, settled, errors } = await runAsync(() => {
      throw new BatchError(2, new NonRetryableError('card declined'), ['a', 'b']);
    }, 5);
    expect(await settled()).toEqual([
      { index: 0, kind: 'complete', body: { lease: leaseOf(batch, 0), result: 'a' }, status: 200 },
      { index: 1, kind: 'complete', body: { lease: leaseOf(batch, 1), result: 'b' }, status: 200 },
      { index: 2, kind: 'fail', body: { lease: leaseOf(batch, 2), error: 'card declined', retry: false }, status: 200 },
    ]);
    expect(errors).toEqual([]);
  });

  it('a throw fails the first job; a RetryAfterError carries its delay; data that does not parse fails its job after the ones before', async () => {
    const thrown = await runAsync(() => {
      throw new RetryAfterError(120_000, 'quota used up');
    }, 3);
    expect(await thrown.settled()).toEqual([
      { index: 0, kind: 'fail', body: { lease: leaseOf(thrown.batch, 0), error: 'quota used up', retryAfterMs: 120_000 }, status: 200 },
    ]);
    const parsed = await runAsync(
      (jobs) => jobs.map((job) => job.data.n),
      3,
      { data: z.object({ n: z.number().max(0) }) },
    );
    expect(await parsed.settled()).toEqual([
      { index: 0, kind: 'complete', body: { lease: leaseOf(parsed.batch, 0), result: 0 }, status: 200 },
      {
        index: 1,
        kind: 'fail',
        body: { lease: leaseOf(parsed.batch, 1), error: "the job's data is not valid: n: Too big: expected number to be <=0", retry: false },
        status: 200,
      },
    ]);
  });

  it('a result groupq refuses fails that job for good, saying why, and ends the batch there', async () => {
    const { batch, settled, errors } = await runAsync(
      () => ['small', 'x'.repeat(100), 'never sent'],
      3,
      {},
      {},
      {
        refuse: ({ index, kind }) =>
          index === 1 && kind === 'complete' ? Response.json({ error: { code: 'RESULT_TOO_LARGE', message: 'the result is over 64 KiB' } }, { status: 413 }) : undefined,
      },
    );
    const ends = await settled();
    expect(ends.map((call) => `${call.kind} ${call.index} ${call.status}`)).toEqual(['complete 0 200', 'complete 1 413', 'fail 1 200']);
    expect(ends[2]!.body).toEqual({
      lease: leaseOf(batch, 1),
      error: expect.stringMatching(/^the result was not accepted: .*HTTP 413: the result is over 64 KiB$/),
      retry: false,
    });
    expect(errors).toEqual([]);
  });

  it('a lost lease aborts ctx.signal with LeaseLostError; no job is ended after it', async () => {
    let reason: unknown;
    const { calls, settled, errors } = await runAsync(
      async (_jobs, ctx) => {
        await new Promise((resolve) => ctx.signal.addEventListener('abort', resolve));
        reason = ctx.signal.reason;
        return ['finished anyway'];
      },
      2,
      {},
      { leaseMs: 1_500 },
      { refuse: ({ kind }) => (kind === 'heartbeat' ? Response.json({ error: { code: 'LEASE_LOST', message: 'the lease is gone' } }, { status: 409 }) : undefined) },
    );
    await poll(() => reason !== undefined, 'the signal to abort');
    expect(await settled()).toEqual([]);
    expect(reason).toBeInstanceOf(LeaseLostError);
    expect(calls).toEqual([{ index: 0, kind: 'heartbeat', body: { lease: expect.any(String) }, status: 409 }]);
    expect(errors).toEqual([]);
  });

  it("without async, a batch about to outlive the dispatcher's wait is switched to 202 and ended by callbacks", async () => {
    const { response, settled } = await runAsync(
      async (jobs) => {
        await new Promise((resolve) => setTimeout(resolve, 2_000));
        return jobs.map(() => 'slow but done');
      },
      2,
      { async: false },
      // The lease: its 5 s grace and about a second of wait for the answer.
      { leaseMs: 6_500 },
    );
    expect(response.status).toBe(202);
    expect((await settled()).map((call) => `${call.kind} ${call.index}`)).toEqual(['complete 0', 'complete 1']);
  });
});
