// A receiver that cannot be made to work hard: whatever a request holds, the kit reads at most
// maxBodyBytes of its body (1 MiB by default; a body declared larger is not read at all, a stream
// is cut off past the cap) and computes at most one HMAC per secret, looking at no more than the
// first 4 entries of webhook-signature and only at `v1,` ones of 32 bytes. HMACs are counted on
// the real Web Crypto (crypto.subtle.sign and verify, watched, not replaced); messages are signed
// with the official `standardwebhooks` package, which hashes in JavaScript and so counts nothing.
import { Buffer } from 'node:buffer';
import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  DeliveryVerificationError,
  type RawMessage,
  createHandler,
  createOutcomeHandler,
  createVerifier,
  verifyDelivery,
  verifyOutcome,
} from '../../src/receiver/index';

const SECRET = `whsec_${Buffer.from('a-receiver-that-works-little-001').toString('base64')}`;
const NEXT_SECRET = `whsec_${Buffer.from('a-receiver-that-works-little-002').toString('base64')}`;
const MIB = 1_048_576;

/** A delivery body carrying `data`, with a lease well ahead (a handler answers it synchronously). */
function deliveryOf(data: unknown) {
  const base = 'https://groupq.example/v1/queues/emails/jobs/job-1';
  return {
    id: 'job-1',
    queue: 'emails',
    group: 'g',
    data,
    attempt: 1,
    maxAttempts: 3,
    orderMs: 1_764_000_000_000,
    createdAt: 1_764_000_000_000,
    lease: { token: '0123456789abcdef', expiresAt: Date.now() + 60_000 },
    callbacks: { heartbeat: `${base}/heartbeat`, complete: `${base}/complete`, fail: `${base}/fail`, progress: `${base}/progress` },
  };
}

/** `body` signed by the official package with `secret`, under a fresh groupq-style webhook-id. */
function signed(body: string, { prefix = 'msg_', secret = SECRET } = {}) {
  const id = `${prefix}${randomBytes(16).toString('hex')}`;
  const at = new Date();
  return {
    body,
    headers: {
      'webhook-id': id,
      'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
      'webhook-signature': new Webhook(secret).sign(id, at, body),
    },
  };
}

/** `count` v1 entries of random 32-byte signatures: each a candidate, none of them right. */
const junk = (count: number) => Array.from({ length: count }, () => `v1,${randomBytes(32).toString('base64')}`);

/** Counts HMAC computations on the real crypto.subtle from now until `afterEach`. */
function countHmacs(): () => number {
  const { subtle } = globalThis.crypto;
  const sign = vi.spyOn(subtle, 'sign');
  const verify = vi.spyOn(subtle, 'verify');
  const isHmac = (algorithm: unknown) => (typeof algorithm === 'string' ? algorithm : (algorithm as { name?: string }).name)?.toUpperCase() === 'HMAC';
  return () => [...sign.mock.calls, ...verify.mock.calls].filter(([algorithm]) => isHmac(algorithm)).length;
}

afterEach(() => {
  vi.restoreAllMocks();
});

/** Why the kit refused a message (its reason and message), or 'verified'. */
async function outcomeOf(promise: Promise<unknown>): Promise<string | { reason: string; message: string }> {
  try {
    await promise;
    return 'verified';
  } catch (error) {
    if (!(error instanceof DeliveryVerificationError)) throw error;
    return { reason: error.reason, message: error.message };
  }
}

/** A stream of `totalBytes` in 64 KiB chunks that notes how much of it was pulled and whether it was cancelled. */
function countedStream(totalBytes: number) {
  const state = { pulled: 0, cancelled: false };
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      const size = Math.min(65_536, totalBytes - state.pulled);
      state.pulled += size;
      controller.enqueue(new Uint8Array(size).fill(0x20));
      if (state.pulled >= totalBytes) controller.close();
    },
    cancel() {
      state.cancelled = true;
    },
    // Nothing is pulled ahead: only what the reader asks for.
  }, { highWaterMark: 0 });
  return { stream, state };
}

describe('4,000 signature entries and a 10 MiB body', () => {
  const huge = JSON.stringify(deliveryOf('x'.repeat(10 * MIB)));
  const entries = junk(4_000);

  it('cost no HMAC at all: the body is refused at the cap, in every form it can come in', async () => {
    const message = signed(huge);
    const headers = { ...message.headers, 'webhook-signature': [...entries, message.headers['webhook-signature']].join(' ') };
    const hmacs = countHmacs();
    const verify = createVerifier({ secret: SECRET, nextSecret: NEXT_SECRET });
    const forms: [string, Request | RawMessage][] = [
      ['a Request', new Request('https://endpoint.example/jobs', { method: 'POST', headers, body: huge })],
      ['text', { headers, body: huge }],
      ['a Buffer', { headers, body: Buffer.from(huge) }],
    ];
    for (const [what, form] of forms) {
      expect(await outcomeOf(verify(form)), what).toEqual({
        reason: 'body_too_large',
        message: `the delivery body is larger than maxBodyBytes (${MIB} bytes)`,
      });
    }
    expect(hmacs()).toBe(0);
  });

  it('with a body within the cap, cost one HMAC per secret, and verify when a right signature is among the first 4', async () => {
    const message = signed(JSON.stringify(deliveryOf({ n: 1 })));
    const real = message.headers['webhook-signature'];
    const hmacs = countHmacs();
    const one = { secret: SECRET, seen: () => false };
    const two = { ...one, nextSecret: NEXT_SECRET };

    const first = { ...message.headers, 'webhook-signature': [real, ...entries].join(' ') };
    expect(await outcomeOf(verifyDelivery({ headers: first, body: message.body }, one))).toBe('verified');
    expect(hmacs()).toBe(1);
    expect(await outcomeOf(verifyDelivery({ headers: first, body: message.body }, two))).toBe('verified');
    expect(hmacs()).toBe(1 + 2);

    // The right one past the first 4 entries is not looked at.
    const last = { ...message.headers, 'webhook-signature': [...entries, real].join(' ') };
    expect(await outcomeOf(verifyDelivery({ headers: last, body: message.body }, two))).toEqual({
      reason: 'bad_signature',
      message: 'no signature matches the signing secrets (wrong secret, or the body was changed) (only the first 4 entries of webhook-signature are looked at)',
    });
    expect(hmacs()).toBe(3 + 2);
  });

  it('of which none is a v1 signature of 32 bytes in the first 4: no HMAC, and the body is not read', async () => {
    const message = signed(JSON.stringify(deliveryOf({ n: 2 })));
    const notCandidates = [
      'v1,', // empty
      `v1,${randomBytes(31).toString('base64')}`, // too short
      `v1,${randomBytes(33).toString('base64')}`, // too long
      `v2,${randomBytes(32).toString('base64')}`, // another version
      'v1,not base64 at all!!!!!!!!!!!!!!!!!!!!!!!!!!',
    ];
    const header = [...notCandidates, ...entries, message.headers['webhook-signature']].join(' ');
    const { stream, state } = countedStream(10 * MIB);
    const hmacs = countHmacs();
    const request = new Request('https://endpoint.example/jobs', {
      method: 'POST',
      headers: { ...message.headers, 'webhook-signature': header },
      body: stream,
      duplex: 'half',
    } as RequestInit);
    expect(await outcomeOf(verifyDelivery(request, { secret: SECRET }))).toEqual({
      reason: 'bad_signature',
      message: 'webhook-signature holds no "v1,<base64>" signature of 32 bytes (only the first 4 entries of webhook-signature are looked at)',
    });
    expect(hmacs()).toBe(0);
    expect(state.pulled).toBe(0);
  });

  it('empty entries (runs of spaces) do not count among the 4', async () => {
    const message = signed(JSON.stringify(deliveryOf({ n: 3 })));
    const header = [...junk(3), message.headers['webhook-signature']].join(' '.repeat(1_000));
    const hmacs = countHmacs();
    const headers = { ...message.headers, 'webhook-signature': ` ${header} ` };
    expect(await outcomeOf(verifyDelivery({ headers, body: message.body }, { secret: SECRET }))).toBe('verified');
    expect(hmacs()).toBe(1);
  });
});

describe('the body cap', () => {
  it('stops reading a stream past maxBodyBytes, and lets go of the rest', async () => {
    const message = signed('{}');
    const { stream, state } = countedStream(10 * MIB);
    const hmacs = countHmacs();
    const request = new Request('https://endpoint.example/jobs', { method: 'POST', headers: message.headers, body: stream, duplex: 'half' } as RequestInit);
    expect(await outcomeOf(verifyDelivery(request, { secret: SECRET }))).toMatchObject({ reason: 'body_too_large' });
    // Read up to the first chunk past the cap (and what the stream queued ahead), no further.
    expect(state.pulled).toBeGreaterThan(MIB);
    expect(state.pulled).toBeLessThanOrEqual(MIB + 4 * 65_536);
    expect(state.cancelled).toBe(true);
    expect(hmacs()).toBe(0);
  });

  it('does not read a body whose Content-Length is over the cap', async () => {
    const message = signed('{}');
    const { stream, state } = countedStream(10 * MIB);
    const request = new Request('https://endpoint.example/jobs', {
      method: 'POST',
      headers: { ...message.headers, 'content-length': String(10 * MIB) },
      body: stream,
      duplex: 'half',
    } as RequestInit);
    expect(await outcomeOf(verifyDelivery(request, { secret: SECRET }))).toEqual({
      reason: 'body_too_large',
      message: `the delivery body is declared as ${10 * MIB} bytes, more than maxBodyBytes (${MIB} bytes)`,
    });
    expect(state.pulled).toBe(0);
  });

  it('is 1 MiB by default and configurable: a 1.5 MiB delivery passes with maxBodyBytes of 2 MiB', async () => {
    const delivery = deliveryOf('y'.repeat(1.5 * MIB));
    const message = signed(JSON.stringify(delivery));
    const request = () => new Request('https://endpoint.example/jobs', { method: 'POST', ...message });
    expect(await outcomeOf(verifyDelivery(request(), { secret: SECRET, seen: () => false }))).toMatchObject({ reason: 'body_too_large' });
    expect(await verifyDelivery(request(), { secret: SECRET, seen: () => false, maxBodyBytes: 2 * MIB })).toEqual(delivery);
    // Exactly at the cap is within it; one byte more is not.
    const size = Buffer.byteLength(message.body);
    expect(await outcomeOf(verifyDelivery(message, { secret: SECRET, seen: () => false, maxBodyBytes: size }))).toBe('verified');
    expect(await outcomeOf(verifyDelivery(message, { secret: SECRET, seen: () => false, maxBodyBytes: size - 1 }))).toMatchObject({ reason: 'body_too_large' });
  });

  it('applies to outcome callbacks too', async () => {
    const outcome = { id: 'job-1', queue: 'emails', group: 'g', state: 'completed', result: 'z'.repeat(64), attempts: 1, finishedAt: 1 };
    const message = signed(JSON.stringify(outcome), { prefix: 'out_' });
    expect(await outcomeOf(verifyOutcome(message, { secret: SECRET, maxBodyBytes: 100 }))).toEqual({
      reason: 'body_too_large',
      message: 'the outcome callback body is larger than maxBodyBytes (100 bytes)',
    });
    expect(await verifyOutcome(message, { secret: SECRET })).toEqual(outcome);
  });

  it('createHandler and createOutcomeHandler answer 413 with the reason, and run nothing', async () => {
    const runs: unknown[] = [];
    const handle = createHandler((job) => void runs.push(job), { secret: SECRET, maxBodyBytes: 1_000 });
    const big = signed(JSON.stringify(deliveryOf('w'.repeat(2_000))));
    const answer = await handle(new Request('https://endpoint.example/jobs', { method: 'POST', ...big }));
    expect(answer.status).toBe(413);
    expect(await answer.text()).toBe('the delivery body is larger than maxBodyBytes (1000 bytes)');

    const takeOutcome = createOutcomeHandler((outcome) => void runs.push(outcome), { secret: SECRET, maxBodyBytes: 50 });
    const outcome = signed(JSON.stringify({ id: 'job-1', queue: 'emails', group: 'g', state: 'failed', error: 'e', attempts: 3, finishedAt: 1 }), { prefix: 'out_' });
    const refused = await takeOutcome(new Request('https://producer.example/outcomes', { method: 'POST', ...outcome }));
    expect(refused.status).toBe(413);
    expect(await refused.text()).toBe('the outcome callback body is larger than maxBodyBytes (50 bytes)');
    expect(runs).toEqual([]);
  });

  it('must be a whole number of bytes > 0, said at once', () => {
    for (const maxBodyBytes of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => createVerifier({ secret: SECRET, maxBodyBytes }), String(maxBodyBytes)).toThrow(RangeError);
    }
  });
});
