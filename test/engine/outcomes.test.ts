// Outcome callbacks in the engine, on a test clock: the script that ends a job records its
// outcome (completed, failed for good, through a settle or an expired lease in the tick) and
// leases it to its caller; attempts are settled, retried by the schedule and abandoned after the
// last; a lease nobody settles comes round again through the tick; the due index names the
// queue when an attempt is due; a queue without a callback URL writes nothing of it; a stored
// callback URL on an internal address is a failed attempt, never fetched.
import { describe, expect, it, onTestFinished } from 'vitest';
import { queueKeys } from '../../src/core/store/keys';
import type { LeasedJob } from '../../src/core/engine/leases';
import { NOT_SENT, outcomeBody, sendOutcome } from '../../src/core/push/outcome-callback';
import { createSigners } from '../../src/core/push/signing';
import { startEndpoint } from '../helpers/endpoint';
import { rejectsWith, setupQueue, T0 } from '../helpers/engine';
import { adminClient } from '../helpers/stack';

const CALLBACK = 'https://producer.example/outcomes';
const LEASE_MS = 15_000; // an outcome attempt's lease (outcome.lua)
/** The waits after attempts 1-5 fail (settle-outcomes.lua; docs/delivery.md#outcome-callbacks). */
const SCHEDULE = [5_000, 30_000, 120_000, 600_000, 3_600_000];

const ref = (job: LeasedJob) => ({ id: job.id, lease: job.lease.token });

async function reserveOne(engine: Awaited<ReturnType<typeof setupQueue>>['engine'], q: string): Promise<LeasedJob> {
  const [job] = (await engine.reserve(q, 1)).jobs;
  expect(job).toBeDefined();
  return job!;
}

async function dueAt(q: string): Promise<number | null> {
  const admin = adminClient();
  try {
    const score = await admin.call(['ZSCORE', 'gq:due', q]);
    return score === null ? null : Number(score);
  } finally {
    admin.close();
  }
}

describe('recording an outcome', () => {
  it('a completed job with its own callbackUrl: recorded and leased to the settling caller, body as sent', async () => {
    const { engine, q } = await setupQueue();
    await engine.enqueue(q, { id: 'j', group: 'g', data: 1, callbackUrl: CALLBACK });
    const job = await reserveOne(engine, q);
    expect(job.recordNeeded).toBe(true);
    const settled = await engine.settle(q, [{ kind: 'complete', ...ref(job), result: { big: 12345678901234567890n.toString(), list: [] } }], 0);
    expect(settled.outcomes).toEqual([
      {
        queue: q,
        tag: q,
        id: 'j',
        record: { u: CALLBACK, g: 'g', s: 'completed', r: '{"big":"12345678901234567890","list":[]}', a: 1, f: T0, n: 1, t: T0 + LEASE_MS, w: expect.stringMatching(/^[0-9a-f]{32}$/) },
        secrets: { signingSecret: undefined, signingSecretNext: undefined }, // the deployment's
      },
    ]);
    expect(JSON.parse(outcomeBody(settled.outcomes[0]!))).toEqual({
      id: 'j', queue: q, group: 'g', state: 'completed', result: { big: '12345678901234567890', list: [] }, attempts: 1, finishedAt: T0,
    });
    // keepCompleted 0: the job is gone, its outcome is not; its lease end makes the queue due.
    await rejectsWith(engine.getJob(q, 'j'), 'JOB_NOT_FOUND');
    expect(await dueAt(q)).toBeLessThanOrEqual(T0 + LEASE_MS);
  });

  it("a job failed for good on a queue with a callbackUrl: the job view shows the URL and the pending outcome", async () => {
    const { engine, q } = await setupQueue({ callbackUrl: CALLBACK, keepFailed: 10 });
    await engine.enqueue(q, { id: 'j', group: 'g' });
    const job = await reserveOne(engine, q);
    expect(job.recordNeeded).toBe(false); // the queue's URL, not its own
    const { state, outcomes } = await engine.fail(q, { ...ref(job), error: 'boom', retry: false });
    expect(state).toBe('failed');
    expect(JSON.parse(outcomeBody(outcomes[0]!))).toEqual({ id: 'j', queue: q, group: 'g', state: 'failed', error: 'boom', attempts: 1, finishedAt: T0 });
    expect(await engine.getJob(q, 'j')).toMatchObject({
      state: 'failed',
      callbackUrl: CALLBACK,
      outcome: { state: 'pending', attempts: 1, nextAttemptAt: T0 + LEASE_MS },
    });
  });

  it('a retried attempt records nothing; the last one, expired in the tick, does', async () => {
    const { clock, engine, q } = await setupQueue({ maxAttempts: 2, backoff: { type: 'fixed', delayMs: 0, jitter: false } });
    await engine.enqueue(q, { id: 'j', group: 'g', callbackUrl: CALLBACK });
    const first = await engine.fail(q, { ...ref(await reserveOne(engine, q)), error: 'once' });
    expect(first).toMatchObject({ state: 'waiting', outcomes: [] });
    await reserveOne(engine, q);
    clock.advance(35_001); // the second lease expires unanswered
    const ticked = await engine.tick(q);
    expect(ticked.outcomes).toHaveLength(1);
    expect(ticked.outcomes[0]!.record).toMatchObject({ s: 'failed', a: 2, e: 'lease expired: no answer within 35000 ms', n: 1 });
  });

  it('a queue without a callback URL writes no outcome keys and no meta field', async () => {
    const { engine, q } = await setupQueue({ keepCompleted: 5 });
    await engine.enqueue(q, { id: 'j', group: 'g' });
    const { outcomes } = await engine.complete(q, { ...ref(await reserveOne(engine, q)), result: 1 });
    expect(outcomes).toEqual([]);
    const keys = queueKeys(q);
    const admin = adminClient();
    try {
      expect(await admin.call(['EXISTS', keys.outcomes, keys.outcomeRecords])).toBe(0);
      expect(await admin.call(['HEXISTS', keys.meta, 'outcomes'])).toBe(0);
    } finally {
      admin.close();
    }
    expect((await engine.getJob(q, 'j')).outcome).toBeUndefined();
  });
});

describe('attempts', () => {
  async function completedWithOutcome() {
    const setup = await setupQueue({ callbackUrl: CALLBACK, keepCompleted: 10 });
    await setup.engine.enqueue(setup.q, { id: 'j', group: 'g' });
    const { outcomes } = await setup.engine.complete(setup.q, { ...ref(await reserveOne(setup.engine, setup.q)), result: 'ok' });
    expect(outcomes).toHaveLength(1);
    return { ...setup, outcome: outcomes[0]! };
  }

  it('a job cancelled after a failed attempt: its outcome says cancelled, without that error', async () => {
    const { engine, q } = await setupQueue({ callbackUrl: CALLBACK, keepFailed: 10, backoff: { type: 'fixed', delayMs: 0, jitter: false } });
    await engine.enqueue(q, { id: 'j', group: 'g' });
    await engine.fail(q, { ...ref(await reserveOne(engine, q)), error: 'boom' });
    await reserveOne(engine, q);
    const { outcomes } = await engine.cancelJob(q, 'j');
    expect(JSON.parse(outcomeBody(outcomes[0]!))).toEqual({ id: 'j', queue: q, group: 'g', state: 'cancelled', attempts: 2, finishedAt: T0 });
  });

  it('a job retried by hand drops the outcome of the run that ended, and a late settle does not bring it back', async () => {
    const { engine, q } = await setupQueue({ callbackUrl: CALLBACK, keepFailed: 10 });
    await engine.enqueue(q, { id: 'j', group: 'g' });
    const [outcome] = (await engine.fail(q, { ...ref(await reserveOne(engine, q)), error: 'boom', retry: false })).outcomes;
    await engine.retryJob(q, 'j');
    await engine.settleOutcomes(q, [{ outcome: outcome!, error: '' }]);
    const job = await engine.getJob(q, 'j');
    expect(job.state).toBe('waiting');
    expect(job.outcome).toBeUndefined();
  });

  it('delivered: the record goes, the kept job shows when; the next tick clears the flag in meta', async () => {
    const { clock, engine, q, outcome } = await completedWithOutcome();
    clock.advance(300);
    await engine.settleOutcomes(q, [{ outcome, error: '' }]);
    expect((await engine.getJob(q, 'j')).outcome).toEqual({ state: 'delivered', attempts: 1, deliveredAt: T0 + 300 });
    const admin = adminClient();
    try {
      expect(await admin.call(['EXISTS', queueKeys(q).outcomes, queueKeys(q).outcomeRecords])).toBe(0);
      clock.advance(LEASE_MS); // the queue's timer for the attempt's lease end
      await engine.tick(q);
      expect(await admin.call(['HEXISTS', queueKeys(q).meta, 'outcomes'])).toBe(0);
    } finally {
      admin.close();
    }
  });

  it('failed attempts are retried by the schedule (6 attempts over 72 minutes), then abandoned', async () => {
    const { clock, engine, q, outcome: first } = await completedWithOutcome();
    let outcome = first;
    const attemptsAt = [clock.now()];
    for (let n = 1; n < 6; n++) {
      await engine.settleOutcomes(q, [{ outcome, error: `HTTP 503: down ${n}` }]);
      const wait = SCHEDULE[n - 1]!;
      expect((await engine.getJob(q, 'j')).outcome).toEqual({
        state: 'pending', attempts: n, nextAttemptAt: clock.now() + wait, lastError: `HTTP 503: down ${n}`,
      });
      expect(await dueAt(q)).toBeLessThanOrEqual(clock.now() + wait);
      clock.advance(wait - 1);
      expect((await engine.tick(q)).outcomes).toEqual([]); // not before its time
      clock.advance(1);
      const [next] = (await engine.tick(q)).outcomes;
      expect(next!.record.n).toBe(n + 1);
      outcome = next!;
      attemptsAt.push(clock.now());
    }
    await engine.settleOutcomes(q, [{ outcome, error: 'HTTP 503: down 6' }]);
    expect((await engine.getJob(q, 'j')).outcome).toEqual({ state: 'abandoned', attempts: 6, lastError: 'HTTP 503: down 6' });
    expect(attemptsAt.at(-1)! - attemptsAt[0]!).toBe(4_355_000); // over 10 minutes: 72 min 35 s
    clock.advance(86_400_000);
    expect((await engine.tick(q)).outcomes).toEqual([]);
  });

  it('an attempt handed back unsent counts for nothing: leased and handed back ten times, it is still attempt 1', async () => {
    const { clock, engine, q, outcome: first } = await completedWithOutcome();
    let outcome = first;
    for (let i = 0; i < 10; i++) {
      await engine.settleOutcomes(q, [{ outcome, error: NOT_SENT }]);
      // Due again at once, nothing counted, no error.
      expect((await engine.getJob(q, 'j')).outcome).toEqual({ state: 'pending', attempts: 0, nextAttemptAt: clock.now() });
      expect(await dueAt(q)).toBeLessThanOrEqual(clock.now());
      clock.advance(1);
      const [next] = (await engine.tick(q)).outcomes;
      expect(next!.record.n).toBe(1);
      outcome = next!;
    }
    // A sent attempt that fails counts as the first, and waits the schedule's first wait.
    await engine.settleOutcomes(q, [{ outcome, error: 'HTTP 503: down' }]);
    expect((await engine.getJob(q, 'j')).outcome).toEqual({ state: 'pending', attempts: 1, nextAttemptAt: clock.now() + SCHEDULE[0]!, lastError: 'HTTP 503: down' });
  });

  it("carries the queue's own signing secrets with each leased outcome, never in its record", async () => {
    const own = 'whsec_MDEyMzQ1Njc4OWFiY2RlZmdoaWprbG1u';
    const { engine, q } = await setupQueue({ callbackUrl: CALLBACK, signingSecret: own });
    await engine.enqueue(q, { id: 'j', group: 'g' });
    const { outcomes } = await engine.complete(q, { ...ref(await reserveOne(engine, q)), result: 1 });
    expect(outcomes[0]!.secrets).toEqual({ signingSecret: own, signingSecretNext: undefined });
    const admin = adminClient();
    try {
      const stored = await admin.call(['HGET', queueKeys(q).outcomeRecords, 'j']);
      expect(String(stored)).not.toContain(own.slice('whsec_'.length));
    } finally {
      admin.close();
    }
  });

  it('a stale attempt (its lease ended and the tick leased the outcome again) changes nothing', async () => {
    const { clock, engine, q, outcome } = await completedWithOutcome();
    clock.advance(LEASE_MS);
    const [second] = (await engine.tick(q)).outcomes;
    await engine.settleOutcomes(q, [{ outcome, error: '' }]); // the first sender, late
    expect((await engine.getJob(q, 'j')).outcome).toMatchObject({ state: 'pending', attempts: 2 });
    await engine.settleOutcomes(q, [{ outcome: second!, error: '' }]);
    expect((await engine.getJob(q, 'j')).outcome).toMatchObject({ state: 'delivered', attempts: 2 });
  });
});

describe('sending', () => {
  it('a stored callback URL on an internal address is a failed attempt, never fetched', async () => {
    const server = await startEndpoint(() => ({ status: 204 }));
    onTestFinished(() => server.close());
    const { clock, engine, q } = await setupQueue({ keepCompleted: 10 });
    const keys = queueKeys(q);
    // Stored while loopback was allowed (this engine allows it), sent by a deployment that does not.
    await engine.enqueue(q, { id: 'j', group: 'g', callbackUrl: server.url });
    const [first] = (await engine.complete(q, { ...ref(await reserveOne(engine, q)), result: 1 })).outcomes;
    const options = { signers: createSigners(['whsec_MDEyMzQ1Njc4OWFiY2RlZg==']), now: clock.now };
    const loopbackRefused = "not sent: the callback URL's host 127.0.0.1 is an internal address (loopback)";
    expect(await sendOutcome(first!, options)).toBe(loopbackRefused);
    expect(await sendOutcome(first!, { ...options, allowHttpLoopback: false })).toBe(loopbackRefused);
    await engine.settleOutcomes(q, [{ outcome: first!, error: loopbackRefused }]);
    expect((await engine.getJob(q, 'j')).outcome).toMatchObject({ state: 'pending', attempts: 1, lastError: loopbackRefused });

    // A record stored before internal addresses were refused: the tick leases it, the send refuses it.
    const admin = adminClient();
    try {
      const stored = JSON.parse(String(await admin.call(['HGET', keys.outcomeRecords, 'j']))) as { u: string };
      await admin.call(['HSET', keys.outcomeRecords, 'j', JSON.stringify({ ...stored, u: 'https://[::ffff:0:169.254.169.254]/latest/meta-data' })]);
    } finally {
      admin.close();
    }
    clock.advance(SCHEDULE[0]!);
    const [second] = (await engine.tick(q)).outcomes;
    expect(second!.record.u).toBe('https://[::ffff:0:169.254.169.254]/latest/meta-data');
    const internalRefused = "not sent: the callback URL's host [::ffff:0:a9fe:a9fe] is an internal address";
    expect(await sendOutcome(second!, { ...options, allowHttpLoopback: true })).toBe(internalRefused);
    await engine.settleOutcomes(q, [{ outcome: second!, error: internalRefused }]);
    expect((await engine.getJob(q, 'j')).outcome).toMatchObject({ state: 'pending', attempts: 2, lastError: internalRefused });
    expect(server.received).toHaveLength(0);

    // Where loopback is allowed (local development), a loopback callback URL is sent.
    expect(await sendOutcome(first!, { ...options, allowHttpLoopback: true })).toBe('');
    expect(server.received).toHaveLength(1);
  });
});
