// verifyBatch and createBatchVerifier on batches signed by the official `standardwebhooks`
// package: a genuine batch verifies as a Request and as `{ headers, body }`; the kind check holds
// both ways (a batch is no single job's delivery and no outcome, and the reverse), naming the
// handler to use when the queue's `batch` setting and the endpoint disagree; a forged or altered
// batch, a body that is no batch, and a replayed copy are refused with their reasons. The answer
// schema reads the answer shapes of the wire contract.
import { Buffer } from 'node:buffer';
import { describe, expect, it } from 'vitest';
import { batchAnswerSchema } from '../../src/protocol/batch-body';
import {
  DeliveryVerificationError,
  batchBodySchema,
  createBatchHandler,
  createBatchVerifier,
  createHandler,
  verifyBatch,
  verifyDelivery,
  verifyOutcome,
} from '../../src/receiver/index';
import { OTHER_SECRET, SECRET, batchBody, post, signed, signedBatch, signedText, webhookId } from './batch-fixtures';

const fresh = { secret: SECRET, seen: () => false };

/** What a verification throws, as `reason: message`, or 'verified'. */
const outcomeOf = (promise: Promise<unknown>) =>
  promise.then(
    () => 'verified',
    (error: unknown) => (error instanceof DeliveryVerificationError ? `${error.reason}: ${error.message}` : `threw ${String(error)}`),
  );

describe('verifyBatch', () => {
  it('verifies a batch as a Request and as { headers, body }; unknown fields are dropped', async () => {
    const batch = batchBody(3);
    const message = signedBatch({ ...batch, addedLater: true, jobs: batch.jobs.map((job) => ({ ...job, addedLater: 1 })) } as typeof batch);
    expect(await verifyBatch(post(message), fresh)).toEqual(batch);
    expect(await verifyBatch({ headers: message.headers, body: Buffer.from(message.body) }, fresh)).toEqual(batch);
    expect(batchBodySchema.parse(JSON.parse(message.body))).toEqual(batch);
  });

  it('refuses a batch at a single-job verifier, naming the handler to use, and a single job at a batch verifier', async () => {
    const batch = signedBatch(batchBody(2));
    expect(await outcomeOf(verifyDelivery(batch, fresh))).toBe(
      'wrong_kind: this is a groupq batch (webhook-id bat_...), not a groupq delivery: ' +
        'the queue sends batches (its `batch` is set): take them with createBatchHandler or verifyBatch',
    );
    const single = signed(webhookId('msg_'), batchBody(1).jobs[0]);
    expect(await outcomeOf(verifyBatch(single, fresh))).toBe(
      'wrong_kind: this is a groupq delivery (webhook-id msg_...), not a groupq batch: ' +
        'the queue sends one job per delivery (its `batch` is null): take them with createHandler or verifyDelivery',
    );
    // Outcomes are no delivery of either form: no hint.
    const outcome = { id: 'job-1', queue: 'emails', group: 'user:42', state: 'completed', attempts: 1, finishedAt: 1_764_000_001_000 };
    expect(await outcomeOf(verifyBatch(signed(webhookId('out_'), outcome), fresh))).toBe(
      'wrong_kind: this is a groupq outcome callback (webhook-id out_...), not a groupq batch',
    );
    expect(await outcomeOf(verifyOutcome(batch, { secret: SECRET }))).toBe(
      'wrong_kind: this is a groupq batch (webhook-id bat_...), not a groupq outcome callback',
    );
  });

  it('the handlers answer the other form 401 without running their function', async () => {
    const runs: string[] = [];
    const single = createHandler(() => void runs.push('single'), fresh);
    const batches = createBatchHandler(() => void runs.push('batch'), fresh);
    const toSingle = await single(post(signedBatch(batchBody(2))));
    expect(toSingle.status).toBe(401);
    expect(await toSingle.text()).toMatch(/^this is a groupq batch .* take them with createBatchHandler or verifyBatch$/);
    const toBatches = await batches(post(signed(webhookId('msg_'), batchBody(1).jobs[0])));
    expect(toBatches.status).toBe(401);
    expect(await toBatches.text()).toMatch(/^this is a groupq delivery .* take them with createHandler or verifyDelivery$/);
    expect(runs).toEqual([]);
  });

  it('refuses a forged signature, an altered body and a batch signed with another secret', async () => {
    const batch = batchBody(2);
    const genuine = signedBatch(batch);
    const forged = { ...genuine.headers, 'webhook-signature': `v1,${Buffer.alloc(32, 7).toString('base64')}` };
    expect(await outcomeOf(verifyBatch({ headers: forged, body: genuine.body }, fresh))).toMatch(/^bad_signature: no signature matches/);
    // One job's data changed, or a job dropped: the signature no longer covers it.
    const altered = JSON.stringify({ ...batch, jobs: [batch.jobs[0], { ...batch.jobs[1], data: { n: 99 } }] });
    expect(await outcomeOf(verifyBatch({ headers: genuine.headers, body: altered }, fresh))).toMatch(/^bad_signature/);
    const dropped = JSON.stringify({ ...batch, jobs: [batch.jobs[0]] });
    expect(await outcomeOf(verifyBatch({ headers: genuine.headers, body: dropped }, fresh))).toMatch(/^bad_signature/);
    expect(await outcomeOf(verifyBatch(signedBatch(batch, { secret: OTHER_SECRET }), fresh))).toMatch(/^bad_signature/);
    // Rotating: the next secret verifies it too.
    expect(await outcomeOf(verifyBatch(signedBatch(batch, { secret: OTHER_SECRET }), { ...fresh, nextSecret: OTHER_SECRET }))).toBe('verified');
  });

  it('refuses a signed body that is no batch; createBatchHandler answers it 400', async () => {
    const batch = batchBody(1);
    const cases: [string, unknown, RegExp][] = [
      ['no jobs', { ...batch, jobs: [] }, /^bad_body: the batch body is not a groupq batch: jobs: /],
      ['101 jobs', { ...batch, jobs: batchBody(101).jobs }, /^bad_body: the batch body is not a groupq batch: jobs: /],
      ['an id of another kind', { ...batch, id: webhookId('msg_') }, /^bad_body: the batch body is not a groupq batch: id: /],
      ['a job without its lease', { ...batch, jobs: [{ ...batch.jobs[0], lease: undefined }] }, /^bad_body: .*: jobs\.0\.lease: /],
    ];
    const handle = createBatchHandler(() => {
      throw new Error('must not run');
    }, fresh);
    for (const [what, body, reason] of cases) {
      expect(await outcomeOf(verifyBatch(signed(batch.id, body), fresh)), what).toMatch(reason);
      const answer = await handle(post(signed(batch.id, body)));
      expect(answer.status, what).toBe(400);
    }
    const notJson = signedText(batch.id, '{"id": "bat_', {});
    expect(await outcomeOf(verifyBatch(notJson, fresh))).toBe('bad_body: the batch body is not JSON');
    expect((await handle(post(notJson))).status).toBe(400);
  });

  it('refuses a replayed copy of a batch; a resend of the same jobs, signed anew, passes', async () => {
    const verify = createBatchVerifier({ secret: SECRET });
    const batch = batchBody(2);
    const first = signedBatch(batch, { at: new Date(Date.now() - 20_000) });
    const resend = signedBatch(batch);
    expect(await verify(first)).toEqual(batch);
    expect(await verify(post(resend))).toEqual(batch);
    expect(await outcomeOf(verify({ headers: first.headers, body: Buffer.from(first.body) }))).toMatch(
      /^replayed: this batch \(webhook-id bat_[0-9a-f]{32}, webhook-timestamp \d+\) was accepted before: a replayed copy$/,
    );
    // A shared store plugs in as for deliveries: it gets the same key shape.
    const keys: string[] = [];
    const shared = createBatchVerifier({ secret: SECRET, seen: (key) => keys.push(key) > 1 });
    expect(await outcomeOf(shared(first))).toBe('verified');
    expect(await outcomeOf(shared(first))).toMatch(/^replayed/);
    expect(keys[0]).toBe(`${batch.id}.${first.headers['webhook-timestamp']}.${first.headers['webhook-signature']!.slice(3)}`);
  });
});

describe('batchAnswerSchema', () => {
  it('reads the answers of the contract, partial ones first', () => {
    expect(batchAnswerSchema.parse({ results: [1, null, 'x'] })).toEqual({ results: [1, null, 'x'] });
    expect(batchAnswerSchema.parse({ completed: 2, results: [1, 2], error: 'card declined', retry: false, extra: 1 })).toEqual({
      completed: 2,
      results: [1, 2],
      error: 'card declined',
      retry: false,
    });
    // A body with `completed` is never read as "all done": no error named, no results given.
    expect(batchAnswerSchema.parse({ completed: 1 })).toEqual({ completed: 1, results: [], error: 'the batch answer named no error' });
    // Anything else is no answer shape: every job completes with a null result.
    for (const other of [{}, { ok: true }, [1, 2], 'done', { results: 'x' }]) {
      expect(batchAnswerSchema.safeParse(other).success, JSON.stringify(other)).toBe(false);
    }
  });
});
