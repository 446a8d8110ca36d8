// The delivery protocol as an endpoint sees it (docs/delivery.md): the request's
// method and headers, the Standard Webhooks signature (one secret, and two during a rotation),
// the percent-encoded group header, the exact body fields, data forwarded as enqueued, and the
// webhook-id that Standard Webhooks makes the key to dedupe on: the same on every attempt of a
// job while the attempt number counts up, and never the same for two jobs (a reused id, the same
// id in two partitions), each attempt verified by the official `standardwebhooks` package.
import { Buffer } from 'node:buffer';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Endpoint, type Received, expectedSignature, startEndpoint } from '../helpers/endpoint';
import { SIGNING_SECRET, type RunningWorker, startWorker } from '../helpers/worker';
import { enqueue, enqueueAnswer, getJob, jobInState, poll, putQueue, queueName, quickRetries, useWorker } from './support';

const NEXT_SECRET = `whsec_${Buffer.from('groupq-test-next-secret-abcdefghij').toString('base64')}`;
const BODY_FIELDS = ['id', 'queue', 'group', 'data', 'attempt', 'maxAttempts', 'orderMs', 'createdAt', 'lease', 'callbacks'];

/** The Standard Webhooks check a receiver makes with one secret: some signature must match. */
function signedWith(secret: string, r: Received): boolean {
  const header = String(r.headers['webhook-signature']);
  const expected = expectedSignature(secret, String(r.headers['webhook-id']), String(r.headers['webhook-timestamp']), r.rawBody);
  return header.split(' ').includes(expected);
}

describe('delivery protocol', () => {
  const env = useWorker();
  let endpoint: Endpoint;
  beforeAll(async () => {
    endpoint = await startEndpoint();
  });
  afterAll(() => endpoint?.close());

  it('POSTs a signed JSON request with the groupq headers and exactly the documented body', async () => {
    const { worker } = env;
    const queue = queueName('proto');
    await putQueue(worker, queue, { endpoint: endpoint.url, maxAttempts: 4, keepCompleted: 10 });
    const group = 'team/a b ü';
    const before = endpoint.received.length;
    const { id } = await enqueue(worker, queue, { group, data: { hello: 'world' }, id: 'proto-1' });
    const [r] = (await endpoint.waitFor(before + 1)).slice(before);

    expect(r!.headers['content-type']).toBe('application/json');
    expect(r!.headers['user-agent']).toMatch(/^groupq\/\d+\.\d+\.\d+/);
    expect(r!.headers['webhook-id']).toMatch(/^msg_[0-9a-f]{32}$/);
    expect(r!.headers['groupq-job-id']).toBe(id);
    const ts = Number(r!.headers['webhook-timestamp']);
    expect(String(ts)).toBe(r!.headers['webhook-timestamp']);
    // Unix seconds (not ms) close to now: receivers reject anything 5 minutes off.
    expect(Math.abs(ts - Date.now() / 1000)).toBeLessThan(60);
    expect(r!.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    expect(r!.headers['webhook-signature']).toBe(expectedSignature(SIGNING_SECRET, String(r!.headers['webhook-id']), String(ts), r!.rawBody));
    expect(r!.headers['groupq-queue']).toBe(queue);
    expect(r!.headers['groupq-group']).toBe(encodeURIComponent(group));
    expect(r!.headers['groupq-group']).toBe('team%2Fa%20b%20%C3%BC');
    expect(r!.headers['groupq-attempt']).toBe('1');

    const job = r!.job;
    expect(Object.keys(job)).toEqual(BODY_FIELDS);
    expect(job).toMatchObject({ id, queue, group, data: { hello: 'world' }, attempt: 1, maxAttempts: 4 });
    expect(r!.headers['groupq-lease-expires-at']).toBe(String(job.lease.expiresAt));
    expect(Object.keys(job.lease).sort()).toEqual(['expiresAt', 'token']);
    expect(job.lease.token).toEqual(expect.any(String));
    expect(job.lease.expiresAt).toBeGreaterThan(job.createdAt);
    expect(Number.isInteger(job.orderMs) && Number.isInteger(job.createdAt)).toBe(true);
    const base = `${worker.url}/v1/queues/${queue}/jobs/${id}`;
    expect(job.callbacks).toEqual({
      heartbeat: `${base}/heartbeat`,
      complete: `${base}/complete`,
      fail: `${base}/fail`,
      progress: `${base}/progress`,
    });
    // What GET shows agrees with what was delivered.
    const stored = await jobInState(worker, queue, id, 'completed');
    expect(stored).toMatchObject({ orderMs: job.orderMs, group, attempts: 1 });
  });

  it('forwards data as it was enqueued: an empty array stays an empty array', async () => {
    const { worker } = env;
    const queue = queueName('proto-data');
    await putQueue(worker, queue, { endpoint: endpoint.url });
    const before = endpoint.received.length;
    const data = '[[],{},"",0,null,false,{"nested":{"list":[],"s":"a\\"b ü"}}]';
    await enqueue(worker, queue, { group: 'g' }, `{"group":"g","data":${data}}`);
    const [empty] = (await endpoint.waitFor(before + 1)).slice(before);
    expect(empty!.rawBody).toContain(`"data":${data},`);
    expect(empty!.job.data).toEqual(JSON.parse(data));
    await enqueue(worker, queue, { group: 'g' }, '{"group":"g","data":[]}');
    const [list] = (await endpoint.waitFor(before + 2)).slice(before + 1);
    expect(list!.rawBody).toContain('"data":[],');
  });

  it('forwards big integers with every digit they were enqueued with', async () => {
    const { worker } = env;
    const queue = queueName('proto-bigint');
    await putQueue(worker, queue, { endpoint: endpoint.url });
    const before = endpoint.received.length;
    // Beyond 2^53: a parse into JS numbers and back would print 12345678901234567000.
    await enqueue(worker, queue, { group: 'g' }, '{"group":"g","data":{"n":12345678901234567891}}');
    const [r] = (await endpoint.waitFor(before + 1)).slice(before);
    expect(r!.rawBody).toContain('"data":{"n":12345678901234567891}');
  });

  it('keeps webhook-id across retries while groupq-attempt counts 1, 2, 3, each attempt verified by standardwebhooks', async () => {
    const { worker } = env;
    const queue = queueName('proto-retry');
    const ep = await startEndpoint((r) => (r.job.attempt < 3 ? { status: 500, body: 'not yet' } : { status: 200 }));
    try {
      await putQueue(worker, queue, { endpoint: ep.url, maxAttempts: 3, backoff: quickRetries, keepCompleted: 10 });
      const { id } = await enqueue(worker, queue, { group: 'g', data: { n: 1 } });
      await jobInState(worker, queue, id, 'completed', { pump: worker });
      expect(ep.received.map((r) => r.headers['groupq-job-id'])).toEqual([id, id, id]);
      const webhookId = ep.received[0]!.headers['webhook-id'];
      expect(webhookId).toMatch(/^msg_[0-9a-f]{32}$/);
      expect(ep.received.map((r) => r.headers['webhook-id'])).toEqual([webhookId, webhookId, webhookId]);
      const official = new Webhook(SIGNING_SECRET);
      for (const r of ep.received) expect(official.verify(r.rawBody, r.headers as Record<string, string>)).toEqual(r.job);
      expect(ep.received.map((r) => r.headers['groupq-attempt'])).toEqual(['1', '2', '3']);
      expect(ep.received.map((r) => r.job.attempt)).toEqual([1, 2, 3]);
      // Each attempt is signed afresh (own timestamp, own lease in the body) and verifies.
      for (const r of ep.received) expect(signedWith(SIGNING_SECRET, r)).toBe(true);
      expect(new Set(ep.received.map((r) => r.job.lease.token)).size).toBe(3);
      expect((await getJob(worker, queue, id)).attempts).toBe(3);
    } finally {
      await ep.close();
    }
  });

  it('gives every job a webhook-id of its own: an id reused after its end, the same id in two partitions, in two queues', async () => {
    const { worker } = env;
    const ep = await startEndpoint();
    try {
      // Reused: nothing remembers the id once its job ended (no kept jobs, no dedup window).
      const reused = queueName('proto-reuse');
      await putQueue(worker, reused, { endpoint: ep.url, keepCompleted: 0, dedupWindowMs: 0 });
      for (let round = 1; round <= 2; round++) {
        await enqueue(worker, reused, { group: 'g', id: 'same' });
        await ep.waitFor(round);
        // Ended and forgotten: the next enqueue of 'same' makes a new job.
        await poll(async () => ((await worker.api(`/v1/queues/${reused}/jobs/same`)).status === 404 ? true : undefined), { pump: worker });
      }
      // Partitioned: 'same' in 16 groups of a queue of 4 partitions is a job in each partition
      // those groups land in (an id is unique within a partition's groups).
      const partitioned = queueName('proto-parts');
      await putQueue(worker, partitioned, { endpoint: ep.url, partitions: 4, concurrency: 8 });
      let created = 0;
      for (let i = 0; i < 16; i++) {
        if ((await enqueueAnswer(worker, partitioned, { group: `g${i}`, id: 'same' })).status === 201) created++;
      }
      expect(created).toBeGreaterThanOrEqual(2);
      const other = queueName('proto-other');
      await putQueue(worker, other, { endpoint: ep.url });
      await enqueue(worker, other, { group: 'g', id: 'same' });

      const received = await ep.waitFor(2 + created + 1);
      expect(received.map((r) => r.job.id)).toEqual(Array(2 + created + 1).fill('same'));
      expect(new Set(received.map((r) => r.headers['webhook-id'])).size).toBe(2 + created + 1);
    } finally {
      await ep.close();
    }
  });

  describe('during a secret rotation (GROUPQ_SIGNING_SECRET_NEXT set)', () => {
    let rotating: RunningWorker;
    beforeAll(async () => {
      rotating = await startWorker(env.stack, { GROUPQ_SIGNING_SECRET_NEXT: NEXT_SECRET });
    });
    afterAll(() => rotating?.dispose());

    it('sends two space-separated signatures, one per secret, each valid', async () => {
      const queue = queueName('proto-rotate');
      await putQueue(rotating, queue, { endpoint: endpoint.url });
      const before = endpoint.received.length;
      await enqueue(rotating, queue, { group: 'g', data: { rotate: true } });
      const [r] = (await endpoint.waitFor(before + 1)).slice(before);
      const ts = String(r!.headers['webhook-timestamp']);
      const id = String(r!.headers['webhook-id']);
      expect(String(r!.headers['webhook-signature']).split(' ')).toEqual([
        expectedSignature(SIGNING_SECRET, id, ts, r!.rawBody),
        expectedSignature(NEXT_SECRET, id, ts, r!.rawBody),
      ]);
      // A receiver that knows only one of the two secrets accepts either way.
      expect(signedWith(SIGNING_SECRET, r!)).toBe(true);
      expect(signedWith(NEXT_SECRET, r!)).toBe(true);
    });
  });
});
