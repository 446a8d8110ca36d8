// The stack pieces of the flow-control tests (test/flow): an endpoint that feeds a FlowChecker,
// the cron fired in the background (rate windows, backoffs and Retry-After end on timers that
// only the scheduler releases), and the queue and group-limit calls over the Worker's HTTP API.
import { expect, onTestFinished } from 'vitest';
import { type JobInput, enqueueBatch, poll, putQueue, queueName, sleep } from '../delivery/support';
import { startEndpoint } from './endpoint';
import { FlowChecker, type FlowDelivery } from './flow-checker';
import type { RunningWorker } from './worker';

/** The queues' timeoutMs: no lease expires in these tests. */
export const FLOW_TIMEOUT_MS = 10_000;

export interface FlowAnswer {
  /** @default 200 */
  status?: number;
  headers?: Record<string, string>;
  /** Work this long before answering. */
  delayMs?: number;
  /** Answer once this settles (after delayMs). */
  until?: Promise<unknown>;
}

/**
 * An endpoint on loopback that records each delivery in `checker` as it arrives, and as it is
 * answered (stamped just before the answer is written); closed when the test finishes.
 */
async function startFlowEndpoint(
  checker: FlowChecker,
  answer: (d: FlowDelivery) => FlowAnswer = () => ({}),
): Promise<{ url: string }> {
  const endpoint = await startEndpoint(async (r) => {
    const d = checker.arrived(r);
    const { status = 200, headers, delayMs, until } = answer(d);
    if (delayMs) await sleep(delayMs);
    // A gate that gave up waiting has failed the test already: answer anyway, and quietly.
    await until?.catch(() => undefined);
    checker.answered(d, status);
    return { status, headers };
  });
  onTestFinished(() => endpoint.close());
  return endpoint;
}

/**
 * A queue of its own (`config` over timeoutMs FLOW_TIMEOUT_MS and keepCompleted 10000) pushing
 * to a fresh endpoint and checker, with the cron firing meanwhile. `enqueue` registers jobs in
 * the checker in the order given (each group's order) and enqueues them in one batch.
 */
export async function flowQueue(worker: RunningWorker, config: Record<string, unknown>, answer?: (d: FlowDelivery) => FlowAnswer) {
  const checker = new FlowChecker(FLOW_TIMEOUT_MS);
  const endpoint = await startFlowEndpoint(checker, answer);
  const queue = queueName('flow');
  await putQueue(worker, queue, { endpoint: endpoint.url, timeoutMs: FLOW_TIMEOUT_MS, keepCompleted: 10_000, ...config });
  const ticking = keepTicking(worker);
  const enqueue = (jobs: (JobInput & { id: string })[]) => {
    for (const j of jobs) checker.enqueued(j.id, j.group);
    return enqueueBatch(worker, queue, jobs.map((j) => ({ data: j.id, ...j })));
  };
  return { checker, queue, ticking, enqueue };
}

/**
 * Fires the Worker's cron every `everyMs` until stop(), as the scheduler's stay window does in
 * production; a run still busy with its pushes does not hold up the next (at most 3 at once).
 */
function keepTicking(worker: RunningWorker, everyMs = 25): { stop(): Promise<void> } {
  let running = true;
  const open = new Set<Promise<void>>();
  const errors: unknown[] = [];
  const loop = (async () => {
    while (running) {
      if (open.size < 3) {
        const run: Promise<void> = worker
          .scheduled()
          .catch((error: unknown) => void errors.push(error))
          .finally(() => open.delete(run));
        open.add(run);
      }
      await sleep(everyMs);
    }
  })();
  const stop = async () => {
    running = false;
    await loop;
    await Promise.all(open);
    expect(errors, 'cron runs that failed').toEqual([]);
  };
  onTestFinished(() => (running ? stop() : undefined));
  return { stop };
}

/** Waits until `done()` holds, checking every 10 ms; fails after `timeoutMs`, naming `what`. */
export function until(done: () => boolean, what: string, timeoutMs = 20_000): Promise<true> {
  return poll(async () => (done() ? true : undefined), { what, timeoutMs, intervalMs: 10 });
}

export async function pauseQueue(worker: RunningWorker, queue: string, action: 'pause' | 'resume'): Promise<void> {
  const res = await worker.api(`/v1/queues/${queue}/${action}`, { method: 'POST' });
  expect(res.status, await res.text()).toBe(200);
}

export interface GroupLimits {
  concurrency?: number;
  rateLimit?: { max: number; periodMs: number } | null;
}

/**
 * PUT (or, with null, DELETE) a group's limits; returns when the request was sent and when its
 * answer came (the change applied somewhere in between).
 */
export async function setGroupLimits(worker: RunningWorker, queue: string, group: string, limits: GroupLimits | null) {
  const path = `/v1/queues/${queue}/groups/${encodeURIComponent(group)}/limits`;
  const sentWall = Date.now();
  const res = limits === null ? await worker.api(path, { method: 'DELETE' }) : await worker.api(path, { method: 'PUT', json: limits });
  const returnedWall = Date.now();
  const text = await res.text();
  if (limits === null) expect(res.status, text).toBe(204);
  else {
    expect(res.status, text).toBe(200);
    expect(JSON.parse(text)).toEqual({ group, limits });
  }
  return { sentWall, returnedWall };
}

/** The queue's counts, once the Worker's last settles are in (completed reached `completed`). */
export async function settledCounts(worker: RunningWorker, queue: string, completed: number): Promise<Record<string, number>> {
  return poll(
    async () => {
      const res = await worker.api(`/v1/queues/${queue}`);
      const { counts } = (await res.json()) as { counts: Record<string, number> };
      return counts.completed === completed ? counts : undefined;
    },
    { what: `${completed} jobs completed in the queue's counts` },
  );
}
