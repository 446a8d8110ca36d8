// The receiver kit's side of W3C trace context (docs/tracing.md): against the real Worker,
// createHandler's ctx.traceparent and ctx.tracestate are the producer's (undefined for a job
// enqueued without), ctx.requestId the pushing request's, as is createOutcomeHandler's request.traceparent; traceContextOf reads
// them from a Request or a RawMessage, by the spec's rules (the headers are not signed: a value
// that is not valid is absent).
import { afterEach, describe, expect, it } from 'vitest';
import { type JobContext, type OutcomeRequest, createHandler, createOutcomeHandler, traceContextOf } from '../../src/receiver/index';
import { SIGNING_SECRET } from '../helpers/worker';
import { jobInState, poll, putQueue, queueName, useWorker } from '../delivery/support';
import { type Server, serve } from './support';

const TRACEPARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
const TRACESTATE = 'rojo=00f067aa0ba902b7,congo=t61rcWkgMzE';

describe('createHandler and createOutcomeHandler', () => {
  const env = useWorker();
  const servers: Server[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => s.close()));
  });

  async function enqueue(queue: string, headers: Record<string, string>): Promise<string> {
    const res = await env.worker.api(`/v1/queues/${queue}/jobs`, { method: 'POST', json: { group: 'g' }, headers });
    expect(res.status).toBe(201);
    return ((await res.json()) as { id: string }).id;
  }

  it("ctx.traceparent and ctx.tracestate are the producer's; the outcome function gets them too", async () => {
    const contexts = new Map<string, Pick<JobContext, 'traceparent' | 'tracestate'>>();
    const outcomes = new Map<string, OutcomeRequest>();
    const endpoint = await serve(
      createHandler(
        (job, ctx) => {
          contexts.set(job.id, { traceparent: ctx.traceparent, tracestate: ctx.tracestate });
          return null;
        },
        { secret: SIGNING_SECRET },
      ),
    );
    const callback = await serve(createOutcomeHandler((outcome, request) => void outcomes.set(outcome.id, request), { secret: SIGNING_SECRET }));
    servers.push(endpoint, callback);
    const queue = queueName('rx-trace');
    await putQueue(env.worker, queue, { endpoint: endpoint.url, callbackUrl: callback.url, keepCompleted: 10 });

    const traced = await enqueue(queue, { traceparent: TRACEPARENT, tracestate: TRACESTATE });
    const plain = await enqueue(queue, {});
    await jobInState(env.worker, queue, traced, 'completed');
    await jobInState(env.worker, queue, plain, 'completed');
    expect(contexts.get(traced)).toEqual({ traceparent: TRACEPARENT, tracestate: TRACESTATE });
    expect(contexts.get(plain)).toEqual({ traceparent: undefined, tracestate: undefined });

    await poll(async () => (outcomes.size === 2 ? true : undefined), { what: 'both outcomes' });
    const webhookId = expect.stringMatching(/^out_[0-9a-f]{32}$/);
    expect(outcomes.get(traced)).toEqual({ webhookId, traceparent: TRACEPARENT, tracestate: TRACESTATE });
    expect(outcomes.get(plain)).toEqual({ webhookId, traceparent: undefined, tracestate: undefined });
    expect(outcomes.get(traced)!.webhookId).not.toBe(outcomes.get(plain)!.webhookId);
  });
});

describe('ctx.requestId', () => {
  const env = useWorker();
  let server: Server | undefined;
  afterEach(async () => {
    await server?.close();
  });

  it("is the id of the request that pushed the delivery: the enqueue's x-request-id", async () => {
    const seen = new Map<string, string | undefined>();
    server = await serve(createHandler((job, ctx) => void seen.set(job.id, ctx.requestId), { secret: SIGNING_SECRET }));
    const queue = queueName('rx-reqid');
    await putQueue(env.worker, queue, { endpoint: server.url, keepCompleted: 10 });
    const res = await env.worker.api(`/v1/queues/${queue}/jobs`, { method: 'POST', json: { group: 'g' } });
    expect(res.status).toBe(201);
    const { id } = (await res.json()) as { id: string };
    await jobInState(env.worker, queue, id, 'completed');
    expect(seen.get(id)).toBe(res.headers.get('x-request-id'));
  });
});

describe('traceContextOf', () => {
  /** A message as Node gives it: a header record, names in any case. */
  const raw = (headers: Record<string, string | string[]>) => traceContextOf({ headers, body: '' });

  it('reads a Request or a RawMessage, header names in any case', () => {
    const request = new Request('http://127.0.0.1/jobs', { method: 'POST', headers: { TraceParent: TRACEPARENT, TRACESTATE }, body: '{}' });
    expect(traceContextOf(request)).toEqual({ traceparent: TRACEPARENT, tracestate: TRACESTATE });
    expect(raw({ Traceparent: TRACEPARENT, TraceState: TRACESTATE })).toEqual({ traceparent: TRACEPARENT, tracestate: TRACESTATE });
    expect(raw({ traceparent: TRACEPARENT })).toEqual({ traceparent: TRACEPARENT });
    expect(raw({})).toEqual({});
  });

  it('ignores a traceparent that breaks the spec, and then its tracestate too', () => {
    for (const traceparent of [
      '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0', // short flags
      '00-4bf92f3577b34da6a3ce929d0e0e4736-00F067AA0BA902B7-01', // upper case
      '00-00000000000000000000000000000000-00f067aa0ba902b7-01',
      '00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01',
      'ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
      '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-00', // version 00 has nothing after the flags
      '01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01x', // a later version's flags end at a dash
      ' 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01x',
      '',
    ]) {
      expect(raw({ traceparent, tracestate: TRACESTATE }), traceparent).toEqual({});
    }
    expect(raw({ tracestate: TRACESTATE })).toEqual({});
  });

  it('reads a later version as the spec says: its first fields, as version 00 with the sampled bit alone', () => {
    expect(raw({ traceparent: 'cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-09-what-comes-next' })).toEqual({
      traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
    });
    expect(raw({ traceparent: '01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-02-x' }).traceparent).toMatch(/-00$/);
  });

  it('keeps a valid tracestate without its optional whitespace and empty members', () => {
    const keep = (tracestate: string | string[]) => raw({ traceparent: TRACEPARENT, tracestate }).tracestate;
    expect(keep(' rojo=00f067aa0ba902b7 ,\t, congo=t61rcWkgMzE ')).toBe(TRACESTATE);
    expect(keep('tenant1@vendor=a b,a_-*/z=~!')).toBe('tenant1@vendor=a b,a_-*/z=~!'); // multi-tenant keys; spaces inside a value
    expect(keep('k= leading')).toBe('k= leading');
    expect(keep(Array.from({ length: 32 }, (_, i) => `k${i}=v`).join(','))).toBe(Array.from({ length: 32 }, (_, i) => `k${i}=v`).join(','));
    expect(keep(' , ')).toBeUndefined();
  });

  it('drops a tracestate that breaks the spec, whole, and keeps its traceparent', () => {
    for (const tracestate of [
      'Rojo=1', // keys are lower case
      '1abc=1', // a simple key starts with a letter
      'a@1b=1', // a system id starts with a letter
      'a@b@c=1',
      'rojo',
      'rojo=',
      'rojo=a,b', // a member without `=`
      'rojo=a=b',
      'rojo=1,rojo=2', // a key twice
      `k=${'v'.repeat(257)}`, // a value of at most 256 characters
      `${'k'.repeat(257)}=v`, // a key of at most 256
      Array.from({ length: 33 }, (_, i) => `k${i}=v`).join(','),
    ]) {
      expect(raw({ traceparent: TRACEPARENT, tracestate }), tracestate).toEqual({ traceparent: TRACEPARENT });
    }
  });

  it('cuts a tracestate over 512 characters by whole members: those over 128 first, then from the end', () => {
    const keep = (members: string[]) => raw({ traceparent: TRACEPARENT, tracestate: members.join(',') }).tracestate;
    const long = (key: string) => `${key}=${'x'.repeat(200)}`;
    const mid = Array.from({ length: 6 }, (_, i) => `m${i}=${'y'.repeat(90)}`); // 93 characters each
    expect(keep([long('a'), ...mid.slice(0, 3), long('b')])).toBe(mid.slice(0, 3).join(',')); // 692 characters: the long ones go
    expect(keep(mid)).toBe(mid.slice(0, 5).join(',')); // 563: the last goes
    const exactly = [...mid.slice(0, 5), `z=${'w'.repeat(40)}`]; // 5 x 93 + 42 + 5 commas = 512
    expect(exactly.join(',').length).toBe(512);
    expect(keep(exactly)).toBe(exactly.join(','));
  });
});
