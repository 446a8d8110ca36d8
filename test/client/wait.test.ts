// groupq/client waiting for jobs against the real Worker: addAndWait gives the finished job with
// its result, also on a queue that keeps no completed jobs (keepResult), waitForJob gives the job
// as it is when its timeout runs out, and a completed job no one kept is JOB_NOT_FOUND. A wait
// opens the job's event stream and reads the job once at its end (issue 30; the polling of a
// Worker without streams is in events.test.ts).
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import { GroupqClient } from '../../src/client';
import { type Endpoint, startEndpoint } from '../helpers/endpoint';
import { ADMIN_TOKEN } from '../helpers/worker';
import { caught } from './support';
import { uniqueQueue, useHttpSuite } from '../http/support';

const suite = useHttpSuite();
let completing: Endpoint;
beforeAll(async () => {
  completing = await startEndpoint((received) => ({ headers: { 'content-type': 'application/json' }, body: JSON.stringify({ got: received.job.data }) }));
});
afterAll(() => completing?.close());

/** A client whose requests are noted as "METHOD path?query". */
function watchedClient() {
  const sent: string[] = [];
  const client = new GroupqClient({
    url: suite.worker.url,
    token: ADMIN_TOKEN,
    fetch: (input, init) => {
      const url = new URL(String(input));
      sent.push(`${init?.method} ${url.pathname}${url.search}`);
      return fetch(input, init);
    },
  });
  return { client, sent };
}

describe('groupq/client waits', () => {
  it('addAndWait enqueues and answers the completed job with its result', async () => {
    const { client, sent } = watchedClient();
    // queue<Data, Result>: the result is typed as the endpoint answers it.
    const q = client.queue<{ n: number }, { got: { n: number } }>(uniqueQueue('client-wait'));
    await q.configure({ endpoint: completing.url, keepCompleted: 10 });
    const job = await q.addAndWait({ group: 'g', id: 'w1', data: { n: 7 } }, { timeoutMs: 20_000 });
    expect(job).toMatchObject({ id: 'w1', state: 'completed', result: { got: { n: 7 } } });
    expectTypeOf(job.result).toEqualTypeOf<{ got: { n: number } } | undefined>();
    expect(job.result?.got.n).toBe(7);
    expect(sent.slice(-2)).toEqual([`GET /v1/queues/${q.name}/jobs/w1/events`, `GET /v1/queues/${q.name}/jobs/w1`]);
  });

  it('waitForJob answers the job as it is when timeoutMs runs out', async () => {
    const { client, sent } = watchedClient();
    const q = client.queue(uniqueQueue('client-wait-late'));
    await q.configure({ endpoint: completing.url });
    await q.pause();
    await q.add({ group: 'g', id: 'held' });
    sent.length = 0;
    const start = Date.now();
    expect(await q.waitForJob('held', { timeoutMs: 1_200 })).toMatchObject({ id: 'held', state: 'waiting' });
    expect(Date.now() - start).toBeGreaterThanOrEqual(1_150);
    expect(sent).toEqual([`GET /v1/queues/${q.name}/jobs/held/events`, `GET /v1/queues/${q.name}/jobs/held`]);
  });

  it('addAndWait on a queue with default settings (keepCompleted 0) answers the result, many times over', async () => {
    const q = new GroupqClient({ url: suite.worker.url, token: ADMIN_TOKEN }).queue<{ n: number }, { got: { n: number } }>(uniqueQueue('client-wait-default'));
    await q.configure({ endpoint: completing.url });
    // Jobs that complete straight from their enqueue, and in groups busy with others.
    const jobs = await Promise.all(Array.from({ length: 12 }, (_, n) => q.addAndWait({ group: `g${n % 3}`, data: { n } }, { timeoutMs: 20_000 })));
    jobs.forEach((job, n) => expect(job).toMatchObject({ state: 'completed', result: { got: { n } } }));
    // Kept for the waiter, not as a completed job of the queue.
    expect((await q.listJobs({ state: 'completed' })).jobs).toEqual([]);
    expect((await q.get()).counts).toMatchObject({ waiting: 0, completed: 0 });
  });

  it('a completed job added without keepResult on such a queue is gone when it finishes: JOB_NOT_FOUND', async () => {
    const q = new GroupqClient({ url: suite.worker.url, token: ADMIN_TOKEN }).queue(uniqueQueue('client-wait-gone'));
    await q.configure({ endpoint: completing.url, keepCompleted: 0 });
    const { id } = await q.add({ group: 'g' });
    expect(await caught(q.waitForJob(id, { timeoutMs: 20_000 }))).toMatchObject({ code: 'JOB_NOT_FOUND', status: 404 });
  });
});
