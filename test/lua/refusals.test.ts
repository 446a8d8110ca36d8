// A script that refuses leaves nothing behind (issue 16): every write script is run into each of
// its refusal paths, and every key of the queue is byte-for-byte the same after (DUMP, and every
// field and value of hashes: test/helpers/snapshot.ts), its `meta` counters included. A refusal
// must also not create the keys of a queue that does not exist.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scripts } from '../../src/lua/scripts.generated';
import type { Engine } from '../../src/core/engine';
import { createRedis } from '../../src/core/store/redis';
import { runScript, keysFor } from '../../src/core/store/scripts';
import type { LeasedJob } from '../../src/core/engine/leases';
import { type TestClock, createQueue, testClock, testEngine } from '../helpers/engine';
import { snapshotQueue } from '../helpers/snapshot';
import { adminClient, stack, uniqueName } from '../helpers/stack';

const admin = adminClient();
afterAll(() => admin.close());

/** Expects `call` to be refused with `code` (or as `refusal` says) and to leave every key of `queue` as it was. */
async function refusedUnchanged(queue: string, call: () => Promise<unknown>, refusal: string | object): Promise<void> {
  const before = await snapshotQueue(admin, queue);
  await expect(call()).rejects.toMatchObject(typeof refusal === 'string' ? { code: refusal } : refusal);
  expect(await snapshotQueue(admin, queue)).toEqual(before);
}

/** Runs a script straight, as the engine would, with the KEYS it names for `target`. */
function direct(name: keyof typeof scripts, target: { queue: string; group?: string; client?: string; token?: string }, args: (string | number)[]) {
  const { restUrl, restToken } = stack();
  const script = scripts[name];
  return runScript(createRedis({ url: restUrl, token: restToken }), script, keysFor(script, target), args);
}

describe('every refusal of a write script writes nothing', () => {
  let clock: TestClock;
  let engine: Engine;
  let q: string;
  let active: LeasedJob;
  let stale: LeasedJob;

  // A queue with something in every key: waiting, active, delayed, completed, failed, cancelled
  // jobs, a held (retried) group, a paused group, a flow group's state, dedup and debounce
  // entries, a repeat, revoked leases and per-minute counters.
  beforeAll(async () => {
    clock = testClock();
    engine = testEngine(clock);
    q = await createQueue(engine, {
      keepCompleted: 10, keepFailed: 10, maxPayloadBytes: 100, maxAttempts: 2, concurrency: 10,
      backoff: { type: 'fixed', delayMs: 60_000, jitter: false },
    }, 'refusals');
    await engine.setGroupLimits(q, 'flow', { concurrency: 2 });
    await engine.enqueueBatch(q, [
      { id: 'done', group: 'a' }, { id: 'bad', group: 'b', maxAttempts: 1 }, { id: 'retried', group: 'c' },
      { id: 'cancelled', group: 'd' }, { id: 'live', group: 'e' }, { id: 'stale', group: 'f' },
      { id: 'f1', group: 'flow' }, { id: 'f2', group: 'flow' }, { id: 'f3', group: 'flow' },
    ]);
    const leased = new Map((await engine.reserve(q, 10)).jobs.map((j) => [j.id, j]));
    const end = (id: string, kind: 'complete' | 'fail') => ({ kind, id, lease: leased.get(id)!.lease.token, error: 'x' });
    await engine.settle(q, [end('done', 'complete'), end('bad', 'fail'), end('retried', 'fail'), end('f1', 'complete')], 0);
    await engine.cancelJob(q, 'cancelled');
    active = leased.get('live')!;
    stale = leased.get('stale')!;
    await engine.cancelJob(q, 'stale'); // its lease is remembered in `revoked`
    await engine.enqueueBatch(q, [
      { id: 'waiting', group: 'e' }, { id: 'head', group: 'g' }, { id: 'later', group: 'h', delayMs: 5000 },
      { group: 'i', debounce: { key: 'k', delayMs: 1000 } },
    ]);
    await engine.pauseGroup(q, 'g');
    await engine.putRepeat(q, 'daily', { every: 86_400_000, group: 'r' });
  });

  it('enqueue: PAYLOAD_TOO_LARGE, alone and as the second job of a batch', async () => {
    const big = 'x'.repeat(200);
    await refusedUnchanged(q, () => engine.enqueue(q, { id: 'n1', group: 'a', data: big }), 'PAYLOAD_TOO_LARGE');
    await refusedUnchanged(q, () => engine.enqueueBatch(q, [{ id: 'n2', group: '0', data: 1 }, { id: 'n3', group: 'a', data: big }]), 'PAYLOAD_TOO_LARGE');
  });

  it('settle: a lost lease and a cancelled one, with reserveNext (nothing leased, no timer)', async () => {
    await engine.tick(q); // the queue's timer is now past `now`: a refused settle must not lower it
    await refusedUnchanged(q, () => engine.complete(q, { id: 'live', lease: '0123456789abcdef' }, 2), 'LEASE_LOST');
    await refusedUnchanged(q, () => engine.fail(q, { id: 'waiting', lease: active.lease.token, error: 'x' }, 2), 'LEASE_LOST');
    await refusedUnchanged(q, () => engine.complete(q, { id: 'stale', lease: stale.lease.token }, 0), 'JOB_CANCELLED');
  });

  it('heartbeat and progress: a lost lease and a cancelled one', async () => {
    await refusedUnchanged(q, () => engine.heartbeat(q, { id: 'live', lease: 'ffffffffffffffff' }), 'LEASE_LOST');
    await refusedUnchanged(q, () => engine.heartbeat(q, { id: 'stale', lease: stale.lease.token }), 'JOB_CANCELLED');
    await refusedUnchanged(q, () => engine.progress(q, { id: 'live', lease: 'ffffffffffffffff', progress: 1 }), 'LEASE_LOST');
    await refusedUnchanged(q, () => engine.progress(q, { id: 'stale', lease: stale.lease.token, progress: 1 }), 'JOB_CANCELLED');
  });

  it('job operations in a state that refuses them, or on a job that is not there', async () => {
    await refusedUnchanged(q, () => engine.cancelJob(q, 'done'), 'INVALID_STATE');
    await refusedUnchanged(q, () => engine.cancelJob(q, 'nope'), 'JOB_NOT_FOUND');
    await refusedUnchanged(q, () => engine.removeJob(q, 'live'), 'INVALID_STATE');
    await refusedUnchanged(q, () => engine.removeJob(q, 'nope'), 'JOB_NOT_FOUND');
    await refusedUnchanged(q, () => engine.retryJob(q, 'waiting'), 'INVALID_STATE');
    await refusedUnchanged(q, () => engine.promoteJob(q, 'waiting'), 'INVALID_STATE');
    await refusedUnchanged(q, () => engine.updateJob(q, 'live', { data: 1 }), 'INVALID_STATE');
    await refusedUnchanged(q, () => engine.updateJob(q, 'later', { data: 'x'.repeat(200) }), 'PAYLOAD_TOO_LARGE');
    await refusedUnchanged(q, () => engine.retryJob(q, 'nope'), 'JOB_NOT_FOUND');
    await refusedUnchanged(q, () => engine.promoteJob(q, 'nope'), 'JOB_NOT_FOUND');
    await refusedUnchanged(q, () => engine.updateJob(q, 'nope', { data: 1 }), 'JOB_NOT_FOUND');
  });

  it('job scripts given another group than the job is in: JOB_CHANGED_GROUP', async () => {
    const now = clock.now();
    const changed = { message: 'job changed group' }; // the engine reads the group again and retries
    await refusedUnchanged(q, () => direct('cancelJob', { queue: q, group: 'zz' }, ['waiting', 'zz', now]), changed);
    await refusedUnchanged(q, () => direct('removeJob', { queue: q, group: 'zz' }, ['waiting', 'zz', now]), changed);
    await refusedUnchanged(q, () => direct('rejoinJob', { queue: q, group: 'zz' }, ['later', 'zz', now, 'delayed', '']), changed);
    await refusedUnchanged(q, () => direct('rejoinJob', { queue: q, group: 'zz' }, ['bad', 'zz', now, 'failed', 'seed']), changed);
    await refusedUnchanged(q, () => direct('updateJob', { queue: q, group: 'zz' }, [now, 'waiting', '2', 0, 'zz']), changed);
  });

  it('repeats: deleting an unknown one; committing one that is gone or changed; one too many', async () => {
    await refusedUnchanged(q, () => engine.deleteRepeat(q, 'nope'), 'REPEAT_NOT_FOUND');
    const now = clock.now();
    await refusedUnchanged(q, () => direct('commitRepeat', { queue: q, group: 'r' }, [now, 'nope', 1, now, now + 1000, 'r']), 'REPEAT_NOT_FOUND');
    const spec = JSON.stringify({ group: 'r', data: 'null', every: 1000, tz: 'UTC' });
    await refusedUnchanged(q, () => direct('putRepeat', { queue: q }, ['another', spec, now + 1000, 1, now]), { code: 'VALIDATION_FAILED', message: expect.stringContaining('most repeatable jobs') });
    // A commit of a version the repeat no longer has is no error, and writes nothing either.
    const before = await snapshotQueue(admin, q);
    expect(await direct('commitRepeat', { queue: q, group: 'r' }, [now, 'daily', 99, now, now + 1000, 'r'])).toEqual([0]);
    expect(await snapshotQueue(admin, q)).toEqual(before);
  });

  it('put-queue while a deletion is under way: QUEUE_DELETING', async () => {
    const other = await createQueue(engine, {}, 'refusals-deleting');
    await admin.call(['HSET', `gq:{${other}}:meta`, 'deleting', '1']); // a deletion's first step ran
    await refusedUnchanged(other, () => direct('putQueue', { queue: other }, [clock.now(), '{}', 'secret', '', '']), { code: 'INVALID_STATE', message: 'the queue is being deleted' });
    await engine.deleteQueue(other);
  });

  it('put-queue over a revision its writer did not read: CONFIG_CHANGED', async () => {
    const config = JSON.stringify({ endpoint: 'http://127.0.0.1:9/jobs', concurrency: 3, revision: 5 });
    const refusal = { code: 'INVALID_STATE', luaStatus: 'CONFIG_CHANGED' };
    await refusedUnchanged(q, () => direct('putQueue', { queue: q }, [clock.now(), config, 'secret', '', '7']), refusal);
    await refusedUnchanged(q, () => direct('putQueue', { queue: q }, [clock.now(), config, 'secret', '', 'none']), refusal);
  });

  it('repair: a page whose groups are not declared yet names them and writes nothing', async () => {
    await admin.call(['HSET', `gq:{${q}}:meta`, 'c:7', '1', 'f:8', '2']); // old counters it would delete
    const before = await snapshotQueue(admin, q);
    const reply = await direct('repair', { queue: q }, [clock.now(), '0', 100]);
    expect(reply.slice(0, 3)).toEqual([1, '0', expect.arrayContaining(['e', 'flow'])]);
    expect(await snapshotQueue(admin, q)).toEqual(before);
  });

  it("an opportunistic tick that finds another one's lock", async () => {
    clock.advance(6000); // the delayed job is due
    await engine.tick(q, { opportunistic: true }); // holds the lock for a second
    await engine.enqueue(q, { id: 'late', group: 'l', delayMs: 1 });
    clock.advance(10);
    const before = await snapshotQueue(admin, q);
    expect((await engine.tick(q, { opportunistic: true })).locked).toBe(true);
    expect(await snapshotQueue(admin, q)).toEqual(before);
  });
});

describe('a queue that does not exist: every write is refused and creates no key', () => {
  it('QUEUE_NOT_FOUND from each script, with nothing written under its name', async () => {
    const engine = testEngine(testClock());
    const q = uniqueName('missing');
    const lease = { id: 'j', lease: '0123456789abcdef' };
    const calls: [() => Promise<unknown>, string][] = [
      [() => engine.enqueue(q, { group: 'g' }), 'QUEUE_NOT_FOUND'],
      [() => engine.enqueueBatch(q, [{ group: '0' }, { group: 'f:0' }]), 'QUEUE_NOT_FOUND'],
      [() => engine.reserve(q, 1), 'QUEUE_NOT_FOUND'],
      [() => engine.complete(q, lease), 'LEASE_LOST'],
      [() => engine.heartbeat(q, lease), 'LEASE_LOST'],
      [() => engine.progress(q, { ...lease, progress: 1 }), 'LEASE_LOST'],
      [() => engine.tick(q), 'QUEUE_NOT_FOUND'],
      [() => engine.pauseQueue(q), 'QUEUE_NOT_FOUND'],
      [() => engine.pauseGroup(q, 'g'), 'QUEUE_NOT_FOUND'],
      [() => engine.setGroupLimits(q, 'g', { concurrency: 2 }), 'QUEUE_NOT_FOUND'],
      [() => engine.putRepeat(q, 'k', { every: 1000, group: 'g' }), 'QUEUE_NOT_FOUND'],
      [() => engine.deleteRepeat(q, 'k'), 'QUEUE_NOT_FOUND'],
      [() => engine.cleanJobs(q, { state: 'completed' }), 'QUEUE_NOT_FOUND'],
      [() => engine.repairQueue(q), 'QUEUE_NOT_FOUND'],
      [() => direct('retryJobs', { queue: q }, [Date.now(), 'seed']), 'QUEUE_NOT_FOUND'],
      [() => direct('settleOutcomes', { queue: q }, [Date.now(), 0]), 'QUEUE_NOT_FOUND'],
      [() => direct('deleteQueue', { queue: q }, [10, '0']), 'QUEUE_NOT_FOUND'],
    ];
    for (const [call, code] of calls) await refusedUnchanged(q, call, code);
    expect((await snapshotQueue(admin, q)).size).toBe(0);
  });
});

describe("a publish token's refusals write nothing (docs/security.md#every-limit-and-its-default)", () => {
  it('enqueue: RATE_LIMITED by the client or the token window, QUEUE_FULL at publishMaxJobs, PAYLOAD_TOO_LARGE past publishMaxDataBytes', async () => {
    const engine = testEngine(testClock());
    const q = await createQueue(engine, {
      publishTokens: ['refusals-publish-token-01'],
      publishRateLimit: { max: 2, periodMs: 60_000 },
      publishTokenRateLimit: { max: 3, periodMs: 60_000 },
      publishMaxJobs: 4,
      publishMaxDataBytes: 10,
    }, 'pubrefusals');
    await engine.pauseQueue(q);
    const config = await engine.getStoredConfig(q);
    const from = (client: string) => ({ config, client, tokenHash: 'token-a' });
    const publish = (job: object, client: string) => engine.enqueueAndReserve(q, job, 0, undefined, from(client));
    await publish({ group: 'g' }, 'ip:203.0.113.1');
    await publish({ group: 'g' }, 'ip:203.0.113.1');
    await refusedUnchanged(q, () => publish({ group: 'g' }, 'ip:203.0.113.1'), { code: 'RATE_LIMITED', details: { limit: 'publishRateLimit' } });
    await publish({ group: 'g' }, 'ip:203.0.113.2');
    await refusedUnchanged(q, () => publish({ group: 'g' }, 'ip:203.0.113.3'), { code: 'RATE_LIMITED', details: { limit: 'publishTokenRateLimit' } });
    const other = (job: object) => engine.enqueueAndReserve(q, job, 0, undefined, { config, client: 'ip:203.0.113.4', tokenHash: 'token-b' });
    await other({ group: 'g' });
    await refusedUnchanged(q, () => other({ group: 'g' }), { code: 'QUEUE_FULL', details: { limit: 'publishMaxJobs', publishMaxJobs: 4 } });
    await refusedUnchanged(q, () => other({ group: 'g', data: 'x'.repeat(20) }), { code: 'PAYLOAD_TOO_LARGE', details: { index: 0, publishMaxDataBytes: 10 } });
  });

  it('enqueue: QUEUE_FULL at maxBytes, for new jobs and for a debounce collapse that grows the data it replaces', async () => {
    const MIB = 1_048_576;
    const engine = testEngine(testClock());
    const q = await createQueue(engine, { maxBytes: MIB, maxPayloadBytes: MIB }, 'bytesrefusals');
    await engine.enqueue(q, { id: 'd', group: 'g', data: 'x'.repeat(998), debounce: { key: 'k', delayMs: 60_000 } });
    await engine.enqueue(q, { id: 'big', group: 'h', data: 'x'.repeat(MIB - 2002) }); // MIB - 1000 bytes stored
    const full = { code: 'QUEUE_FULL', details: { limit: 'maxBytes', maxBytes: MIB } };
    await refusedUnchanged(q, () => engine.enqueue(q, { group: 'i', data: 'x'.repeat(1000) }), full);
    await refusedUnchanged(q, () => engine.enqueueBatch(q, [{ group: 'g', data: 'x'.repeat(2998), debounce: { key: 'k', delayMs: 60_000 } }]), full);
  });

  it("publish-rate: a partitioned queue's root refuses past either window and writes nothing", async () => {
    const engine = testEngine(testClock());
    const q = await createQueue(engine, { partitions: 4, concurrency: 4 }, 'pubroot');
    const limits = JSON.stringify({ publishRateLimit: { max: 2, periodMs: 60_000 }, publishTokenRateLimit: null });
    await direct('publishRate', { queue: q, client: 'ip:203.0.113.1', token: 't' }, [2, limits]);
    await refusedUnchanged(q, () => direct('publishRate', { queue: q, client: 'ip:203.0.113.1', token: 't' }, [1, limits]), 'RATE_LIMITED');
  });
});
