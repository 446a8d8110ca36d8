// A signing secret per queue, the kind of message and replays, against the real Worker: a queue
// with its own signingSecret (and signingSecretNext while rotating) signs its deliveries and
// outcome callbacks with it, as the official `standardwebhooks` package verifies, while a queue
// without one keeps the deployment's secret; the secrets never show in the API. An outcome
// callback replayed to a delivery endpoint, or a delivery to an outcome endpoint, is refused
// (wrong_kind). A delivery replayed to createHandler is refused with 409 and runs nothing, by
// the default memory or by a `seen` hook, while a retry of the job (its webhook-id, signed anew)
// runs.
import { Buffer } from 'node:buffer';
import { Webhook } from 'standardwebhooks';
import { afterEach, describe, expect, it } from 'vitest';
import { createHandler, createOutcomeHandler, type Delivery, type OutcomeCallback } from '../../src/receiver/index';
import { type Endpoint, type Received, startEndpoint } from '../helpers/endpoint';
import { SIGNING_SECRET } from '../helpers/worker';
import { enqueue, jobInState, putQueue, queueName, useWorker } from '../delivery/support';
import { type Server, serve } from './support';

const QUEUE_SECRET = `whsec_${Buffer.from('a-secret-of-this-queue-only-0001').toString('base64')}`;
const QUEUE_SECRET_NEXT = `whsec_${Buffer.from('the-next-secret-of-this-queue-02').toString('base64')}`;

/** The webhook headers of a captured request, as standardwebhooks reads them. */
function webhookHeaders(received: Received): Record<string, string> {
  const { 'webhook-id': id, 'webhook-timestamp': timestamp, 'webhook-signature': signature } = received.headers;
  return { 'webhook-id': String(id), 'webhook-timestamp': String(timestamp), 'webhook-signature': String(signature) };
}

/** Whether the official package accepts the captured request with `secret`. */
function verifiesWith(secret: string, received: Received): boolean {
  try {
    new Webhook(secret).verify(received.rawBody, webhookHeaders(received));
    return true;
  } catch {
    return false;
  }
}

/** A captured request sent again, unchanged, to `url`. */
function resend(received: Received, url: string): Promise<Response> {
  return fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...webhookHeaders(received) }, body: received.rawBody });
}

describe('a signing secret per queue', () => {
  const env = useWorker();
  const closing: { close(): Promise<void> }[] = [];
  afterEach(async () => {
    await Promise.all(closing.splice(0).map((s) => s.close()));
  });
  async function capture(): Promise<Endpoint> {
    const endpoint = await startEndpoint(() => ({ status: 200 }));
    closing.push(endpoint);
    return endpoint;
  }

  it("signs a queue's deliveries and outcome callbacks with its own secret, others' with the deployment's", async () => {
    const endpoint = await capture();
    const callbacks = await capture();
    const own = queueName('own-secret');
    const plain = queueName('deployment-secret');
    await putQueue(env.worker, own, { endpoint: endpoint.url, callbackUrl: callbacks.url, signingSecret: QUEUE_SECRET });
    await putQueue(env.worker, plain, { endpoint: endpoint.url, callbackUrl: callbacks.url });
    const a = await enqueue(env.worker, own, { group: 'g', data: 'a' });
    const b = await enqueue(env.worker, plain, { group: 'g', data: 'b' });
    await endpoint.waitFor(2);
    await callbacks.waitFor(2);
    // Told apart by the body's id, which is signed (the groupq-* headers are not).
    const byJob = (received: Received[], id: string) => received.find((r) => JSON.parse(r.rawBody).id === id)!;
    const delivery = (id: string) => byJob(endpoint.received, id);
    const outcome = (id: string) => byJob(callbacks.received, id);

    for (const received of [delivery(a.id), outcome(a.id)]) {
      expect(verifiesWith(QUEUE_SECRET, received)).toBe(true);
      expect(verifiesWith(SIGNING_SECRET, received)).toBe(false);
    }
    for (const received of [delivery(b.id), outcome(b.id)]) {
      expect(verifiesWith(SIGNING_SECRET, received)).toBe(true);
      expect(verifiesWith(QUEUE_SECRET, received)).toBe(false);
    }
  });

  it('while rotating, signs with both secrets; signingSecretNext alone rotates from the deployment secret', async () => {
    const endpoint = await capture();
    const rotating = queueName('rotating');
    await putQueue(env.worker, rotating, { endpoint: endpoint.url, signingSecret: QUEUE_SECRET, signingSecretNext: QUEUE_SECRET_NEXT });
    const leaving = queueName('leaving-deployment');
    await putQueue(env.worker, leaving, { endpoint: endpoint.url, signingSecretNext: QUEUE_SECRET_NEXT });
    const a = await enqueue(env.worker, rotating, { group: 'g' });
    const b = await enqueue(env.worker, leaving, { group: 'g' });
    await endpoint.waitFor(2);
    const first = endpoint.received.find((r) => r.headers['groupq-job-id'] === a.id)!;
    expect(String(first.headers['webhook-signature']).split(' ')).toHaveLength(2);
    expect([QUEUE_SECRET, QUEUE_SECRET_NEXT, SIGNING_SECRET].map((secret) => verifiesWith(secret, first))).toEqual([true, true, false]);
    const second = endpoint.received.find((r) => r.headers['groupq-job-id'] === b.id)!;
    expect([SIGNING_SECRET, QUEUE_SECRET_NEXT, QUEUE_SECRET].map((secret) => verifiesWith(secret, second))).toEqual([true, true, false]);
  });

  it('never shows a stored secret: the API says only whether each is set', async () => {
    const queue = queueName('write-only');
    await putQueue(env.worker, queue, { endpoint: 'http://127.0.0.1:9/jobs', signingSecret: QUEUE_SECRET, signingSecretNext: QUEUE_SECRET_NEXT });
    const secrets = [QUEUE_SECRET, QUEUE_SECRET_NEXT, QUEUE_SECRET.slice('whsec_'.length), QUEUE_SECRET_NEXT.slice('whsec_'.length)];
    const one = await env.worker.api(`/v1/queues/${queue}`);
    const text = await one.text();
    expect(JSON.parse(text).config).toMatchObject({ signingSecret: true, signingSecretNext: true });
    const list = await (await env.worker.api('/v1/queues')).text();
    for (const secret of secrets) {
      expect(text).not.toContain(secret);
      expect(list).not.toContain(secret);
    }
    const put = await env.worker.api(`/v1/queues/${queue}`, { method: 'PUT', json: { endpoint: 'http://127.0.0.1:9/jobs' } });
    expect(((await put.json()) as { config: unknown }).config).toMatchObject({ signingSecret: false, signingSecretNext: false });
  });

  it('refuses a malformed secret with 400 VALIDATION_FAILED', async () => {
    const queue = queueName('bad-secret');
    const res = await env.worker.api(`/v1/queues/${queue}`, { method: 'PUT', json: { endpoint: 'http://127.0.0.1:9/jobs', signingSecret: 'whsec_c2hvcnQ=' } });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: unknown }).error).toMatchObject({ code: 'VALIDATION_FAILED', details: [expect.objectContaining({ path: 'signingSecret' })] });
    expect((await env.worker.api(`/v1/queues/${queue}`)).status).toBe(404);
  });
});

describe('the kind of message, and replays', () => {
  const env = useWorker();
  const closing: { close(): Promise<void> }[] = [];
  afterEach(async () => {
    await Promise.all(closing.splice(0).map((s) => s.close()));
  });
  async function track<S extends { close(): Promise<void> }>(server: Promise<S>): Promise<S> {
    const started = await server;
    closing.push(started);
    return started;
  }

  it('an outcome callback is refused by a delivery endpoint, and a delivery by an outcome endpoint (401 wrong_kind)', async () => {
    const endpoint = await track(startEndpoint(() => ({ status: 200 })));
    const callbacks = await track(startEndpoint(() => ({ status: 204 })));
    const queue = queueName('kinds');
    await putQueue(env.worker, queue, { endpoint: endpoint.url, callbackUrl: callbacks.url, signingSecret: QUEUE_SECRET });
    await enqueue(env.worker, queue, { group: 'g', data: { n: 1 } });
    const [delivery] = await endpoint.waitFor(1);
    const [outcome] = await callbacks.waitFor(1);
    expect(delivery!.headers['webhook-id']).toMatch(/^msg_/);
    expect(outcome!.headers['webhook-id']).toMatch(/^out_/);

    const runs: Delivery[] = [];
    const outcomes: OutcomeCallback[] = [];
    const jobs = await track(serve(createHandler((job) => void runs.push(job), { secret: QUEUE_SECRET })));
    const producer = await track(serve(createOutcomeHandler((o) => void outcomes.push(o), { secret: QUEUE_SECRET })));

    const asDelivery = await resend(outcome!, jobs.url);
    expect(asDelivery.status).toBe(401);
    expect(await asDelivery.text()).toBe('this is a groupq outcome callback (webhook-id out_...), not a groupq delivery');
    const asOutcome = await resend(delivery!, producer.url);
    expect(asOutcome.status).toBe(401);
    expect(await asOutcome.text()).toBe('this is a groupq delivery (webhook-id msg_...), not a groupq outcome callback');
    expect([runs, outcomes]).toEqual([[], []]);

    // Each is accepted by its own kind's endpoint: the refusals were for the kind alone.
    expect((await resend(delivery!, jobs.url)).status).toBe(200);
    expect((await resend(outcome!, producer.url)).status).toBe(204);
    expect(runs).toHaveLength(1);
    expect(outcomes).toHaveLength(1);
  });

  it('createHandler refuses a replayed delivery with 409 and runs the job once (the default memory)', async () => {
    const runs: Delivery[] = [];
    const handler: Server = await track(serve(createHandler((job) => void runs.push(job), { secret: SIGNING_SECRET })));
    const queue = queueName('replayed');
    await putQueue(env.worker, queue, { endpoint: handler.url, keepCompleted: 10 });
    const { id } = await enqueue(env.worker, queue, { group: 'g' });
    await jobInState(env.worker, queue, id, 'completed');
    const [first] = handler.exchanges;
    expect(first!.status).toBe(200);

    const again = await fetch(handler.url, { method: 'POST', headers: first!.headers, body: first!.rawBody });
    expect(again.status).toBe(409);
    expect(await again.text()).toBe(
      `this delivery (webhook-id ${first!.headers.get('webhook-id')}, webhook-timestamp ${first!.headers.get('webhook-timestamp')}) was accepted before: a replayed copy`,
    );
    expect(runs.map((job) => job.id)).toEqual([id]);
  });

  it('a seen hook (async) decides instead: one key per request; a retry keeps its webhook-id, with a new timestamp and key', async () => {
    const store = new Set<string>();
    const asked: { key: string; webhookId: string; timestampSec: number }[] = [];
    const seen = async (key: string, message: { webhookId: string; timestampSec: number }) => {
      asked.push({ key, ...message });
      if (store.has(key)) return true;
      store.add(key);
      return false;
    };
    let calls = 0;
    const handler: Server = await track(
      serve(
        createHandler(
          () => {
            if (++calls === 1) throw new Error('first attempt fails');
            return 'done';
          },
          { secret: SIGNING_SECRET, seen },
        ),
      ),
    );
    const queue = queueName('seen-hook');
    // No backoff: the retry may well come within the same second as the first attempt.
    await putQueue(env.worker, queue, { endpoint: handler.url, keepCompleted: 10, backoff: { type: 'fixed', delayMs: 0, jitter: false } });
    const { id } = await enqueue(env.worker, queue, { group: 'g' });
    expect(await jobInState(env.worker, queue, id, 'completed', { pump: env.worker })).toMatchObject({ attempts: 2, result: 'done' });
    // Two attempts of one job: one webhook-id, two keys; the retry was not taken for a replay.
    expect(handler.exchanges.map((e) => e.status)).toEqual([500, 200]);
    const ids = handler.exchanges.map((e) => e.headers.get('webhook-id')!);
    expect(ids[1]).toBe(ids[0]);
    expect(asked.map((a) => a.webhookId)).toEqual(ids);
    expect(asked.map((a) => a.timestampSec)).toEqual(handler.exchanges.map((e) => Number(e.headers.get('webhook-timestamp'))));
    expect(new Set(asked.map((a) => a.key)).size).toBe(2);

    const last = handler.exchanges[1]!;
    const replay = await fetch(handler.url, { method: 'POST', headers: last.headers, body: last.rawBody });
    expect(replay.status).toBe(409);
    expect(asked.map((a) => a.key)).toEqual([asked[0]!.key, asked[1]!.key, asked[1]!.key]);
    expect(calls).toBe(2);
  });
});
