// Shared pieces of the delivery suite: one private Redis stack and Worker per test file, queue and
// job calls over the Worker's HTTP API (asserting the status each step relies on), lease
// callbacks as an endpoint makes them, and bounded polling that can drive the cron meanwhile.
import { afterAll, beforeAll, expect } from 'vitest';
import type { Job } from '../../src/protocol/api/types';
import { type PrivateStack, type RunningWorker, startPrivateStack, startWorker } from '../helpers/worker';

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Retries come back at once (no jitter) so a test waits for behaviour, not for backoff. */
export const quickRetries = { type: 'fixed', delayMs: 0, jitter: false } as const;

export interface Env {
  stack: PrivateStack;
  worker: RunningWorker;
}

/**
 * Starts a private stack and a Worker for the calling test file and stops them after it. Read
 * the fields inside tests (they are set in beforeAll).
 */
export function useWorker(bindings: Record<string, string> = {}): Env {
  const env = {} as Env;
  beforeAll(async () => {
    env.stack = await startPrivateStack();
    env.worker = await startWorker(env.stack, bindings);
  });
  afterAll(async () => {
    await env.worker?.dispose();
    await env.stack?.close();
  });
  return env;
}

let queues = 0;
/** A queue name not used before in this process. */
export function queueName(prefix: string): string {
  return `${prefix}-${process.pid}-${++queues}`;
}

export async function putQueue(worker: RunningWorker, name: string, config: Record<string, unknown>): Promise<void> {
  const res = await worker.api(`/v1/queues/${name}`, { method: 'PUT', json: config });
  expect(res.status, await res.clone().text()).toBe(200);
}

export interface JobInput {
  group: string;
  data?: unknown;
  id?: string;
  orderMs?: number;
  [field: string]: unknown;
}

/** Enqueues one job; `body` (raw JSON text) wins over `job` when given. */
export async function enqueue(worker: RunningWorker, queue: string, job: JobInput, body?: string): Promise<{ id: string; state: string }> {
  const res = await worker.api(`/v1/queues/${queue}/jobs`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: body ?? JSON.stringify(job),
  });
  const text = await res.text();
  expect(res.status, text).toBe(201);
  return JSON.parse(text) as { id: string; state: string };
}

/** Enqueues one job and returns the answer whatever its status (201 new, 200 duplicate or debounced). */
export async function enqueueAnswer(
  worker: RunningWorker,
  queue: string,
  job: JobInput,
): Promise<{ status: number; body: { id: string; state: string; duplicate?: true; debounced?: true } }> {
  const res = await worker.api(`/v1/queues/${queue}/jobs`, { method: 'POST', json: job });
  return { status: res.status, body: await res.json() };
}

export async function enqueueBatch(worker: RunningWorker, queue: string, jobs: JobInput[]): Promise<{ id: string; state: string }[]> {
  const res = await worker.api(`/v1/queues/${queue}/jobs/batch`, { method: 'POST', json: { jobs } });
  const text = await res.text();
  expect(res.status, text).toBe(201);
  return (JSON.parse(text) as { jobs: { id: string; state: string }[] }).jobs;
}

/** A job as GET /v1/queues/:q/jobs/:id shows it. */
export type JobView = Job;

export async function getJob(worker: RunningWorker, queue: string, id: string): Promise<JobView> {
  const res = await worker.api(`/v1/queues/${queue}/jobs/${encodeURIComponent(id)}`);
  const text = await res.text();
  expect(res.status, text).toBe(200);
  return JSON.parse(text) as JobView;
}

/** A lease callback as an endpoint sends it: no admin token, the lease in the body. */
export async function callback(url: string, body: unknown): Promise<{ status: number; json: any }> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, json: text === '' ? null : JSON.parse(text) };
}

export interface PollOptions {
  timeoutMs?: number;
  /** Fire the Worker's cron between looks: retries of held groups and expired leases need it. */
  pump?: RunningWorker;
  intervalMs?: number;
  /** Said when the time runs out. */
  what?: string;
}

/** Looks until `check` returns something other than undefined; fails after `timeoutMs`. */
export async function poll<T>(check: () => Promise<T | undefined>, options: PollOptions = {}): Promise<T> {
  const { timeoutMs = 20_000, pump, intervalMs = 25, what = 'the expected state' } = options;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what} after ${timeoutMs} ms`);
    if (pump) await pump.scheduled();
    await sleep(intervalMs);
  }
}

/**
 * The queue's counts once none of its jobs is leased, after a request whose drain leased some.
 * A drain settles its returned pushes and leases the next ready jobs in one script call, as many
 * as its invocation's budget still allows: once nothing is leased, that budget is spent (or
 * nothing is ready) and the drain leases nothing more. Every push it made has then arrived and
 * been answered. A signal of the drain's end, where waiting for a quiet spell would be a guess.
 */
export function countsWhenNoneLeased(worker: RunningWorker, queue: string): Promise<Record<string, number>> {
  return poll(
    async () => {
      const res = await worker.api(`/v1/queues/${queue}`);
      const text = await res.text();
      expect(res.status, text).toBe(200);
      const { counts } = JSON.parse(text) as { counts: Record<string, number> };
      return counts.active === 0 ? counts : undefined;
    },
    { what: `no job of ${queue} leased` },
  );
}

/** Waits until the job is in `state` (pumping the cron if asked) and returns it. */
export function jobInState(worker: RunningWorker, queue: string, id: string, state: string, options: PollOptions = {}): Promise<JobView> {
  return poll(
    async () => {
      const job = await getJob(worker, queue, id);
      return job.state === state ? job : undefined;
    },
    { what: `job ${id} to be ${state}`, ...options },
  );
}
