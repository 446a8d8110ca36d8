// The receiver kit against the official `standardwebhooks` package: messages that package signs
// verify with verifyDelivery and verifyOutcome, given as a Web Request or as `{ headers, body }`
// the way Node, Express, Fastify and Lambda hold them (a header record in any case, the raw body
// as text, a Buffer or an ArrayBuffer); a body parsed and encoded again is refused. (groupq's own
// deliveries and outcome callbacks are checked with that package in queue-secrets.test.ts.)
import { Buffer } from 'node:buffer';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { DeliveryVerificationError, type RawMessage, verifyDelivery, verifyOutcome } from '../../src/receiver/index';

const SECRET = `whsec_${Buffer.from('signed-by-the-official-package-1').toString('base64')}`;
const fresh = { secret: SECRET, seen: () => false };

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

/** `payload` as the official package signs it: the three webhook headers and the exact body text. */
function signed(webhookId: string, payload: unknown) {
  const body = JSON.stringify(payload);
  const at = new Date();
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
    const { headers, body } = signed('msg_2f1c', delivery);
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

  it('verify an outcome callback the same way', async () => {
    const outcome = { id: 'job-1', queue: 'emails', group: 'user:42', state: 'completed', result: { ok: true }, attempts: 1, finishedAt: 1_764_000_001_000 };
    const { headers, body } = signed('out_job-1', outcome);
    expect(await verifyOutcome({ headers, body }, { secret: SECRET })).toEqual(outcome);
  });

  it('refuse a body parsed and encoded again, a missing header, and the other kind of message', async () => {
    const { headers, body } = signed('msg_2f1d', delivery);
    const reencoded = JSON.stringify(JSON.parse(body), null, 2);
    expect(await reasonOf(verifyDelivery({ headers, body: reencoded }, fresh))).toBe('bad_signature');
    const { 'webhook-signature': _, ...unsigned } = headers;
    expect(await reasonOf(verifyDelivery({ headers: unsigned, body }, fresh))).toBe('missing_headers');
    expect(await reasonOf(verifyOutcome({ headers, body }, { secret: SECRET }))).toBe('wrong_kind');
    expect(await reasonOf(verifyDelivery({ headers, body: 42 as unknown as string }, fresh))).toMatch(/^threw TypeError: body must be the raw body/);
  });
});
