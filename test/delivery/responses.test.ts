// How the endpoint's answer decides a job's fate (docs/delivery.md): 2xx completes
// with the body as result (JSON parsed, text kept, empty null, over 64 KiB truncated and marked),
// any other status is a failed attempt quoting the body, retried until maxAttempts unless the
// endpoint says `groupq-retry: false`; Retry-After sets the next delay; a refused connection and
// an endpoint that does not answer within timeoutMs are failed attempts that say what happened.
import { afterEach, describe, expect, it } from 'vitest';
import { type Endpoint, type Handler, startEndpoint } from '../helpers/endpoint';
import { enqueue, getJob, jobInState, putQueue, queueName, quickRetries, useWorker } from './support';

describe('what the endpoint answers', () => {
  const env = useWorker();
  const endpoints: Endpoint[] = [];
  afterEach(async () => {
    await Promise.all(endpoints.splice(0).map((e) => e.close()));
  });

  /** A queue pushing to a fresh endpoint, and one job enqueued to it. */
  async function deliverOne(handler: Handler, config: Record<string, unknown> = {}) {
    const endpoint = await startEndpoint(handler);
    endpoints.push(endpoint);
    const queue = queueName('answer');
    await putQueue(env.worker, queue, { endpoint: endpoint.url, keepCompleted: 100, backoff: quickRetries, ...config });
    const { id } = await enqueue(env.worker, queue, { group: 'g', data: { n: 1 } });
    return { endpoint, queue, id };
  }

  describe('2xx completes the job, the body becomes its result', () => {
    it('a JSON body is parsed', async () => {
      const reply = { ok: true, list: [1, 2, 3], nested: { s: 'ü' } };
      const { queue, id } = await deliverOne(() => ({
        status: 200,
        headers: { 'content-type': 'application/json; charset=utf-8' },
        body: JSON.stringify(reply),
      }));
      const job = await jobInState(env.worker, queue, id, 'completed');
      expect(job.result).toEqual(reply);
      expect(job.resultTruncated).toBeUndefined();
      expect(job.attempts).toBe(1);
    });

    it('a text body stays text', async () => {
      const { queue, id } = await deliverOne(() => ({ status: 200, headers: { 'content-type': 'text/plain' }, body: '{"looks":"like json"}' }));
      expect((await jobInState(env.worker, queue, id, 'completed')).result).toBe('{"looks":"like json"}');
    });

    it('204 and an empty 200 give a null result', async () => {
      const noContent = await deliverOne(() => ({ status: 204 }));
      expect((await jobInState(env.worker, noContent.queue, noContent.id, 'completed')).result).toBeNull();
      const empty = await deliverOne(() => ({ status: 200, headers: { 'content-type': 'application/json' }, body: '' }));
      expect((await jobInState(env.worker, empty.queue, empty.id, 'completed')).result).toBeNull();
    });

    it('a body over 64 KiB is kept as its first 64 KiB of text, marked truncated', async () => {
      // Valid JSON as a whole, declared JSON: its cut-off start is still kept as text.
      const body = JSON.stringify(Array.from({ length: 20_000 }, (_, i) => i));
      expect(body.length).toBeGreaterThan(65_536);
      const { queue, id } = await deliverOne(() => ({ status: 200, headers: { 'content-type': 'application/json' }, body }));
      const job = await jobInState(env.worker, queue, id, 'completed');
      expect(job.result).toBe(body.slice(0, 65_536));
      expect(job.resultTruncated).toBe(true);
    });
  });

  describe('anything else is a failed attempt', () => {
    it('a 500 is retried and, after maxAttempts, fails the job with the start of the body as error', async () => {
      const body = `boom: ${'x'.repeat(2000)}`;
      const { endpoint, queue, id } = await deliverOne(() => ({ status: 500, body }), { maxAttempts: 3 });
      const job = await jobInState(env.worker, queue, id, 'failed', { pump: env.worker });
      expect(endpoint.received.map((r) => r.job.attempt)).toEqual([1, 2, 3]);
      expect(job.attempts).toBe(3);
      expect(job.error).toMatch(/^HTTP 500: boom: x+$/);
      // The start of the body, not all of it.
      expect(job.error!.length).toBeLessThan(body.length);
      expect(`HTTP 500: ${body}`.startsWith(job.error!)).toBe(true);
    });

    it('`groupq-retry: false` fails the job at once, after one attempt', async () => {
      const { endpoint, queue, id } = await deliverOne(
        () => ({ status: 422, headers: { 'groupq-retry': 'false' }, body: 'bad input' }),
        { maxAttempts: 5 },
      );
      const job = await jobInState(env.worker, queue, id, 'failed');
      expect(job).toMatchObject({ attempts: 1, error: 'HTTP 422: bad input' });
      // The scheduler finds nothing left to retry.
      await env.worker.scheduled();
      expect(endpoint.received).toHaveLength(1);
      expect((await getJob(env.worker, queue, id)).state).toBe('failed');
    });

    it('Retry-After in seconds sets the next delay, and the attempt counts', async () => {
      // The queue's own backoff is 0: only Retry-After keeps the second delivery away.
      const { endpoint, queue, id } = await deliverOne(
        (r) => (r.job.attempt === 1 ? { status: 503, headers: { 'retry-after': '1' } } : { status: 200 }),
        { maxAttempts: 2 },
      );
      const held = await heldForRetry(queue, id);
      expect(held.runAt).toBeGreaterThanOrEqual(endpoint.received[0]!.at + 1000);
      const job = await jobInState(env.worker, queue, id, 'completed', { pump: env.worker });
      const [first, second] = endpoint.received;
      expect(second!.at - first!.at).toBeGreaterThanOrEqual(1000);
      expect(second!.headers['groupq-attempt']).toBe('2');
      expect(job.attempts).toBe(2);
    });

    it('Retry-After as an HTTP date: the next delivery comes no earlier than that date, and a 429 uses no attempt', async () => {
      let date = '';
      let calls = 0;
      const { endpoint, queue, id } = await deliverOne(() => {
        if (++calls > 1) return { status: 200 };
        date = new Date(Date.now() + 2000).toUTCString();
        return { status: 429, headers: { 'retry-after': date } };
      });
      const job = await jobInState(env.worker, queue, id, 'completed', { pump: env.worker });
      expect(endpoint.received[1]!.at).toBeGreaterThanOrEqual(Date.parse(date));
      expect(endpoint.received.map((r) => r.headers['groupq-attempt'])).toEqual(['1', '1']);
      expect(job.attempts).toBe(1);
    });

    it('a refused connection is a failed attempt whose error names the host and what it did', async () => {
      const closed = await startEndpoint();
      await closed.close();
      const queue = queueName('answer-refused');
      await putQueue(env.worker, queue, { endpoint: closed.url, maxAttempts: 2, backoff: quickRetries, keepCompleted: 10 });
      const { id } = await enqueue(env.worker, queue, { group: 'g', data: null });
      const job = await jobInState(env.worker, queue, id, 'failed', { pump: env.worker });
      expect(job.attempts).toBe(2);
      // The endpoint's host and what it did; workerd tells a refusal from a drop by nothing.
      expect(job.error).toBe(`network error: ${new URL(closed.url).host} refused or dropped the connection`);
    });

    it('no answer within timeoutMs fails the attempt with "timeout after <ms> ms", and it is retried', async () => {
      const { endpoint, queue, id } = await deliverOne(() => ({ hang: true }), { timeoutMs: 500, maxAttempts: 2 });
      const job = await jobInState(env.worker, queue, id, 'failed', { pump: env.worker });
      expect(endpoint.received.map((r) => r.job.attempt)).toEqual([1, 2]);
      expect(job).toMatchObject({ attempts: 2, error: 'timeout after 500 ms' });
    });
  });

  /**
   * The job between its failed first attempt and the retry (waiting, held until runAt), seen
   * without firing the cron (which would release it once due).
   */
  async function heldForRetry(queue: string, id: string) {
    for (let i = 0; i < 400; i++) {
      const job = await getJob(env.worker, queue, id);
      if (job.state === 'waiting' && job.error !== undefined) return job;
      if (job.state === 'completed' || job.state === 'failed') throw new Error(`job ${id} is already ${job.state}`);
      await new Promise((r) => setTimeout(r, 25));
    }
    throw new Error(`job ${id} never waited for its retry`);
  }
});
