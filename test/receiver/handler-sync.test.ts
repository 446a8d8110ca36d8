// createHandler answering synchronously, against the real Worker: the function's result becomes
// the job's result, a throw is a failed attempt with its message, NonRetryableError stops the
// retries, RetryAfterError sets when the next attempt runs, a delivery that fails verification
// is 401 and data that fails `data.parse` is 400 without retries; neither runs the function.
import { Buffer } from 'node:buffer';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createHandler, type Delivery, type JobFunction, NonRetryableError, RetryAfterError } from '../../src/receiver/index';
import { SIGNING_SECRET } from '../helpers/worker';
import { enqueue, getJob, jobInState, putQueue, queueName, quickRetries, useWorker } from '../delivery/support';
import { type Server, serve } from './support';

const OTHER_SECRET = `whsec_${Buffer.from('another-secret-nobody-configured').toString('base64')}`;

describe('createHandler, synchronous answers', () => {
  const env = useWorker();
  const servers: Server[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => s.close()));
  });

  /** A queue whose endpoint runs `fn` through createHandler; the calls to `fn` are counted. */
  async function queueRunning<T>(fn: JobFunction<T>, config: Record<string, unknown> = {}, options: Partial<Parameters<typeof createHandler<T>>[1]> = {}) {
    const runs: Delivery<T>[] = [];
    const server = await serve(
      createHandler<T>(
        (job, ctx) => {
          runs.push(job);
          return fn(job, ctx);
        },
        { secret: SIGNING_SECRET, ...options },
      ),
    );
    servers.push(server);
    const queue = queueName('sync');
    await putQueue(env.worker, queue, { endpoint: server.url, keepCompleted: 10, backoff: quickRetries, ...config });
    return { queue, server, runs };
  }

  it('stores what the function returns as the job result, typed by `data`', async () => {
    const schema = z.object({ a: z.number(), b: z.number() });
    const { queue, server, runs } = await queueRunning((job) => ({ sum: job.data.a + job.data.b, attempt: job.attempt }), {}, { data: schema });
    const { id } = await enqueue(env.worker, queue, { group: 'g', data: { a: 2, b: 3 } });
    const job = await jobInState(env.worker, queue, id, 'completed');
    expect(job).toMatchObject({ attempts: 1, result: { sum: 5, attempt: 1 } });
    expect(server.exchanges.map((e) => e.status)).toEqual([200]);
    expect(runs[0]).toMatchObject({ id, queue, group: 'g', data: { a: 2, b: 3 } });
  });

  it('an undefined result is stored as null; a string as a string', async () => {
    const { queue } = await queueRunning((job) => (job.data === 'say' ? 'said' : undefined));
    const silent = await enqueue(env.worker, queue, { group: 'a', data: 'quiet' });
    const said = await enqueue(env.worker, queue, { group: 'b', data: 'say' });
    expect((await jobInState(env.worker, queue, silent.id, 'completed')).result).toBeNull();
    expect((await jobInState(env.worker, queue, said.id, 'completed')).result).toBe('said');
  });

  it('a throw is a failed attempt with the message; after the last attempt the job is failed', async () => {
    const { queue, server } = await queueRunning<{ n: number }>(async (job) => {
      throw new Error(`upstream said no to ${job.data.n} (attempt ${job.attempt})`);
    }, { maxAttempts: 2 });
    const { id } = await enqueue(env.worker, queue, { group: 'g', data: { n: 7 } });
    const job = await jobInState(env.worker, queue, id, 'failed', { pump: env.worker });
    expect(job).toMatchObject({ attempts: 2, error: 'HTTP 500: upstream said no to 7 (attempt 2)' });
    expect(server.exchanges.map((e) => e.status)).toEqual([500, 500]);
  });

  it('a throw that is not an Error still fails the attempt, with its text', async () => {
    const { queue } = await queueRunning(() => {
      throw 'plain string';
    }, { maxAttempts: 1 });
    const { id } = await enqueue(env.worker, queue, { group: 'g' });
    expect((await jobInState(env.worker, queue, id, 'failed')).error).toBe('HTTP 500: plain string');
  });

  it('NonRetryableError fails the job after one attempt, whatever maxAttempts says', async () => {
    const { queue, server, runs } = await queueRunning(() => {
      throw new NonRetryableError('card declined');
    }, { maxAttempts: 5 });
    const { id } = await enqueue(env.worker, queue, { group: 'g' });
    const job = await jobInState(env.worker, queue, id, 'failed', { pump: env.worker });
    expect(job).toMatchObject({ attempts: 1, error: 'HTTP 500: card declined' });
    expect(runs).toHaveLength(1);
    expect(server.exchanges[0]!.responseHeaders.get('groupq-retry')).toBe('false');
  });

  it('RetryAfterError sets the next attempt that far ahead (in whole seconds), not the backoff', async () => {
    const { queue, server } = await queueRunning(() => {
      throw new RetryAfterError(59_001, 'rate limited');
    }, { maxAttempts: 3 });
    const before = Date.now();
    const { id } = await enqueue(env.worker, queue, { group: 'g' });
    await server.waitFor(1);
    const job = await jobInState(env.worker, queue, id, 'waiting');
    const after = Date.now();
    expect(server.exchanges[0]!.responseHeaders.get('retry-after')).toBe('60');
    expect(job).toMatchObject({ attempts: 1, error: 'HTTP 500: rate limited' });
    // quickRetries would retry at once; Retry-After holds it 60 s from the failure.
    expect(job.runAt).toBeGreaterThanOrEqual(before + 60_000);
    expect(job.runAt).toBeLessThanOrEqual(after + 60_000);
  });

  it('data that fails `data.parse` answers 400 with groupq-retry: false, without running the function', async () => {
    const { queue, server, runs } = await queueRunning(() => 'ran', { maxAttempts: 3 }, { data: z.object({ email: z.email() }) });
    const { id } = await enqueue(env.worker, queue, { group: 'g', data: { email: 'not an address' } });
    const job = await jobInState(env.worker, queue, id, 'failed', { pump: env.worker });
    expect(job.attempts).toBe(1);
    expect(job.error).toBe("HTTP 400: the job's data is not valid: email: Invalid email address");
    expect(server.exchanges[0]!.responseHeaders.get('groupq-retry')).toBe('false');
    expect(runs).toHaveLength(0);
  });

  it('any `{ parse }` works as `data`: its error message is quoted', async () => {
    const positive = {
      parse(value: unknown): number {
        if (typeof value !== 'number' || value <= 0) throw new Error(`expected a positive number, got ${JSON.stringify(value)}`);
        return value;
      },
    };
    const { queue } = await queueRunning((job) => job.data * 2, { maxAttempts: 3 }, { data: positive });
    const good = await enqueue(env.worker, queue, { group: 'a', data: 21 });
    const bad = await enqueue(env.worker, queue, { group: 'b', data: -1 });
    expect((await jobInState(env.worker, queue, good.id, 'completed')).result).toBe(42);
    const failed = await jobInState(env.worker, queue, bad.id, 'failed');
    expect(failed).toMatchObject({ attempts: 1, error: "HTTP 400: the job's data is not valid: expected a positive number, got -1" });
  });

  it('a delivery that fails verification answers 401, a failed attempt, without running the function', async () => {
    const { queue, server, runs } = await queueRunning(() => 'ran', { maxAttempts: 2 }, { secret: OTHER_SECRET });
    const { id } = await enqueue(env.worker, queue, { group: 'g' });
    const job = await jobInState(env.worker, queue, id, 'failed', { pump: env.worker });
    expect(job).toMatchObject({ attempts: 2 });
    expect(job.error).toBe('HTTP 401: no signature matches the signing secret (wrong secret, or the body was changed)');
    expect(server.exchanges.map((e) => e.status)).toEqual([401, 401]);
    expect(runs).toHaveLength(0);
    expect((await getJob(env.worker, queue, id)).result).toBeUndefined();
  });

  it('refuses to build a handler with a malformed secret', () => {
    expect(() => createHandler(() => null, { secret: 'whsec_c2hvcnQ=' })).toThrow(/at least 16 bytes/);
    expect(() => createHandler(() => null, { secret: 'whsec_!!!' })).toThrow(/base64/);
  });
});
