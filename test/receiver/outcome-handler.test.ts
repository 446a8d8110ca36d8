// createOutcomeHandler in both forms it takes: real outcome callbacks, sent by the Worker to a
// loopback server (a completed job enqueued with a trace context, a job failed for good), then
// handed to the handler as a Web Request and as `{ headers, body }` the way Node holds a request
// (header names in lower case, the body a Buffer). Either way: a genuine callback runs the
// function with the outcome, its webhook-id and trace context, and answers 204; a body changed
// after signing 401; one past maxBodyBytes 413; a function that throws 500 with its message.
// The raw form's answer is the Response's status, headers and text, as a plain object.
import { Buffer } from 'node:buffer';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  NonRetryableError,
  type OutcomeCallback,
  type OutcomeFunction,
  type OutcomeRequest,
  type RawResponse,
  type VerifyOptions,
  createHandler,
  createOutcomeHandler,
} from '../../src/receiver/index';
import { SIGNING_SECRET } from '../helpers/worker';
import { enqueue, putQueue, queueName, useWorker } from '../delivery/support';
import { type Exchange, type Server, serve } from './support';

const TRACEPARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
const TRACESTATE = 'rojo=00f067aa0ba902b7';

/** A callback as the loopback server received it: its headers (lower-case names) and raw body. */
interface Received {
  headers: Record<string, string>;
  body: string;
}

/** Headers as a record, names in lower case, as Node's `req.headers` holds them. */
function recordOf(headers: Headers): Record<string, string> {
  const record: Record<string, string> = {};
  headers.forEach((value, name) => {
    record[name] = value;
  });
  return record;
}

/** The two forms a framework hands over: a Request, or the raw message Express or Lambda hold. */
const forms = {
  request: (message: Received) => new Request('https://producer.example/outcomes', { method: 'POST', headers: message.headers, body: message.body }),
  raw: (message: Received) => ({ headers: message.headers, body: Buffer.from(message.body) }),
};

/** What createOutcomeHandler answered, in either form, as one plain answer. */
async function answerOf(fn: OutcomeFunction, options: VerifyOptions, form: keyof typeof forms, message: Received): Promise<RawResponse> {
  const handle = createOutcomeHandler(fn, options);
  if (form === 'raw') {
    const answer = await handle(forms.raw(message));
    expect(answer).not.toBeInstanceOf(Response);
    return answer;
  }
  const response = await handle(forms.request(message));
  expect(response).toBeInstanceOf(Response);
  return { status: response.status, headers: recordOf(response.headers), body: await response.text() };
}

/** The headers of a plain-text answer. */
const TEXT = { 'content-type': 'text/plain; charset=utf-8' };

describe('createOutcomeHandler, given a Request or { headers, body }', () => {
  const env = useWorker();
  /** The real callbacks: a completed job's (traced), then a failed one's. */
  const callbacks: { completed: Received; failed: Received } = {} as never;

  beforeAll(async () => {
    const servers: Server[] = [];
    try {
      const endpoint = await serve(
        createHandler(
          (job: { data: { fail?: boolean } }) => {
            if (job.data.fail) throw new NonRetryableError('the address bounced');
            return { sent: true };
          },
          { secret: SIGNING_SECRET },
        ),
      );
      const outcomes = await serve(async () => new Response(null, { status: 204 }));
      servers.push(endpoint, outcomes);
      const queue = queueName('rx-outcome');
      await putQueue(env.worker, queue, { endpoint: endpoint.url, callbackUrl: outcomes.url, keepCompleted: 10 });
      const res = await env.worker.api(`/v1/queues/${queue}/jobs`, {
        method: 'POST',
        json: { group: 'a', data: {} },
        headers: { traceparent: TRACEPARENT, tracestate: TRACESTATE },
      });
      expect(res.status).toBe(201);
      await enqueue(env.worker, queue, { group: 'b', data: { fail: true } });
      const received = (await outcomes.waitFor(2)).map((exchange: Exchange) => ({ headers: recordOf(exchange.headers), body: exchange.rawBody }));
      const byState = (state: string) => received.find((message) => message.headers['groupq-outcome'] === state)!;
      Object.assign(callbacks, { completed: byState('completed'), failed: byState('failed') });
    } finally {
      await Promise.all(servers.map((server) => server.close()));
    }
  }, 60_000);

  for (const form of ['request', 'raw'] as const) {
    describe(`as ${form === 'raw' ? '{ headers, body }' : 'a Request'}`, () => {
      it('runs the function with a genuine outcome, its webhook-id and trace context, and answers 204', async () => {
        for (const [state, message] of Object.entries(callbacks)) {
          const runs: [OutcomeCallback, OutcomeRequest][] = [];
          const answer = await answerOf((outcome, request) => void runs.push([outcome, request]), { secret: SIGNING_SECRET }, form, message);
          expect(answer, state).toEqual({ status: 204, headers: {}, body: '' });
          const traced = state === 'completed';
          expect(runs, state).toEqual([
            [
              JSON.parse(message.body),
              { webhookId: message.headers['webhook-id'], traceparent: traced ? TRACEPARENT : undefined, tracestate: traced ? TRACESTATE : undefined },
            ],
          ]);
        }
        expect(JSON.parse(callbacks.completed.body)).toMatchObject({ state: 'completed', result: { sent: true } });
        expect(JSON.parse(callbacks.failed.body)).toMatchObject({ state: 'failed', error: 'HTTP 500: the address bounced' });
        expect(callbacks.completed.headers['webhook-id']).toMatch(/^out_[0-9a-f]{32}$/);
      });

      it('refuses a body changed after signing (401), and runs nothing', async () => {
        const runs: unknown[] = [];
        const message = callbacks.completed;
        const forged = { ...message, body: message.body.replace('"sent":true', '"sent":false') };
        expect(forged.body).not.toBe(message.body);
        const answer = await answerOf((outcome) => void runs.push(outcome), { secret: SIGNING_SECRET }, form, forged);
        expect(answer.status).toBe(401);
        expect(answer.body).toMatch(/signature/);
        expect(answer.headers['content-type']).toBe('text/plain; charset=utf-8');
        expect(runs).toEqual([]);
      });

      it('refuses a body past maxBodyBytes (413) with the reason, and runs nothing', async () => {
        const runs: unknown[] = [];
        const message = callbacks.failed;
        const maxBodyBytes = Buffer.byteLength(message.body) - 1;
        const answer = await answerOf((outcome) => void runs.push(outcome), { secret: SIGNING_SECRET, maxBodyBytes }, form, message);
        // A Request's Content-Length refuses it unread; a raw body in memory is measured.
        const size = form === 'raw' ? 'is larger than' : `is declared as ${maxBodyBytes + 1} bytes, more than`;
        const reason = `the outcome callback body ${size} maxBodyBytes (${maxBodyBytes} bytes)`;
        expect(answer).toEqual({ status: 413, headers: TEXT, body: reason });
        expect(runs).toEqual([]);
      });

      it('answers 500 with the message of what the function threw, or rejected with', async () => {
        const thrown = await answerOf(() => {
          throw new Error('database busy');
        }, { secret: SIGNING_SECRET }, form, callbacks.completed);
        expect(thrown).toEqual({ status: 500, headers: TEXT, body: 'database busy' });
        const rejected = await answerOf(async () => Promise.reject(new Error('disk full')), { secret: SIGNING_SECRET }, form, callbacks.failed);
        expect(rejected).toEqual({ status: 500, headers: TEXT, body: 'disk full' });
      });
    });
  }
});
