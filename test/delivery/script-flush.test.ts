// SCRIPT FLUSH while jobs flow through the Worker: every script call after it meets NOSCRIPT, and
// the Worker's Redis client must fall back to EVAL. Deliveries keep going, nothing is stuck or
// lost, every job completes exactly once and each group keeps its order.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRespClient } from '../../scripts/resp.mjs';
import { type Endpoint, startEndpoint } from '../helpers/endpoint';
import { type JobInput, enqueueBatch, putQueue, queueName, sleep, useWorker } from './support';

const JOBS = 300;
const GROUPS = 10;

/** How many EVAL commands the server has run (INFO commandstats). */
async function evalCalls(redis: ReturnType<typeof createRespClient>): Promise<number> {
  const info = String(await redis.call(['INFO', 'commandstats']));
  return Number(/cmdstat_eval:calls=(\d+)/.exec(info)?.[1] ?? 0);
}

/** Every this many deliveries, the endpoint flushes the scripts before it answers. */
const FLUSH_EVERY = 30;

describe('SCRIPT FLUSH in the middle of deliveries', () => {
  const env = useWorker();
  let endpoint: Endpoint;
  /** Set by the test: a flush the endpoint awaits mid-flow. */
  let flushFromEndpoint: (() => Promise<void>) | null = null;
  beforeAll(async () => {
    endpoint = await startEndpoint(async (r) => {
      // A flush while this delivery waits for its answer hits the flow on any machine, however
      // fast it delivers (the background flusher alone could miss a flow that ends in 15 ms).
      if (flushFromEndpoint && endpoint.received.length % FLUSH_EVERY === 0) await flushFromEndpoint();
      return { status: 200, delayMs: r.job.attempt === 1 ? Number(r.job.id.slice(4)) % 4 : 0 };
    });
  });
  afterAll(() => endpoint?.close());

  it('every job still completes, once, in group order', async () => {
    const { worker, stack } = env;
    const queue = queueName('flush');
    await putQueue(worker, queue, { endpoint: endpoint.url, concurrency: 8, keepCompleted: 10_000, backoff: { type: 'fixed', delayMs: 0, jitter: false } });
    const redis = createRespClient({ port: stack.redisPort });
    const evalsBefore = await evalCalls(redis);
    let flushes = 0;
    let flushedMidFlow = 0;
    let flowing = true;
    flushFromEndpoint = async () => {
      await redis.call(['SCRIPT', 'FLUSH']);
      flushes++;
      if (endpoint.received.length < JOBS) flushedMidFlow++;
    };
    // Flushes the script cache over and over while jobs are enqueued and delivered.
    const flusher = (async () => {
      while (flowing) {
        await redis.call(['SCRIPT', 'FLUSH']);
        flushes++;
        if (endpoint.received.length > 0 && endpoint.received.length < JOBS) flushedMidFlow++;
        await sleep(15);
      }
    })();
    try {
      const jobs: JobInput[] = Array.from({ length: JOBS }, (_, i) => ({ id: `job-${i}`, group: `g${i % GROUPS}`, data: { i } }));
      for (let i = 0; i < JOBS; i += 50) await enqueueBatch(worker, queue, jobs.slice(i, i + 50));
      const deadline = Date.now() + 30_000;
      let counts: Record<string, number> = {};
      for (;;) {
        counts = ((await (await worker.api(`/v1/queues/${queue}`)).json()) as { counts: Record<string, number> }).counts;
        if (counts.completed === JOBS) break;
        if (Date.now() > deadline) throw new Error(`stuck: ${JSON.stringify(counts)}`);
        await worker.scheduled();
        await sleep(20);
      }
      expect(counts).toMatchObject({ waiting: 0, delayed: 0, active: 0, failed: 0, completed: JOBS });
      // The fallback really ran: scripts were sent in full again after the flushes.
      expect((await evalCalls(redis)) - evalsBefore).toBeGreaterThan(3);
    } finally {
      flowing = false;
      flushFromEndpoint = null;
      await flusher;
      redis.close();
    }
    // The flushes really hit the flow, not just its edges.
    expect(flushedMidFlow).toBeGreaterThan(3);
    expect(flushes).toBeGreaterThan(flushedMidFlow);

    const ids = endpoint.received.map((r) => r.job.id);
    expect(new Set(ids).size).toBe(JOBS);
    expect(ids).toHaveLength(JOBS);
    for (let g = 0; g < GROUPS; g++) {
      const order = endpoint.received.filter((r) => r.job.group === `g${g}`).map((r) => (r.job.data as { i: number }).i);
      expect(order, `g${g}`).toEqual(Array.from({ length: JOBS / GROUPS }, (_, k) => k * GROUPS + g));
    }
  });
});
