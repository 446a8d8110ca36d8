// meta's counters against the keys they count (review of issue 28), on the paths the model test
// (test/model) does not take: a debounce collapse, a 429's hold, a retry by hand, a cancel, a
// change of data, a TTL's expiry, a solo lease and a publish token's jobs. `bytes` is the data of
// waiting + delayed jobs (maxBytes), `pub` how many of those a publish token sent (publishMaxJobs),
// `live` every job not ended (maxJobs), and `expiring` holds each job with a deadline that has
// neither started nor ended.
import { describe, expect, it } from 'vitest';
import type { LeasedJob } from '../../src/core/engine/leases';
import { queueKeys } from '../../src/core/store/keys';
import { T0, usePrivateEngine } from '../helpers/engine';
import { uniqueName } from '../helpers/stack';

const env = usePrivateEngine();
const ref = (job: LeasedJob) => ({ id: job.id, lease: job.lease.token });

async function newQueue(config: Record<string, unknown> = {}): Promise<string> {
  env.clock.set(T0);
  const q = uniqueName('counters');
  await env.engine.putQueue(q, { endpoint: 'http://127.0.0.1:9/jobs', keepFailed: 100, keepCompleted: 100, ...config });
  return q;
}

const strings = (reply: unknown) => (reply as Buffer[]).map(String);

/** What meta counts, and what the keys hold. */
async function counters(q: string) {
  const keys = queueKeys(q);
  const read = (await env.admin.call(['HMGET', keys.meta, 'bytes', 'pub', 'live'])) as (Buffer | null)[];
  const [bytes, pub, live] = read.map((v) => Number(v === null ? 0 : String(v)));
  const flat = strings(await env.admin.call(['HGETALL', keys.jobs]));
  const leased = new Set(strings(await env.admin.call(['ZRANGE', keys.active, 0, -1])).map((member) => member.split(' ')[0]));
  const want = { bytes: 0, pub: 0, live: 0, expiring: [] as string[] };
  for (let at = 0; at < flat.length; at += 2) {
    const id = flat[at]!;
    const lines = flat[at + 1]!.split('\n');
    const state = JSON.parse(lines[0]!) as { st?: string; h?: unknown; g: string; x?: number; a?: number };
    const waits = (state.st === undefined && !leased.has(id)) || state.st === 'delayed';
    const ended = state.st !== undefined && state.st !== 'delayed';
    if (waits) want.bytes += Buffer.byteLength(lines.slice(state.h ? 2 : 1).join('\n'));
    if (!ended) want.live += 1;
    if (waits && id.startsWith('pub:')) want.pub += 1;
    if (waits && state.x !== undefined && state.a === undefined) want.expiring.push(`${id} ${state.g}`);
  }
  const expiring = strings(await env.admin.call(['ZRANGE', keys.expiring, 0, -1]));
  return { got: { bytes, pub, live, expiring: expiring.sort() }, want: { ...want, expiring: want.expiring.sort() } };
}

async function expectExact(q: string, step: string) {
  const { got, want } = await counters(q);
  expect(got, step).toEqual(want);
}

describe("meta's counters stay exact", () => {
  it('through debounce collapses (into a waiting, a delayed and a new job), with data that grows and shrinks', async () => {
    const q = await newQueue();
    await env.engine.enqueue(q, { id: 'w', group: 'g', data: 'x', debounce: { key: 'k1', delayMs: 0 } });
    await expectExact(q, 'enqueued');
    await env.engine.enqueueBatch(q, [{ id: 'w2', group: 'g', data: 'a much longer piece of data', debounce: { key: 'k1', delayMs: 0 } }]);
    await expectExact(q, 'collapsed into a waiting job, data grew');
    await env.engine.enqueueBatch(q, [{ id: 'w3', group: 'g', data: 1, debounce: { key: 'k1', delayMs: 60_000 } }]);
    await expectExact(q, 'collapsed, the waiting job now delayed, data shrank');
    await env.engine.enqueueBatch(q, [
      { id: 'n1', group: 'h', data: 'first', debounce: { key: 'k2', delayMs: 1000 } },
      { id: 'n2', group: 'h', data: 'second, longer', debounce: { key: 'k2', delayMs: 1000 } },
    ]);
    await expectExact(q, 'collapsed into a job of the same call');
    await env.engine.updateJob(q, 'n1', { data: { bigger: 'than it was before' } });
    await expectExact(q, 'data changed');
    await env.engine.promoteJob(q, 'n1');
    await expectExact(q, 'promoted');
  });

  it("through a 429's hold, a failure retried, a lease that ran out, a retry by hand and cancels", async () => {
    const q = await newQueue({ maxAttempts: 2, backoff: { type: 'fixed', delayMs: 1000, jitter: false } });
    await env.engine.enqueueBatch(q, [
      { id: 'a', group: 'a', data: 'aaaa' },
      { id: 'b', group: 'b', data: 'bbbbbbbb' },
      { id: 'c', group: 'c', data: 'cc' },
      { id: 'd', group: 'd', data: 'dddddd', delayMs: 5000 },
    ]);
    const { jobs } = await env.engine.reserve(q, 3);
    await expectExact(q, 'leased');
    expect(jobs.map((job) => job.id).sort()).toEqual(['a', 'b', 'c']); // c's lease runs out below
    const [a, b] = ['a', 'b'].map((id) => jobs.find((job) => job.id === id)!);
    await env.engine.settle(q, [
      { kind: 'fail', ...ref(a!), error: 'slow down', status: 429, retryAfterMs: 500 },
      { kind: 'fail', ...ref(b!), error: 'boom' },
    ], 0);
    await expectExact(q, 'held by a 429, waiting for a retry');
    env.clock.advance(1000);
    await env.engine.tick(q);
    await expectExact(q, 'released');
    const again = (await env.engine.reserve(q, 10)).jobs;
    for (const job of again) await env.engine.settle(q, [{ kind: 'fail', ...ref(job), error: 'boom again' }], 0);
    await expectExact(q, 'failed for good (b), retried (a)');
    env.clock.advance(120_000); // c's lease runs out
    await env.engine.tick(q);
    await expectExact(q, "lease ran out, d due");
    await env.engine.retryJob(q, 'b');
    await expectExact(q, 'retried by hand');
    await env.engine.cancelJob(q, 'b');
    await env.engine.cancelJob(q, 'd');
    await expectExact(q, 'cancelled');
    await env.engine.retryJobs(q, { state: 'failed' });
    await expectExact(q, 'retried in bulk');
  });

  it("through a TTL's expiry, solo leases and a publish token's jobs", async () => {
    const q = await newQueue({ publishTtlMs: 10_000, publishTokens: ['t'.repeat(32)] });
    const publisher = { config: await env.engine.getStoredConfig(q), client: 'c1' };
    await env.engine.enqueueAndReserve(q, { id: 'solo', group: 's', data: 'solo data', ttlMs: 10_000 }, 1);
    await env.engine.enqueueAndReserve(q, { id: 'p1', group: 'p', data: 'published' }, 0, undefined, publisher);
    await env.engine.enqueueAndReserve(q, { id: 'p2', group: 'p', data: 'published too' }, 1, undefined, publisher);
    await env.engine.enqueueAndReserve(q, { id: 'p3', group: 'q', data: 'solo published' }, 1, undefined, publisher);
    await env.engine.enqueue(q, { id: 't1', group: 't', data: 'expires', ttlMs: 5000, delayMs: 10_000 });
    await env.engine.enqueue(q, { id: 't2', group: 'p', data: 'expires too', ttlMs: 5000 });
    await expectExact(q, 'enqueued');
    expect((await counters(q)).got).toMatchObject({ pub: 1, expiring: ['pub:p2 p', 't1 t', 't2 p'] }); // p2 waits: p1 was leased as p2 came, p3 solo
    env.clock.advance(20_000);
    await env.engine.reserve(q, 10);
    await expectExact(q, 'heads past their deadline held back');
    await env.engine.tick(q);
    await env.engine.tick(q);
    await expectExact(q, 'expired');
    const leased = (await env.engine.reserve(q, 10)).jobs;
    await env.engine.settle(q, leased.map((job) => ({ kind: 'complete' as const, ...ref(job) })), 0);
    await expectExact(q, 'completed');
    await env.engine.enqueueAndReserve(q, { id: 'p4', group: 'r', data: 'removed' }, 0, undefined, publisher);
    await expectExact(q, 'enqueued again');
    await env.engine.removeJob(q, 'pub:p4');
    await expectExact(q, 'removed');
  });
});

describe('maxBytes', () => {
  const MIB = 1_048_576;
  const text = (bytes: number) => 'x'.repeat(bytes - 2); // its JSON: the quotes make it `bytes`

  it("counts what a debounce collapse adds: one that would pass it is refused, writing nothing; one that shrinks the data is not", async () => {
    const q = await newQueue({ maxBytes: MIB, maxPayloadBytes: MIB });
    await env.engine.enqueue(q, { id: 'small', group: 'g', data: text(1000), debounce: { key: 'k', delayMs: 60_000 } });
    await env.engine.enqueue(q, { id: 'big', group: 'h', data: text(MIB - 2000) });
    const before = await counters(q);
    expect(before.got.bytes).toBe(MIB - 1000);
    // Collapsing into `small` would store 1,000 bytes more than maxBytes allows.
    await expect(env.engine.enqueueBatch(q, [{ group: 'g', data: text(3000), debounce: { key: 'k', delayMs: 60_000 } }])).rejects.toMatchObject({
      code: 'QUEUE_FULL',
    });
    expect(await counters(q)).toEqual(before);
    expect((await env.engine.getJob(q, 'small')).data).toBe(text(1000));
    // A collapse whose data is no larger is taken, full as the queue is.
    await env.engine.enqueue(q, { id: 'filler', group: 'i', data: text(1000) });
    await env.engine.enqueueBatch(q, [{ group: 'g', data: text(500), debounce: { key: 'k', delayMs: 60_000 } }]);
    expect((await env.engine.getJob(q, 'small')).data).toBe(text(500));
    await expectExact(q, 'collapsed, smaller');
  });

  it('counts what a change of data adds: one that would pass maxBytes is refused, writing nothing; one that shrinks it is not', async () => {
    const q = await newQueue({ maxBytes: MIB, maxPayloadBytes: MIB });
    await env.engine.enqueue(q, { id: 'small', group: 'g', data: text(1000), delayMs: 60_000 });
    await env.engine.enqueue(q, { id: 'big', group: 'h', data: text(MIB - 2000), delayMs: 60_000 });
    const before = await counters(q);
    await expect(env.engine.updateJob(q, 'small', { data: text(3000) })).rejects.toMatchObject({ code: 'QUEUE_FULL', details: { limit: 'maxBytes' } });
    expect(await counters(q)).toEqual(before);
    expect((await env.engine.getJob(q, 'small')).data).toBe(text(1000));
    await env.engine.updateJob(q, 'big', { data: text(10) });
    await expectExact(q, 'data shrunk');
  });
});
