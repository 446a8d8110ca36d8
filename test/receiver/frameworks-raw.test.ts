// createHandler and createBatchHandler given `{ headers, body }` (a RawMessage, as Express,
// Fastify and Lambda hold a request) answer a plain `{ status, headers, body }` a framework sends
// as it is: the same statuses, headers and bodies as their Response to the same Request, the
// delivery's own headers (groupq-request-id, in any case) read from the record, and an async run
// answered 202 with an empty body, then ended through the callbacks (a real loopback stand-in
// for groupq's routes). Deliveries are signed with the official `standardwebhooks` package.
import { Buffer } from 'node:buffer';
import { describe, expect, it } from 'vitest';
import { type JobContext, type RawResponse, createBatchHandler, createHandler } from '../../src/receiver/index';
import { SECRET, type Signed, batchBody, callbackServer, poll, post, signedBatch, signedDelivery } from './batch-fixtures';

/** A delivery of job `job-0` of queue `emails` (the callback stand-in's shape), its lease 60 s long. */
function delivery(data: unknown, origin = 'https://groupq.example'): Signed {
  return signedDelivery(data, { id: 'job-0', queue: 'emails', group: 'user:42', origin });
}

/** The Response as the plain answer the raw form must give. */
async function plain(response: Response): Promise<RawResponse> {
  const headers: Record<string, string> = {};
  response.headers.forEach((value, name) => {
    headers[name] = value;
  });
  return { status: response.status, headers, body: await response.text() };
}

const fresh = { secret: SECRET, seen: () => false };

describe('createHandler given { headers, body }', () => {
  it('answers a plain { status, headers, body }, the same as its Response to the same Request', async () => {
    const handle = createHandler((job: { data: { n: number } }) => {
      if (job.data.n < 0) throw new Error('negative');
      return { double: job.data.n * 2 };
    }, fresh);
    const cases: [string, Signed][] = [
      ['a result', delivery({ n: 21 })],
      ['an error', delivery({ n: -1 })],
      ['a refusal', { ...delivery({ n: 1 }), body: '{"id":"forged"}' }],
    ];
    for (const [what, message] of cases) {
      const raw = await handle({ headers: message.headers, body: Buffer.from(message.body) });
      expect(raw, what).not.toBeInstanceOf(Response);
      expect(raw, what).toEqual(await plain(await handle(post(message))));
    }
    const message = delivery({ n: 21 });
    expect(await handle({ headers: message.headers, body: message.body })).toEqual({
      status: 200,
      headers: { 'content-type': 'application/json' },
      body: '{"double":42}',
    });
  });

  it("reads the delivery's headers from the record, in any case", async () => {
    const seen: JobContext[] = [];
    const handle = createHandler((_job, ctx) => void seen.push(ctx), fresh);
    const message = delivery({});
    const headers = Object.fromEntries(Object.entries({ ...message.headers, 'groupq-request-id': 'cron-1234' }).map(([name, value]) => [name.toUpperCase(), value]));
    expect(await handle({ headers, body: message.body })).toEqual({ status: 200, headers: {}, body: '' });
    expect(seen[0]?.requestId).toBe('cron-1234');
  });

  it('answers an async run 202 with an empty body, then completes the job by callback', async () => {
    const groupq = await callbackServer();
    try {
      const handle = createHandler(() => ({ done: true }), { ...fresh, async: true });
      const message = delivery({}, groupq.origin);
      expect(await handle({ headers: message.headers, body: message.body })).toEqual({ status: 202, headers: {}, body: '' });
      await poll(() => groupq.calls.some((call) => call.kind === 'complete'), 'the complete callback');
      expect(groupq.calls.find((call) => call.kind === 'complete')).toMatchObject({ status: 200, body: { result: { done: true } } });
    } finally {
      await groupq.close();
    }
  });
});

describe('createBatchHandler given { headers, body }', () => {
  it('answers the batch as its Response would, as a plain object', async () => {
    const handle = createBatchHandler((jobs: { data: { n: number } }[]) => jobs.map((job) => job.data.n + 1), fresh);
    const message = signedBatch(batchBody(3));
    const raw = await handle({ headers: message.headers, body: message.body });
    expect(raw).not.toBeInstanceOf(Response);
    expect(raw.status).toBe(200);
    const again = signedBatch(batchBody(3));
    expect(raw).toEqual(await plain(await handle(post(again))));
  });
});
