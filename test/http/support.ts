// Shared by the HTTP API suites (test/http): a private Redis stack + Worker per file, unique
// queue names, the one error shape, polling GET until a job reaches a state, and a snapshot of
// every Redis key a queue owns (to prove a rejected request wrote nothing).
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect } from 'vitest';
import { REGISTRY_KEY, queueKeys } from '../../src/core/store/keys';
import { createRedis } from '../../src/core/store/redis';
import { type PrivateStack, type RunningWorker, startPrivateStack, startWorker } from '../helpers/worker';

export interface HttpSuite {
  stack: PrivateStack;
  worker: RunningWorker;
  /** The production Redis client on the same stack, for looking behind the API. */
  redis: ReturnType<typeof createRedis>;
}

/**
 * Starts a stack and a Worker for the calling file (beforeAll) and stops them (afterAll). The
 * returned object is filled in once beforeAll has run.
 */
export function useHttpSuite(bindings: Record<string, string> = {}): HttpSuite {
  const suite = {} as HttpSuite;
  beforeAll(async () => {
    suite.stack = await startPrivateStack();
    suite.worker = await startWorker(suite.stack, bindings);
    suite.redis = createRedis({ url: suite.stack.restUrl, token: suite.stack.restToken });
  });
  afterAll(async () => {
    await suite.worker?.dispose();
    await suite.stack?.close();
  });
  return suite;
}

/** A valid queue name no other test uses. */
export function uniqueQueue(prefix: string): string {
  return `${prefix}-${randomBytes(5).toString('hex')}`;
}

export interface ErrorBody {
  error: { code: string; message: string; details?: unknown; requestId: string };
}

/**
 * Asserts the one error shape {"error":{code,message,details?,requestId}} (nothing else at either
 * level, the requestId the answer's x-request-id), the status and the code; returns the body for
 * further checks.
 */
export async function expectError(res: Response, status: number, code: string): Promise<ErrorBody> {
  const text = await res.text();
  expect({ status: res.status, text }).toMatchObject({ status });
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  const body = JSON.parse(text) as ErrorBody;
  expect(Object.keys(body)).toEqual(['error']);
  expect(body.error.code).toBe(code);
  expect(typeof body.error.message).toBe('string');
  expect(body.error.message.length).toBeGreaterThan(0);
  for (const key of Object.keys(body.error)) expect(['code', 'message', 'details', 'requestId']).toContain(key);
  expect(body.error.requestId).toBe(res.headers.get('x-request-id'));
  return body;
}

/** The response's JSON after checking its status (the body is shown when the status is wrong). */
export async function expectJson<T = any>(res: Response, status: number): Promise<T> {
  const text = await res.text();
  expect({ status: res.status, text }).toMatchObject({ status });
  return JSON.parse(text) as T;
}

/** Creates (or replaces) a queue through the API; answers the config as GET shows it. */
export async function putQueue(worker: RunningWorker, name: string, config: Record<string, unknown>) {
  const res = await worker.api(`/v1/queues/${name}`, { method: 'PUT', json: config });
  return expectJson(res, 200);
}

/** A paused queue: jobs stay where the test put them (nothing is dispatched). */
export async function pausedQueue(worker: RunningWorker, name: string, config: Record<string, unknown> = {}) {
  await putQueue(worker, name, { endpoint: 'http://127.0.0.1:9/jobs', ...config });
  await expectJson(await worker.api(`/v1/queues/${name}/pause`, { method: 'POST' }), 200);
}

/** Enqueues one job with the admin token; answers {id, state}. */
export async function enqueue(worker: RunningWorker, queue: string, job: Record<string, unknown>) {
  const res = await worker.api(`/v1/queues/${queue}/jobs`, { method: 'POST', json: job });
  return expectJson<{ id: string; state: string; duplicate?: true }>(res, 201);
}

/** Polls GET job until it is in `state` (deliveries and their outcomes happen after responses). */
export async function waitForState(worker: RunningWorker, queue: string, id: string, state: string, timeoutMs = 15_000) {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    const res = await worker.api(`/v1/queues/${queue}/jobs/${encodeURIComponent(id)}`);
    last = { status: res.status, body: await res.json() };
    if (res.status === 200 && (last as { body: { state: string } }).body.state === state) return (last as { body: any }).body;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`job ${id} never became ${state}; last seen ${JSON.stringify(last)}`);
}

/** A hash as HGETALL answers it (an object, or [field, value, ...]), its fields sorted. */
function byField(hash: unknown): Record<string, unknown> {
  const entries: [string, unknown][] = [];
  if (Array.isArray(hash)) for (let i = 0; i < hash.length; i += 2) entries.push([String(hash[i]), hash[i + 1]]);
  else entries.push(...Object.entries((hash ?? {}) as Record<string, unknown>));
  return Object.fromEntries(entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/**
 * Everything Redis holds for a queue: each of its keys with type and content, and whether the
 * registry lists it. The tick lock is left out: it is a
 * short-lived mutex, not data.
 */
export async function snapshotQueue(redis: HttpSuite['redis'], queue: string): Promise<Record<string, unknown>> {
  const prefix = queueKeys(queue).prefix;
  const keys: string[] = [];
  let cursor = '0';
  do {
    const [next, found] = await redis.scan(cursor, { match: `${prefix}*`, count: 1000 });
    cursor = String(next);
    keys.push(...found);
  } while (cursor !== '0');
  const snapshot: Record<string, unknown> = {};
  for (const key of keys.sort()) {
    if (key === queueKeys(queue).tickLock) continue;
    const type = await redis.type(key);
    // By field: a hash's order is Redis' own, and a hashtable's changes as it rehashes, even on reads.
    if (type === 'hash') snapshot[key] = byField(await redis.hgetall(key));
    else if (type === 'zset') snapshot[key] = await redis.zrange(key, 0, -1, { withScores: true });
    else if (type === 'set') snapshot[key] = (await redis.smembers(key)).sort();
    else snapshot[key] = await redis.get(key);
  }
  snapshot.registered = (await redis.sismember(REGISTRY_KEY, queue)) === 1;
  return snapshot;
}

/**
 * A snapshot once the queue has stopped changing: a request that succeeded may still be running
 * its follow-up (drain, opportunistic tick) after its response. Two equal snapshots in a row.
 */
export async function settledSnapshot(redis: HttpSuite['redis'], queue: string): Promise<Record<string, unknown>> {
  let previous = await snapshotQueue(redis, queue);
  for (let i = 0; i < 100; i++) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    const current = await snapshotQueue(redis, queue);
    if (JSON.stringify(current) === JSON.stringify(previous)) return current;
    previous = current;
  }
  throw new Error(`queue ${queue} never settled`);
}

/** A paused queue (quiet: no background work) for bad requests to bounce off. */
export async function quietQueue(suite: HttpSuite, prefix: string, config: Record<string, unknown> = {}): Promise<string> {
  const queue = uniqueQueue(prefix);
  await pausedQueue(suite.worker, queue, config);
  return queue;
}

/** Sends a request that must be refused with `status`/`code` and must leave `queue` untouched. */
export async function expectRefused(
  suite: HttpSuite,
  queue: string,
  status: number,
  code: string,
  send: () => Promise<Response>,
): Promise<ErrorBody> {
  const before = await settledSnapshot(suite.redis, queue);
  const body = await expectError(await send(), status, code);
  expect(await snapshotQueue(suite.redis, queue)).toEqual(before);
  return body;
}
