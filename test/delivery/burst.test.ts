// The burst of issue 20 (docs/internals.md#sharing-the-isolate): 1,000 jobs over 100 groups,
// enqueued in two batches of 500 to a queue whose endpoint answers at once, drain in the Worker's
// background while GET /v1/queues/{queue} is asked every 100 ms and the cron fires every second
// (as `npm run dev`'s ticker does). Every GET gets an answer (no connection reset, no fetch
// error), every cron run ends, every job completes once. How long a GET waited is the bench's to
// measure (`npm run bench`, its burst): a test on a shared machine asserts no timing.
import { describe, expect, it, vi } from 'vitest';
import type { QueueCounts } from '../../src/protocol/api-types';
import { startEndpoint } from '../helpers/endpoint';
import { enqueueBatch, poll, putQueue, queueName, sleep, useWorker } from './support';

// Two bundled batches and a thousand pushes: tens of seconds on a loaded machine.
vi.setConfig({ testTimeout: 240_000 });

const JOBS = 1000;
const GROUPS = 100;
const BATCH = 500;
const GET_EVERY_MS = 100;
const TICK_EVERY_MS = 1000;
/** Turns a GET that never answers into a failure that names it, rather than a test timeout. */
const HANG_MS = 60_000;

type Answer = { status: number; counts?: QueueCounts } | { error: string };

/** What a failed fetch says: its message and the cause's code (ECONNRESET, UND_ERR_SOCKET...). */
function describeError(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  return [error instanceof Error ? error.message : String(error), cause?.code ?? cause?.message].filter(Boolean).join(': ');
}

/** Calls `call` every `everyMs` (each call on its own, not waiting for the one before) until stopped. */
function every<T>(everyMs: number, call: () => Promise<T>) {
  const started: Promise<T>[] = [];
  let running = true;
  const loop = (async () => {
    while (running) {
      started.push(call());
      await sleep(everyMs);
    }
  })();
  return {
    async stop(): Promise<T[]> {
      running = false;
      await loop;
      return Promise.all(started);
    },
  };
}

describe('a burst of 1,000 jobs', () => {
  const env = useWorker();

  it('drains while every GET gets an answer and every cron run ends; every job completes', async () => {
    const endpoint = await startEndpoint(() => ({ status: 200 }));
    try {
      const queue = queueName('burst');
      await putQueue(env.worker, queue, { endpoint: endpoint.url, maxAttempts: 1, keepCompleted: JOBS });
      let last: QueueCounts | undefined;
      const gets = every<Answer>(GET_EVERY_MS, async () => {
        try {
          const res = await env.worker.api(`/v1/queues/${queue}`, { signal: AbortSignal.timeout(HANG_MS) });
          const body = (await res.json()) as { counts?: QueueCounts };
          if (res.status === 200) last = body.counts;
          return { status: res.status, counts: body.counts };
        } catch (error) {
          return { error: describeError(error) };
        }
      });
      const ticks = every(TICK_EVERY_MS, () =>
        env.worker.scheduled().then(
          () => null,
          (error: unknown) => describeError(error),
        ),
      );

      const jobs = Array.from({ length: JOBS }, (_, i) => ({ id: `j${i}`, group: `g${i % GROUPS}`, data: { i } }));
      for (let from = 0; from < JOBS; from += BATCH) await enqueueBatch(env.worker, queue, jobs.slice(from, from + BATCH));
      await poll(async () => (last?.completed === JOBS ? true : undefined), { timeoutMs: 180_000, intervalMs: GET_EVERY_MS, what: 'every job completed' });

      const answers = await gets.stop();
      const tickErrors = (await ticks.stop()).filter((error) => error !== null);
      expect(answers.filter((answer) => 'error' in answer)).toEqual([]);
      expect(answers.filter((answer) => 'status' in answer && answer.status !== 200)).toEqual([]);
      expect(answers.length).toBeGreaterThan(1); // GETs were asked while the jobs drained
      expect(tickErrors).toEqual([]);
      // Completed, each once: maxAttempts 1 leaves no second chance to a push that went wrong.
      expect(last).toMatchObject({ waiting: 0, delayed: 0, active: 0, completed: JOBS, failed: 0, cancelled: 0 });
      const delivered = endpoint.received.map((r) => r.job.id);
      expect(new Set(delivered).size).toBe(JOBS);
      expect(delivered.length).toBe(JOBS);
    } finally {
      await endpoint.close();
    }
  });
});
