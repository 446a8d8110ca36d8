// verifyDelivery on real deliveries: the Worker (Miniflare) signs and pushes a job to a loopback
// server that verifies it; the captured request is then replayed with one thing changed at a
// time (body, headers, the receiver's clock, the secret) and each change must be refused with
// its reason; replayed unchanged it is refused as a replay, unless a `seen` hook says its key is
// new. Rotation: a Worker signing with two secrets reaches receivers holding either one.
import { Buffer } from 'node:buffer';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DeliveryVerificationError, type DeliveryVerifyOptions, verifyDelivery } from '../../src/receiver/index';
import { expectedSignature } from '../helpers/endpoint';
import { SIGNING_SECRET } from '../helpers/worker';
import { enqueue, getJob, jobInState, putQueue, queueName, useWorker } from '../delivery/support';
import { type Exchange, type Server, serve } from './support';

const OTHER_SECRET = `whsec_${Buffer.from('another-secret-nobody-configured').toString('base64')}`;
const NEW_SECRET = `whsec_${Buffer.from('the-next-signing-secret-rotated!').toString('base64')}`;
/** A replay check that has seen nothing: the captured delivery can be checked again and again. */
const fresh = { seen: () => false };

/** A server that answers 200 with the verified delivery as JSON, or 401 with the reason. */
function verifyingServer(options: DeliveryVerifyOptions): Promise<Server> {
  return serve(async (request) => {
    try {
      return Response.json(await verifyDelivery(request, options));
    } catch (error) {
      if (!(error instanceof DeliveryVerificationError)) throw error;
      return new Response(`${error.reason}: ${error.message}`, { status: 401 });
    }
  });
}

type Change = { headers?: Record<string, string | null>; body?: string };

/** A captured delivery request with some headers (null: removed) and/or the body changed. */
function altered(exchange: Exchange, change: Change = {}): RequestInit {
  const headers = new Headers(exchange.headers);
  for (const [name, value] of Object.entries(change.headers ?? {})) {
    if (value === null) headers.delete(name);
    else headers.set(name, value);
  }
  return { method: 'POST', headers, body: change.body ?? exchange.rawBody };
}

function replay(exchange: Exchange, change: Change = {}): Request {
  return new Request('http://127.0.0.1/jobs', altered(exchange, change));
}

/** What verifyDelivery throws for a request, or a failure when it accepts it. */
async function refusal(request: Request, options: DeliveryVerifyOptions): Promise<DeliveryVerificationError> {
  try {
    await verifyDelivery(request, options);
  } catch (error) {
    expect(error).toBeInstanceOf(DeliveryVerificationError);
    return error as DeliveryVerificationError;
  }
  throw new Error('verifyDelivery accepted the request');
}

describe('verifyDelivery on a real delivery', () => {
  const env = useWorker();
  let server: Server;
  /** The delivery the Worker made, as the server received it. */
  let delivered: Exchange;
  let queue: string;
  let id: string;
  const data = { n: 1, text: 'héllo ✓ "quoted"' };

  beforeAll(async () => {
    server = await verifyingServer({ secret: SIGNING_SECRET });
    queue = queueName('verify');
    await putQueue(env.worker, queue, { endpoint: server.url, keepCompleted: 10, maxAttempts: 1 });
    ({ id } = await enqueue(env.worker, queue, { group: 'g', data }));
    delivered = (await server.waitFor(1))[0]!;
  });
  afterAll(() => server?.close());

  it('accepts it and returns the parsed delivery, which the job then stores as its result', async () => {
    expect(delivered!.status, delivered!.responseText).toBe(200);
    const job = await jobInState(env.worker, queue, id, 'completed');
    const delivery = job.result as Record<string, any>;
    expect(delivery).toMatchObject({
      id,
      queue,
      group: 'g',
      data,
      attempt: 1,
      maxAttempts: 1,
      orderMs: job.orderMs,
      createdAt: job.createdAt,
    });
    expect(delivery.lease.token).toEqual(expect.any(String));
    expect(delivery.lease.expiresAt).toBeGreaterThan(job.createdAt);
    const base = `${env.worker.url}/v1/queues/${queue}/jobs/${id}`;
    expect(delivery.callbacks).toEqual({
      heartbeat: `${base}/heartbeat`,
      complete: `${base}/complete`,
      fail: `${base}/fail`,
      progress: `${base}/progress`,
    });
  });

  it('is a Standard Webhooks message as the official package verifies it', () => {
    const headers = Object.fromEntries(['webhook-id', 'webhook-timestamp', 'webhook-signature'].map((name) => [name, delivered.headers.get(name)!]));
    expect(new Webhook(SIGNING_SECRET).verify(delivered.rawBody, headers)).toMatchObject({ id, queue, data });
  });

  it('refuses the same request replayed unchanged: same webhook-id (msg_ and 32 hex digits), timestamp and signature', async () => {
    const webhookId = delivered.headers.get('webhook-id');
    expect(webhookId).toMatch(/^msg_[0-9a-f]{32}$/);
    // The server's verifyDelivery remembered it in this process's default memory.
    const again = await refusal(replay(delivered), { secret: SIGNING_SECRET });
    expect(again).toMatchObject({
      reason: 'replayed',
      message: `this delivery (webhook-id ${webhookId}, webhook-timestamp ${delivered.headers.get('webhook-timestamp')}) was accepted before: a replayed copy`,
    });
  });

  it('accepts it again with a seen hook that has not seen it (so each refusal below is due to its one change)', async () => {
    const asked: { key: string; webhookId: string; timestampSec: number }[] = [];
    const seen = async (key: string, message: { webhookId: string; timestampSec: number }) => {
      asked.push({ key, ...message });
      return false;
    };
    expect(await verifyDelivery(replay(delivered), { secret: SIGNING_SECRET, seen })).toMatchObject({ id, data });
    const [webhookId, timestamp, signature] = ['webhook-id', 'webhook-timestamp', 'webhook-signature'].map((name) => delivered.headers.get(name)!);
    // The key: webhook-id, webhook-timestamp and the signature, all three signed.
    expect(asked).toEqual([{ key: `${webhookId}.${timestamp}.${signature!.slice('v1,'.length)}`, webhookId, timestampSec: Number(timestamp) }]);
  });

  it('refuses a tampered body, id or timestamp: the signature covers all three', async () => {
    const options = { secret: SIGNING_SECRET };
    const bodies = [
      delivered.rawBody.replace('"n":1', '"n":2'),
      delivered.rawBody.replace('"attempt":1', '"attempt":1 '),
      `${delivered.rawBody}\n`,
    ];
    for (const body of bodies) {
      const error = await refusal(replay(delivered, { body }), options);
      expect(error.reason).toBe('bad_signature');
      expect(error.message).toMatch(/no signature matches the signing secret/);
    }
    const otherId = await refusal(replay(delivered, { headers: { 'webhook-id': 'someone-else' } }), options);
    expect(otherId.reason).toBe('bad_signature');
    // A fresher timestamp would get a stale delivery past the tolerance; it is signed too.
    const ts = Number(delivered.headers.get('webhook-timestamp'));
    const newer = await refusal(replay(delivered, { headers: { 'webhook-timestamp': String(ts + 1) } }), options);
    expect(newer.reason).toBe('bad_signature');
  });

  it('refuses it over the wire too: the server answers 401 with the reason', async () => {
    const res = await fetch(server.url, altered(delivered, { body: delivered.rawBody.replace('"n":1', '"n":9') }));
    expect(res.status).toBe(401);
    expect(await res.text()).toMatch(/^bad_signature: no signature matches/);
  });

  it('refuses it with the wrong secret, and names a malformed secret as a TypeError', async () => {
    const error = await refusal(replay(delivered), { secret: OTHER_SECRET });
    expect(error.reason).toBe('bad_signature');
    await expect(verifyDelivery(replay(delivered), { secret: 'whsec_c2hvcnQ=' })).rejects.toThrow(TypeError);
    await expect(verifyDelivery(replay(delivered), { secret: '' })).rejects.toThrow(/needs the signing secret/);
  });

  it('refuses a timestamp more than toleranceSec away on either side, and accepts one at the limit', async () => {
    const sentMs = Number(delivered.headers.get('webhook-timestamp')) * 1000;
    const at = (ms: number, toleranceSec?: number) => ({ secret: SIGNING_SECRET, toleranceSec, now: () => ms });

    const old = await refusal(replay(delivered), at(sentMs + 301_000));
    expect(old.reason).toBe('timestamp_out_of_tolerance');
    expect(old.message).toBe('webhook-timestamp is 301 s in the past, more than the 300 s tolerated');
    const future = await refusal(replay(delivered), at(sentMs - 301_000));
    expect(future.message).toBe('webhook-timestamp is 301 s in the future, more than the 300 s tolerated');

    await expect(verifyDelivery(replay(delivered), { ...at(sentMs + 300_999), ...fresh })).resolves.toMatchObject({ id });
    await expect(verifyDelivery(replay(delivered), { ...at(sentMs - 300_000), ...fresh })).resolves.toMatchObject({ id });
    expect((await refusal(replay(delivered), at(sentMs + 11_000, 10))).reason).toBe('timestamp_out_of_tolerance');
  });

  it('refuses a request without each webhook header, naming what is missing', async () => {
    for (const name of ['webhook-id', 'webhook-timestamp', 'webhook-signature']) {
      const error = await refusal(replay(delivered, { headers: { [name]: null } }), { secret: SIGNING_SECRET });
      expect(error.reason).toBe('missing_headers');
      expect(error.message).toBe(`missing header: ${name}`);
    }
    const bare = new Request('http://127.0.0.1/jobs', { method: 'POST', body: delivered.rawBody });
    expect((await refusal(bare, { secret: SIGNING_SECRET })).message).toBe(
      'missing headers: webhook-id, webhook-timestamp, webhook-signature',
    );
    const notSeconds = await refusal(replay(delivered, { headers: { 'webhook-timestamp': '2026-05-01T00:00:00Z' } }), { secret: SIGNING_SECRET });
    expect(notSeconds.reason).toBe('bad_timestamp');
  });

  it('looks through the first 4 entries of the signature header and skips other versions and malformed ones', async () => {
    const real = delivered.headers.get('webhook-signature')!;
    const mixed = `v2,${real.slice(3)}  v1,AAAA v1,not-base64!! ${real}`;
    await expect(verifyDelivery(replay(delivered, { headers: { 'webhook-signature': mixed } }), { secret: SIGNING_SECRET, ...fresh })).resolves.toMatchObject({ id });
    const none = await refusal(replay(delivered, { headers: { 'webhook-signature': `v2,${real.slice(3)}` } }), { secret: SIGNING_SECRET });
    expect(none.message).toBe('webhook-signature holds no "v1,<base64>" signature of 32 bytes');
    // Pushed to the fifth entry, the right signature is not looked at.
    const fifth = await refusal(replay(delivered, { headers: { 'webhook-signature': `v1,AAAA ${mixed}` } }), { secret: SIGNING_SECRET });
    expect(fifth.message).toBe('webhook-signature holds no "v1,<base64>" signature of 32 bytes (only the first 4 entries of webhook-signature are looked at)');
  });

  it('refuses a correctly signed body that is not a groupq delivery', async () => {
    const ts = String(Math.floor(Date.now() / 1000));
    const signed = (body: string, webhookId = 'msg_0123') =>
      replay(delivered, {
        body,
        headers: { 'webhook-id': webhookId, 'webhook-timestamp': ts, 'webhook-signature': expectedSignature(SIGNING_SECRET, webhookId, ts, body) },
      });
    const notJson = await refusal(signed('{"id":'), { secret: SIGNING_SECRET });
    expect(notJson).toMatchObject({ reason: 'bad_body', message: 'the delivery body is not JSON' });
    const noLease = JSON.parse(delivered.rawBody);
    delete noLease.lease;
    const shape = await refusal(signed(JSON.stringify(noLease)), { secret: SIGNING_SECRET });
    expect(shape.reason).toBe('bad_body');
    expect(shape.message).toMatch(/^the delivery body is not a groupq delivery: lease: /);
    // Signed, but with a webhook-id of another kind: an outcome callback's (out_), or none of groupq's.
    const outcome = await refusal(signed(delivered.rawBody, `out_${id}`), { secret: SIGNING_SECRET });
    expect(outcome).toMatchObject({ reason: 'wrong_kind', message: 'this is a groupq outcome callback (webhook-id out_...), not a groupq delivery' });
    const unknown = await refusal(signed(delivered.rawBody, id), { secret: SIGNING_SECRET });
    expect(unknown).toMatchObject({ reason: 'wrong_kind', message: 'webhook-id does not start with msg_: not a groupq delivery' });
    // The job itself was not touched by any of this.
    expect((await getJob(env.worker, queue, id)).state).toBe('completed');
  });
});

describe('verifyDelivery while the signing secret rotates', () => {
  const env = useWorker({ GROUPQ_SIGNING_SECRET: SIGNING_SECRET, GROUPQ_SIGNING_SECRET_NEXT: NEW_SECRET });
  let server: Server;
  beforeAll(async () => {
    // The receiver already moved to the new secret; the Worker still signs with both.
    server = await verifyingServer({ secret: NEW_SECRET });
  });
  afterAll(() => server?.close());

  it('a receiver on either secret, or on both, accepts; one on neither refuses', async () => {
    const queue = queueName('rotate');
    await putQueue(env.worker, queue, { endpoint: server.url, keepCompleted: 10, maxAttempts: 1 });
    const { id } = await enqueue(env.worker, queue, { group: 'g', data: 'rotating' });
    const [delivered] = await server.waitFor(1);
    expect(delivered!.status, delivered!.responseText).toBe(200);
    expect((await jobInState(env.worker, queue, id, 'completed')).result).toMatchObject({ id, data: 'rotating' });
    expect(delivered!.headers.get('webhook-signature')!.split(' ')).toHaveLength(2);

    for (const options of [
      { secret: SIGNING_SECRET },
      { secret: NEW_SECRET },
      { secret: NEW_SECRET, nextSecret: SIGNING_SECRET },
      { secret: OTHER_SECRET, nextSecret: NEW_SECRET },
    ]) {
      await expect(verifyDelivery(replay(delivered!), { ...options, ...fresh })).resolves.toMatchObject({ id });
    }
    const neither = await refusal(replay(delivered!), { secret: OTHER_SECRET });
    expect(neither.reason).toBe('bad_signature');
    const both = await refusal(replay(delivered!), { secret: OTHER_SECRET, nextSecret: OTHER_SECRET });
    expect(both.message).toMatch(/no signature matches the signing secrets/);
  });
});
