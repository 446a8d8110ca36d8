// The W3C trace context a job is enqueued with (docs/tracing.md), in the engine against the real
// Redis: stored in the job's state only when given (its cost in bytes measured on the stored
// record), carried on through every script that rewrites the state (a retry, a 429, an update,
// a retry by hand, a debounced enqueue) to each lease and to the outcome record; a repeat's runs
// have none. The same end to end, through the Worker: test/delivery/trace-context.test.ts.
import { afterAll, describe, expect, it } from 'vitest';
import type { Engine } from '../../src/core/engine';
import type { LeasedJob } from '../../src/core/engine/leases';
import { queueKeys } from '../../src/core/store/keys';
import type { TraceContext } from '../../src/protocol/trace-context';
import { setupQueue } from '../helpers/engine';
import { adminClient } from '../helpers/stack';

const TRACEPARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
const TRACESTATE = 'rojo=00f067aa0ba902b7,congo=t61rcWkgMzE';
const TRACE = { traceparent: TRACEPARENT, tracestate: TRACESTATE };

const admin = adminClient();
afterAll(() => admin.close());

/** Enqueues one job as the enqueue route does, with the trace context its headers gave. */
function enqueue(engine: Engine, q: string, job: Record<string, unknown>, trace?: TraceContext) {
  return engine.enqueueAndReserve(q, job, 0, undefined, undefined, trace);
}

async function reserveOne(engine: Engine, q: string): Promise<LeasedJob> {
  const [job] = (await engine.reserve(q, 1)).jobs;
  expect(job).toBeDefined();
  return job!;
}

/** The job's record as stored: `<state JSON>\n<data>`. */
async function storedRecord(q: string, id: string): Promise<string> {
  return String(await admin.call(['HGET', queueKeys(q).jobs, id]));
}

describe('storage', () => {
  it('stores the fields only when given, and they cost 63 bytes (traceparent) plus 8 + its length (tracestate) per job', async () => {
    const { engine, q } = await setupQueue();
    await enqueue(engine, q, { id: 'a', group: 'g', data: 1 });
    await enqueue(engine, q, { id: 'b', group: 'g', data: 1 }, { traceparent: TRACEPARENT });
    await enqueue(engine, q, { id: 'c', group: 'g', data: 1 }, TRACE);
    const [plain, parent, both] = await Promise.all(['a', 'b', 'c'].map((id) => storedRecord(q, id)));
    expect(plain).not.toMatch(/"t[ps]"/);
    expect(JSON.parse(parent!.split('\n')[0]!)).toMatchObject({ tp: TRACEPARENT });
    expect(JSON.parse(both!.split('\n')[0]!)).toMatchObject({ tp: TRACEPARENT, ts: TRACESTATE });
    const bytes = (text: string) => Buffer.byteLength(text);
    expect(bytes(parent!) - bytes(plain!)).toBe(63);
    expect(bytes(both!) - bytes(parent!)).toBe(8 + TRACESTATE.length);
  });

  it('GET of a job shows its trace context; a job without one shows none', async () => {
    const { engine, q } = await setupQueue();
    await enqueue(engine, q, { id: 'a', group: 'g' });
    await enqueue(engine, q, { id: 'b', group: 'g' }, TRACE);
    expect(await engine.getJob(q, 'a')).not.toHaveProperty('traceparent');
    expect(await engine.getJob(q, 'b')).toMatchObject(TRACE);
  });

  it("every job of a batch gets the call's trace context", async () => {
    const { engine, q } = await setupQueue({ concurrency: 5 });
    await engine.enqueueBatchAndReserve(q, { jobs: [{ group: 'a' }, { group: 'b' }, { group: 'c' }] }, 0, [], undefined, TRACE);
    const { jobs } = await engine.reserve(q, 5);
    expect(jobs).toHaveLength(3);
    for (const job of jobs) expect(job).toMatchObject(TRACE);
  });
});

describe('carried along with the state', () => {
  it('every lease has it: a retried attempt, one after a 429, after an update of the data, after a retry by hand', async () => {
    const { engine, q } = await setupQueue({ maxAttempts: 2, backoff: { type: 'fixed', delayMs: 0, jitter: false } });
    await enqueue(engine, q, { id: 'j', group: 'g', data: 1, delayMs: 1000 }, TRACE);
    await engine.updateJob(q, 'j', { data: 2, delayMs: 0 });
    const first = await reserveOne(engine, q);
    expect(first).toMatchObject({ ...TRACE, attempt: 1, data: 2 });

    await engine.fail(q, { id: first.id, lease: first.lease.token, error: 'boom' });
    const second = await reserveOne(engine, q);
    expect(second).toMatchObject({ ...TRACE, attempt: 2 });

    // A 429 uses no attempt, but rewrites the state (it counts 429s in a row).
    await engine.settle(q, [{ kind: 'fail', id: second.id, lease: second.lease.token, error: 'HTTP 429', status: 429, retryAfterMs: 0 }], 0);
    const third = await reserveOne(engine, q);
    expect(third).toMatchObject({ ...TRACE, attempt: 2 });

    await engine.fail(q, { id: third.id, lease: third.lease.token, error: 'boom' });
    expect((await engine.getJob(q, 'j')).state).toBe('failed');
    await engine.retryJob(q, 'j');
    expect(await reserveOne(engine, q)).toMatchObject({ ...TRACE, attempt: 1 });
  });

  it("a debounced enqueue that collapses into a waiting job leaves that job's trace context as it was", async () => {
    const { engine, q } = await setupQueue();
    const later = { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' };
    await enqueue(engine, q, { group: 'g', data: 1, debounce: { key: 'k', delayMs: 1000 } }, TRACE);
    const again = await enqueue(engine, q, { group: 'g', data: 2, debounce: { key: 'k', delayMs: 1000 } }, later);
    expect(again.results[0]).toMatchObject({ debounced: true });
    expect(await engine.getJob(q, again.results[0]!.id)).toMatchObject({ ...TRACE, data: 2 });
  });

  it('the outcome record of a job with a callback URL carries it', async () => {
    const { engine, q } = await setupQueue();
    await enqueue(engine, q, { id: 'j', group: 'g', callbackUrl: 'http://127.0.0.1:9/outcomes' }, TRACE);
    const job = await reserveOne(engine, q);
    const { outcomes } = await engine.settle(q, [{ kind: 'complete', id: job.id, lease: job.lease.token }], 0);
    expect(outcomes).toHaveLength(1);
    expect(outcomes[0]!.record).toMatchObject({ tp: TRACEPARENT, ts: TRACESTATE, s: 'completed' });
  });

  it("a repeat's runs have no producer, and so no trace context", async () => {
    const { clock, engine, q } = await setupQueue();
    await engine.putRepeat(q, 'r', { group: 'g', every: 60_000 });
    clock.advance(60_000);
    expect(await engine.tick(q)).toMatchObject({ repeatsCreated: 1 });
    const run = await reserveOne(engine, q);
    expect(run.traceparent).toBeUndefined();
    expect(run.tracestate).toBeUndefined();
  });
});
