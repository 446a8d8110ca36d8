// The receiver kit against the official `standardwebhooks` package: messages that package signs
// verify with verifyDelivery and verifyOutcome, given as a Web Request or as `{ headers, body }`
// the way Node, Express, Fastify and Lambda hold them (a header record in any case, the raw body
// as text, a Buffer or an ArrayBuffer); a body parsed and encoded again is refused. A resend
// (the same webhook-id, signed anew with a later timestamp) verifies, also within the same
// second when its body differs; a copy of a request already accepted is a replay (409). (groupq's
// own deliveries and outcome callbacks are checked with that package in queue-secrets.test.ts
// and verify.test.ts.)
import { Buffer } from 'node:buffer';
import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import {
  DeliveryVerificationError,
  type RawMessage,
  createHandler,
  createVerifier,
  verifyDelivery,
  verifyOutcome,
} from '../../src/receiver/index';

const SECRET = `whsec_${Buffer.from('signed-by-the-official-package-1').toString('base64')}`;
const fresh = { secret: SECRET, seen: () => false };

/** A webhook-id as groupq makes them: the kind's prefix and 32 hex digits. */
const webhookId = (prefix: 'msg_' | 'out_') => `${prefix}${randomBytes(16).toString('hex')}`;

const delivery = {
  id: 'job-1',
  queue: 'emails',
  group: 'user:42',
  data: { to: 'a@example.com', note: 'ünïcode ✓' },
  attempt: 1,
  maxAttempts: 3,
  orderMs: 1_764_000_000_000,
  createdAt: 1_764_000_000_000,
  lease: { token: '0123456789abcdef', expiresAt: 1_764_000_035_000 },
  callbacks: {
    heartbeat: 'https://groupq.example/v1/queues/emails/jobs/job-1/heartbeat',
    complete: 'https://groupq.example/v1/queues/emails/jobs/job-1/complete',
    fail: 'https://groupq.example/v1/queues/emails/jobs/job-1/fail',
    progress: 'https://groupq.example/v1/queues/emails/jobs/job-1/progress',
  },
};

/** `payload` as the official package signs it (at `at`, default now): the three webhook headers and the exact body text. */
function signed(webhookId: string, payload: unknown, at = new Date()) {
  const body = JSON.stringify(payload);
  const signature = new Webhook(SECRET).sign(webhookId, at, body);
  return { body, headers: { 'webhook-id': webhookId, 'webhook-timestamp': String(Math.floor(at.getTime() / 1000)), 'webhook-signature': signature } };
}

const reasonOf = (promise: Promise<unknown>) =>
  promise.then(
    () => 'verified',
    (error: unknown) => (error instanceof DeliveryVerificationError ? error.reason : `threw ${String(error)}`),
  );

describe('messages signed by the standardwebhooks package', () => {
  it('verify as a Request and as { headers, body } in every form a framework holds them', async () => {
    const { headers, body } = signed(webhookId('msg_'), delivery);
    const upper = Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toUpperCase(), value]));
    const forms: [string, Request | RawMessage][] = [
      ['a Request', new Request('https://endpoint.example/jobs', { method: 'POST', headers, body })],
      ['text and a header record (Express with express.text, Fastify, Next.js)', { headers, body }],
      ['a Buffer (express.raw, Node http)', { headers, body: Buffer.from(body) }],
      ['an ArrayBuffer', { headers, body: new TextEncoder().encode(body).buffer as ArrayBuffer }],
      ['headers named in another case, as arrays (Lambda, Node multi-value)', {
        headers: Object.fromEntries(Object.entries(upper).map(([name, value]) => [name, [value]])),
        body,
      }],
      ['a Headers object', { headers: new Headers(headers), body }],
      // Another fetch implementation's objects (a copy of undici, node-fetch): not instanceof the global ones.
      ['a Request of another fetch implementation', {
        headers: { get: (name: string) => new Headers(headers).get(name) },
        arrayBuffer: async () => new TextEncoder().encode(body).buffer,
      } as unknown as Request],
    ];
    for (const [what, message] of forms) {
      expect(await verifyDelivery(message, fresh), what).toEqual(delivery);
    }
  });

  it('verify an outcome callback the same way, in each form; its webhook-id need not repeat anything of the body', async () => {
    const outcome = { id: 'job-1', queue: 'emails', group: 'user:42', state: 'completed', result: { ok: true }, attempts: 1, finishedAt: 1_764_000_001_000 };
    const { headers, body } = signed(webhookId('out_'), outcome);
    const forms: [string, Request | RawMessage][] = [
      ['a Request', new Request('https://producer.example/outcomes', { method: 'POST', headers, body })],
      ['text', { headers, body }],
      ['a Buffer', { headers, body: Buffer.from(body) }],
      ['an ArrayBuffer', { headers: new Headers(headers), body: new TextEncoder().encode(body).buffer as ArrayBuffer }],
    ];
    for (const [what, message] of forms) {
      expect(await verifyOutcome(message, { secret: SECRET }), what).toEqual(outcome);
    }
    // Resent later, under the same webhook-id: it verifies again (dedupe on the webhook-id).
    const resent = signed(headers['webhook-id'], outcome, new Date(Date.now() + 30_000));
    expect(await verifyOutcome(resent, { secret: SECRET })).toEqual(outcome);
  });

  it('refuse a body parsed and encoded again, a missing header, and the other kind of message', async () => {
    const { headers, body } = signed(webhookId('msg_'), delivery);
    const reencoded = JSON.stringify(JSON.parse(body), null, 2);
    expect(await reasonOf(verifyDelivery({ headers, body: reencoded }, fresh))).toBe('bad_signature');
    const { 'webhook-signature': _, ...unsigned } = headers;
    expect(await reasonOf(verifyDelivery({ headers: unsigned, body }, fresh))).toBe('missing_headers');
    expect(await reasonOf(verifyOutcome({ headers, body }, { secret: SECRET }))).toBe('wrong_kind');
    expect(await reasonOf(verifyDelivery({ headers, body: 42 as unknown as string }, fresh))).toMatch(/^threw TypeError: body must be the raw body/);
  });

  it('verify a retried delivery, which keeps its webhook-id; refuse a copy of an accepted one as a replay', async () => {
    const verify = createVerifier({ secret: SECRET });
    const id = webhookId('msg_');
    const at = Date.now();
    const first = signed(id, delivery, new Date(at - 20_000));
    const retry = signed(id, { ...delivery, attempt: 2 }, new Date(at));
    expect(await verify(first)).toEqual(delivery);
    expect(await verify(new Request('https://endpoint.example/jobs', { method: 'POST', ...retry }))).toMatchObject({ id: 'job-1', attempt: 2 });
    // A captured request sent again, in any form: its webhook-id, timestamp and signature are all known.
    expect(await reasonOf(verify({ headers: first.headers, body: Buffer.from(first.body) }))).toBe('replayed');
    expect(await reasonOf(verify(new Request('https://endpoint.example/jobs', { method: 'POST', ...retry })))).toBe('replayed');
    // Reordering or padding its signature header makes no copy new.
    const padded = { ...retry.headers, 'webhook-signature': `v1,AAAA  ${retry.headers['webhook-signature']}` };
    expect(await reasonOf(verify({ headers: padded, body: retry.body }))).toBe('replayed');
  });

  it('verify two attempts signed within the same second: their bodies differ, so neither is a replay of the other', async () => {
    const verify = createVerifier({ secret: SECRET });
    const id = webhookId('msg_');
    const at = new Date();
    const first = signed(id, { ...delivery, lease: { ...delivery.lease, token: '1111111111111111' } }, at);
    const second = signed(id, { ...delivery, attempt: 2, lease: { ...delivery.lease, token: '2222222222222222' } }, at);
    expect(second.headers['webhook-timestamp']).toBe(first.headers['webhook-timestamp']);
    expect(await verify(first)).toMatchObject({ attempt: 1 });
    expect(await verify(second)).toMatchObject({ attempt: 2 });
    expect(await reasonOf(verify(second))).toBe('replayed');
  });

  it('createHandler runs a retry and answers a replayed copy 409 without running it', async () => {
    const runs: number[] = [];
    const handle = createHandler((job) => void runs.push(job.attempt), { secret: SECRET });
    const id = webhookId('msg_');
    // A lease well ahead, so that the handler answers synchronously.
    const leased = (attempt: number) => ({ ...delivery, attempt, lease: { ...delivery.lease, expiresAt: Date.now() + 60_000 } });
    const first = signed(id, leased(1), new Date(Date.now() - 5_000));
    const retry = signed(id, leased(2));
    const post = (message: { headers: Record<string, string>; body: string }) =>
      handle(new Request('https://endpoint.example/jobs', { method: 'POST', ...message }));
    expect((await post(first)).status).toBe(200);
    expect((await post(retry)).status).toBe(200);
    const replayed = await post(first);
    expect(replayed.status).toBe(409);
    expect(await replayed.text()).toMatch(/^this delivery \(webhook-id msg_[0-9a-f]{32}, webhook-timestamp \d+\) was accepted before: a replayed copy$/);
    expect(runs).toEqual([1, 2]);
  });
});
