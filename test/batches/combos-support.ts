// Shared by the combos tests (test/batches/combos-*.test.ts: batches combined with every other
// feature): an endpoint on loopback that records every batch delivery with logical stamps of its
// arrival and its answer (one counter, so "answered before the next arrived" is exact, whatever
// the clock), the jobs in flight counted as they arrive, the body's shape checked on each, and
// small queue calls (pause a group, wait with the cron driven) over the Worker's HTTP API.
import type { IncomingHttpHeaders } from 'node:http';
import { expect } from 'vitest';
import { type DeliveredJob, type Reply, type startEndpoint } from '../helpers/endpoint';
import type { RunningWorker } from '../helpers/worker';
import { getJob, poll, putQueue, queueName, quickRetries, sleep } from '../delivery/support';

/** A batch delivery's body (docs/batches.md): the batch's id, its queue and group, its jobs in group order. */
export interface BatchBody {
  id: string;
  queue: string;
  group: string;
  jobs: DeliveredJob[];
}

export interface Delivery {
  body: BatchBody;
  headers: IncomingHttpHeaders;
  /** Stamps of one counter per recorder: arrival, and the answer (set just before it is written). */
  arrived: number;
  answered?: number;
  /** Date.now() at arrival: a lower bound on when the Worker decided to send it. */
  arrivedAt: number;
}

export type Answer = (d: Delivery) => Reply | Promise<Reply>;

export interface Recorder {
  url: string;
  deliveries: Delivery[];
  /** The most jobs that were at the endpoint at once (sum of the sizes of the open deliveries). */
  peakJobs(): number;
  /** Each delivery's job ids, in arrival order. */
  batches(): string[][];
  /** Every delivered job id, in arrival order (a job sent twice is listed twice). */
  delivered(): string[];
  /** The deliveries of `group`, in arrival order. */
  ofGroup(group: string): Delivery[];
  /** Waits until `test` holds of the record, firing the cron meanwhile when `pump` is given. */
  until(test: (deliveries: Delivery[]) => boolean, what: string, pump?: RunningWorker, timeoutMs?: number): Promise<void>;
}

/**
 * A recording endpoint (closed when the test ends: `start` is useEndpointPerTest's). `answer`
 * says what to reply; a `delayMs` it asks for is waited here, so the answer stamp is the real one.
 */
export async function recordBatches(start: typeof startEndpoint, answer: Answer = () => ({})): Promise<Recorder> {
  const deliveries: Delivery[] = [];
  let clock = 0;
  let open = 0;
  let peak = 0;
  const endpoint = await start(async (r) => {
    const d: Delivery = { body: r.job as unknown as BatchBody, headers: r.headers, arrived: ++clock, arrivedAt: r.at };
    deliveries.push(d);
    open += d.body.jobs.length;
    peak = Math.max(peak, open);
    const { delayMs, ...reply } = await answer(d);
    if (delayMs) await sleep(delayMs);
    open -= d.body.jobs.length;
    d.answered = ++clock;
    return reply;
  });
  return {
    url: endpoint.url,
    deliveries,
    peakJobs: () => peak,
    batches: () => deliveries.map((d) => d.body.jobs.map((j) => j.id)),
    delivered: () => deliveries.flatMap((d) => d.body.jobs.map((j) => j.id)),
    ofGroup: (group) => deliveries.filter((d) => d.body.group === group),
    until: (test, what, pump, timeoutMs = 20_000) =>
      poll(async () => (test(deliveries) ? true : undefined), { what, pump, timeoutMs, intervalMs: pump ? 50 : 10 }).then(() => undefined),
  };
}

/**
 * Every delivery of `queue` is a batch body whose headers agree with it: `webhook-id` the body's
 * `bat_` id, size and group hints right, every job of the body's queue and group, all under the
 * one lease deadline the headers name.
 */
export function expectBatchShapes(recorder: Recorder, queue: string): void {
  for (const { body, headers } of recorder.deliveries) {
    const where = `batch ${body.id} (${body.jobs?.map((j) => j.id).join(',')})`;
    expect(body.id, where).toMatch(/^bat_[0-9a-f]{32}$/);
    expect(headers['webhook-id'], where).toBe(body.id);
    expect(body.queue, where).toBe(queue);
    expect(headers['groupq-queue'], where).toBe(queue);
    expect(headers['groupq-group'], where).toBe(encodeURIComponent(body.group));
    expect(headers['groupq-batch-size'], where).toBe(String(body.jobs.length));
    for (const job of body.jobs) {
      expect({ queue: job.queue, group: job.group }, where).toEqual({ queue, group: body.group });
      expect(String(job.lease.expiresAt), where).toBe(headers['groupq-lease-expires-at']);
    }
  }
}

/** A group's deliveries never overlap at the endpoint: each arrived after the one before was answered. */
export function expectOneAtATime(recorder: Recorder, group: string): void {
  const mine = recorder.ofGroup(group);
  for (let i = 1; i < mine.length; i++) {
    const [before, after] = [mine[i - 1]!, mine[i]!];
    expect(before.answered ?? Infinity, `group ${group}: ${after.body.id} arrived while ${before.body.id} was open`).toBeLessThan(after.arrived);
  }
}

/** A queue of its own pushing to `url`: completed jobs kept (their history shows), retries at once. */
export async function batchQueue(worker: RunningWorker, prefix: string, url: string, config: Record<string, unknown>): Promise<string> {
  const queue = queueName(prefix);
  await putQueue(worker, queue, { endpoint: url, keepCompleted: 1000, backoff: quickRetries, ...config });
  return queue;
}

/** Pauses or resumes one group (nothing of it is leased while paused). */
export async function groupAction(worker: RunningWorker, queue: string, group: string, action: 'pause' | 'resume'): Promise<void> {
  const res = await worker.api(`/v1/queues/${queue}/groups/${encodeURIComponent(group)}/${action}`, { method: 'POST' });
  expect(res.status, await res.text()).toBe(200);
}

/** The queue's counts once `test` holds of them, the cron fired between looks. */
export function countsWhen(worker: RunningWorker, queue: string, test: (counts: Record<string, number>) => boolean, what: string) {
  return poll(
    async () => {
      const res = await worker.api(`/v1/queues/${queue}`);
      const { counts } = (await res.json()) as { counts: Record<string, number> };
      return test(counts) ? counts : undefined;
    },
    { pump: worker, intervalMs: 50, what },
  );
}

/** A promise and its resolve, for holding an answer until the test says so. */
export function gate(): { opened: Promise<void>; open(): void } {
  let open = () => {};
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

/** `gate` with a bound: answers once opened, or after `ms` (a test that failed to open it then ends). */
export function within(opened: Promise<void>, ms = 15_000): Promise<void> {
  return Promise.race([opened, sleep(ms)]);
}

export const JSON_REPLY = { 'content-type': 'application/json' };
/** A 2xx answer with a JSON body. */
export const jsonReply = (value: unknown, status = 200): Reply => ({ status, headers: JSON_REPLY, body: JSON.stringify(value) });

/** `n` jobs of `group` with ids `<group>-0`... in order, orderMs `base + i` when `base` is given. */
export const jobsOf = (group: string, n: number, base?: number, extra: Record<string, unknown> = {}) =>
  Array.from({ length: n }, (_, i) => ({ id: `${group}-${i}`, group, data: i, ...(base !== undefined && { orderMs: base + i }), ...extra }));
export const idsOf = (jobs: { id: string }[]) => jobs.map((j) => j.id);

/** No window of `rateLimit.periodMs` holds more than `rateLimit.max` of the jobs' starts, as their attempt histories keep them (the clock the limit is counted on). */
export async function expectStartsWithin(worker: RunningWorker, queue: string, jobs: { id: string }[], rateLimit: { max: number; periodMs: number }): Promise<void> {
  const starts: number[] = [];
  for (const { id } of jobs) {
    const job = await getJob(worker, queue, id);
    expect(job.history, id).toHaveLength(1);
    starts.push(job.history![0]!.startedAt);
  }
  starts.sort((x, y) => x - y);
  const crowded = starts.map((from) => starts.filter((t) => t >= from && t < from + rateLimit.periodMs).length);
  expect(Math.max(...crowded), `starts (ms after the first): ${starts.map((t) => t - starts[0]!)}`).toBeLessThanOrEqual(rateLimit.max);
}
