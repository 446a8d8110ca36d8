// The burst of issue 20 against the Worker under Miniflare (test/helpers/burst.ts): every GET
// asked while 1,000 jobs drain gets an answer (no connection reset, no fetch error), every cron
// run ends, every job completes once. test/dev/dev.test.ts runs the same burst on `npm run dev`.
import { describe, expect, it, vi } from 'vitest';
import { BURST_JOBS, runBurst } from '../helpers/burst';
import { startEndpoint } from '../helpers/endpoint';
import { queueName, useWorker } from './support';

// Two bundled batches and a thousand pushes: tens of seconds on a loaded machine.
vi.setConfig({ testTimeout: 240_000 });

describe('a burst of 1,000 jobs', () => {
  const env = useWorker();

  it('drains while every GET gets an answer and every cron run ends; every job completes', async () => {
    const endpoint = await startEndpoint(() => ({ status: 200 }));
    try {
      const { answers, tickErrors, counts } = await runBurst(env.worker, endpoint, queueName('burst'));
      expect(answers.filter((answer) => !('status' in answer) || answer.status !== 200)).toEqual([]);
      expect(answers.length).toBeGreaterThan(1); // GETs were asked while the jobs drained
      expect(tickErrors).toEqual([]);
      // Completed, each once: maxAttempts 1 leaves no second chance to a push that went wrong.
      expect(counts).toMatchObject({ waiting: 0, delayed: 0, active: 0, completed: BURST_JOBS, failed: 0, cancelled: 0 });
      const delivered = endpoint.received.map((r) => r.job.id);
      expect(new Set(delivered).size).toBe(BURST_JOBS);
      expect(delivered.length).toBe(BURST_JOBS);
    } finally {
      await endpoint.close();
    }
  });
});
