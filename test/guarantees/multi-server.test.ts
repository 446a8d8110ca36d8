// Three `groupq serve` processes (the Node server, dist/server.js) on one redis-server over TCP
// (REDIS_URL), as a team runs several behind a load balancer (docs/self-hosting.md). First the
// run of multi-worker.test.ts (test/helpers/multi-run.ts): 3,000 jobs over 50 groups through the
// three, with retries, hangs, expired leases and async callbacks to any process, judged for G1,
// G2, G3, G4 and G6; here each process runs its own scheduler every second (GROUPQ_CRON) in place
// of the cron this test fires on a Worker, so an expired lease is found by whichever comes first.
// Then the events between processes (src/server/bus.ts, Redis pub/sub): a queue stream on one
// process gets every job's events in order though other processes enqueued, pushed and completed
// them, and a job stream on one process ends with the end another process recorded.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GroupqClient, type QueueClient } from '../../src/client';
import { callback, sleep } from '../delivery/support';
import { type Endpoint, type Received, startEndpoint } from '../helpers/endpoint';
import { checkEventOrder } from '../helpers/event-order-checker';
import { JOBS, MULTI_TEST_LIMIT_MS, runMulti } from '../helpers/multi-run';
import { type ServerProcess, logLinesAt, startServers } from '../helpers/servers';
import { type SseReader, openSse } from '../helpers/sse-reader';
import { ADMIN_TOKEN, type PrivateStack, startPrivateStack } from '../helpers/worker';

const SERVERS = 3;
const auth = { authorization: `Bearer ${ADMIN_TOKEN}` };

let stack: PrivateStack;
let servers: ServerProcess[];
let endpoint: Endpoint;
const readers: SseReader[] = [];

beforeAll(async () => {
  stack = await startPrivateStack();
  // At info, a scheduler run that ticked some queue says so (`scheduled`): each process's is seen at work.
  const settings = { REDIS_URL: `redis://127.0.0.1:${stack.redisPort}`, GROUPQ_CRON: '* * * * * *', GROUPQ_LOG_LEVEL: 'info' };
  servers = await startServers(SERVERS, settings);
  endpoint = await startEndpoint();
});
afterAll(async () => {
  for (const reader of readers) reader.close();
  await endpoint?.close();
  // Each stops as `groupq serve` does on SIGTERM: the work under way ends, and it exits 0.
  const exits = await Promise.all((servers ?? []).map((server) => server.stop()));
  await stack?.close();
  expect(exits).toEqual(exits.map(() => ({ code: 0, signal: null })));
});

/** The queue through server `k`. */
const queueAt = (k: number, name: string): QueueClient => new GroupqClient({ url: servers[k]!.url, token: ADMIN_TOKEN, retries: 0 }).queue(name);

/** A queue stream on server `k`, open (its 200 read) before it returns. */
async function queueStream(k: number, queue: string): Promise<SseReader> {
  const reader = await openSse(`${servers[k]!.url}/v1/queues/${queue}/events`, { headers: auth });
  expect(reader.res.status).toBe(200);
  readers.push(reader);
  return reader;
}

/** The index of the server whose callback URLs a push carries: the one that pushed it. */
const pusherOf = (r: Received) => servers.findIndex((s) => s.url === new URL(r.job.callbacks.complete).origin);

describe(`${SERVERS} groupq serve processes on one Redis over TCP, each with its own scheduler`, () => {
  it(`${JOBS} jobs with retries, hangs, expiries and async callbacks keep G1 G2 G3 G4 G6`, async () => {
    await runMulti(servers.map(({ url }) => ({ url })), { endpoint, queue: 'multi-server', label: 'multi-server' });
    // Nothing failed on the side no answer shows (a scheduler run, a drain after an answer), and
    // each process's scheduler ticked the queue.
    expect(servers.flatMap((server) => logLinesAt(server, 'error'))).toEqual([]);
    for (const server of servers) expect(logLinesAt(server, 'info').filter((line) => line.event === 'scheduled' && Number(line.queues) > 0).length).toBeGreaterThan(0);
  }, MULTI_TEST_LIMIT_MS);

  it('a queue stream on process 0 gets every event, in order per job, of jobs enqueued, pushed and completed through the others', async () => {
    const queue = 'events-across';
    const count = 300;
    await queueAt(0, queue).configure({ endpoint: endpoint.url, keepCompleted: count, maxAttempts: 3, backoff: { type: 'fixed', delayMs: 0 } });
    const reader = await queueStream(0, queue);
    // Every tenth job's first attempt fails (its retry's events are in the order too); every
    // third answers 202 and is completed by a callback to process 2.
    const failsFirst = (r: Received) => (r.job.data as { i: number }).i % 10 === 0 && r.job.attempt === 1;
    const sent: Received[] = [];
    const completions: Promise<void>[] = [];
    /** Jobs pushed by process 1 whose completion went to process 2. */
    const crossed = new Set<string>();
    endpoint.handle((r) => {
      sent.push(r);
      if (failsFirst(r)) return { status: 500, body: 'first try fails' };
      if ((r.job.data as { i: number }).i % 3 !== 0) return { status: 200, body: '{"ok":1}' };
      completions.push(
        (async () => {
          await sleep(5);
          const answer = await callback(`${servers[2]!.url}${new URL(r.job.callbacks.complete).pathname}`, { lease: r.job.lease.token, result: { later: true } });
          expect(answer.status).toBe(200);
          if (pusherOf(r) === 1) crossed.add(r.job.id);
        })(),
      );
      return { status: 202 };
    });
    // Enqueued in batches of 20 over 15 groups, two of every three through process 1, the third through process 2.
    const jobs = Array.from({ length: count }, (_, i) => ({ id: `e${i}`, group: `g${i % 15}`, data: { i } }));
    for (let from = 0, b = 0; from < count; from += 20, b++) await queueAt(b % 3 === 2 ? 2 : 1, queue).addBatch(jobs.slice(from, from + 20));
    const deadline = Date.now() + 60_000;
    const completedRead = () => reader.events.filter((e) => e.type === 'completed').length;
    while (completedRead() < count && Date.now() < deadline) await sleep(100);
    await Promise.all(completions);
    // One moment more, for anything late or repeated to show.
    await sleep(1000);
    expect(await queueAt(1, queue).counts()).toMatchObject({ completed: count, waiting: 0, active: 0 });
    const report = checkEventOrder(reader.events, sent, (r) => (failsFirst(r) ? 500 : 200));
    expect(report).toEqual({ malformed: [], unordered: [], gaps: [], jobs: [], events: 3 * count + 2 * (count / 10) });
    // The streams' process did none of the enqueues, and what the check covered includes jobs
    // pushed by process 1 and completed through process 2.
    expect(crossed.size).toBeGreaterThan(0);
  }, 90_000);

  it('a job stream on process 1 ends with the end that a callback to process 0 recorded for a push of process 2', async () => {
    const queue = 'job-stream-across';
    await queueAt(0, queue).configure({ endpoint: endpoint.url });
    const pushed: Received[] = [];
    endpoint.handle((r) => {
      pushed.push(r);
      return { status: 202 };
    });
    const { id } = await queueAt(2, queue).add({ group: 'g', data: { follow: true } });
    const deadline = Date.now() + 20_000;
    while (pushed.length === 0 && Date.now() < deadline) await sleep(20);
    const push = pushed[0]!;
    expect(push.job.id).toBe(id);
    const reader = await openSse(`${servers[1]!.url}/v1/queues/${queue}/jobs/${id}/events`, { headers: auth });
    readers.push(reader);
    expect(reader.res.status).toBe(200);
    // Its state first: active, in attempt 1.
    const [first] = await reader.waitForEvents(1);
    expect({ type: first!.type, data: JSON.parse(first!.data) }).toMatchObject({ type: 'active', data: { id, attempt: 1, state: 'active' } });
    const answer = await callback(`${servers[0]!.url}${new URL(push.job.callbacks.complete).pathname}`, { lease: push.job.lease.token, result: { done: id } });
    expect(answer.status).toBe(200);
    // The stream ends by itself after the job's end, which is its last event.
    await reader.ended;
    expect(reader.events.map((e) => e.type)).toEqual(['active', 'completed']);
    expect(JSON.parse(reader.events[1]!.data)).toMatchObject({ id, state: 'completed', attempt: 1, result: { done: id } });
  }, 60_000);
});
