// The framework recipes in examples/frameworks/, run as their users run them: Express and
// Fastify started on loopback and sent real deliveries over HTTP, the Next.js route handler's
// POST called with a real Request, the Lambda handler called with the API Gateway HTTP API (2.0)
// event such a delivery becomes. Each delivery is signed with the official `standardwebhooks`
// package; the recipes import 'groupq/receiver' as a user does (dist/, which test/global-setup.ts
// builds), and type-check against its published types. What each must do: run the job on a
// genuine delivery and answer its result, pass on the answer's headers (groupq-retry: false for
// a NonRetryableError), and refuse a body that is not the one signed (401). The Express recipe
// takes outcome callbacks too: a genuine one once (204), however often it comes; a forged one not.
import { execFile } from 'node:child_process';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { promisify } from 'node:util';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SECRET, type Signed, signed, signedDelivery, webhookId } from './batch-fixtures';

const run = promisify(execFile);
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');

// The recipes read the secret when loaded (examples/frameworks/job.ts).
process.env.GROUPQ_SIGNING_SECRET = SECRET;

/** A delivery of one job as groupq sends it, its lease long enough for a synchronous answer. */
function delivery(data: unknown): Signed {
  return signedDelivery(data, { id: 'job-1', queue: 'words', group: 'docs' });
}

/** The same delivery with its body changed after signing, as a JSON parser encoding it again would. */
const altered = (message: Signed): Signed => ({ ...message, body: JSON.stringify(JSON.parse(message.body), null, 1) });

/** What an endpoint answered: the status, the groupq-retry header and the body's text. */
interface Answer {
  status: number;
  retry: string | null;
  text: string;
}

async function post(url: string, message: Signed): Promise<Answer> {
  const response = await fetch(url, { method: 'POST', headers: { ...message.headers, 'content-type': 'application/json' }, body: message.body });
  return { status: response.status, retry: response.headers.get('groupq-retry'), text: await response.text() };
}

/** The checks every recipe passes, through `send`. */
function itRunsJobs(send: (message: Signed) => Promise<Answer>) {
  it('runs the job on a genuine delivery and answers its result', async () => {
    const answer = await send(delivery({ text: 'one two three' }));
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.text)).toEqual({ words: 3, attempt: 1 });
  });

  it('passes on the answer to a NonRetryableError: 500, groupq-retry: false', async () => {
    const answer = await send(delivery({ text: 42 }));
    expect(answer).toMatchObject({ status: 500, retry: 'false' });
    expect(answer.text).toContain('data.text must be a string');
  });

  it('refuses a body that is not the one signed (401)', async () => {
    const answer = await send(altered(delivery({ text: 'one two three' })));
    expect(answer.status).toBe(401);
  });
}

describe('examples/frameworks', () => {
  it('type-check against the published types', async () => {
    await run(process.execPath, [tsc, '-p', 'examples/frameworks']);
  });
});

describe('examples/frameworks/express.ts on loopback', () => {
  let url = '';
  let close = async () => {};
  beforeAll(async () => {
    const { app } = await import('../../examples/frameworks/express');
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/jobs`;
    close = () => new Promise((resolve) => server.close(() => resolve()));
  });
  afterAll(() => close());
  itRunsJobs((message) => post(url, message));

  describe('/outcomes', () => {
    const outcomeUrl = () => url.replace(/\/jobs$/, '/outcomes');
    const outcome = (id: string) => ({ id, queue: 'words', group: 'docs', state: 'completed', result: { words: 3, attempt: 1 }, attempts: 1, finishedAt: Date.now() });

    it('takes a genuine outcome callback (204), once however often it is sent', async () => {
      const { outcomes } = await import('../../examples/frameworks/job');
      const id = webhookId('out_');
      const body = outcome('job-7');
      expect(await post(outcomeUrl(), signed(id, body))).toEqual({ status: 204, retry: null, text: '' });
      // The same outcome sent again, as groupq does after an answer it did not get: signed anew, one webhook-id.
      expect(await post(outcomeUrl(), signed(id, { ...body }, { at: new Date(Date.now() - 5_000) }))).toMatchObject({ status: 204 });
      expect(outcomes.get(id)).toEqual(body);
      expect([...outcomes.values()].filter((taken) => taken.id === 'job-7')).toHaveLength(1);
    });

    it('refuses an outcome whose body is not the one signed (401), and takes nothing', async () => {
      const { outcomes } = await import('../../examples/frameworks/job');
      const id = webhookId('out_');
      const answer = await post(outcomeUrl(), altered(signed(id, outcome('job-8'))));
      expect(answer.status).toBe(401);
      expect(outcomes.has(id)).toBe(false);
    });
  });
});

describe('examples/frameworks/fastify.ts on loopback', () => {
  let url = '';
  let close = async () => {};
  beforeAll(async () => {
    const { app } = await import('../../examples/frameworks/fastify');
    url = `${await app.listen({ port: 0, host: '127.0.0.1' })}/jobs`;
    close = () => app.close();
  });
  afterAll(() => close());
  itRunsJobs((message) => post(url, message));
});

describe('examples/frameworks/nextjs/app/jobs/route.ts', () => {
  itRunsJobs(async (message) => {
    const { POST } = await import('../../examples/frameworks/nextjs/app/jobs/route');
    const request = new Request('https://app.example/jobs', { method: 'POST', headers: { ...message.headers, 'content-type': 'application/json' }, body: message.body });
    const response = await POST(request);
    return { status: response.status, retry: response.headers.get('groupq-retry'), text: await response.text() };
  });
});

/** The event API Gateway's HTTP API (payload format 2.0) hands a Lambda for a POST of `message`. */
function httpApiEvent(message: Signed, base64: boolean): APIGatewayProxyEventV2 {
  const now = Date.now();
  return {
    version: '2.0',
    routeKey: 'POST /jobs',
    rawPath: '/jobs',
    rawQueryString: '',
    headers: { ...message.headers, 'content-type': 'application/json', host: 'abc123.execute-api.eu-west-1.amazonaws.com', 'content-length': String(Buffer.byteLength(message.body)) },
    requestContext: {
      accountId: '123456789012',
      apiId: 'abc123',
      domainName: 'abc123.execute-api.eu-west-1.amazonaws.com',
      domainPrefix: 'abc123',
      http: { method: 'POST', path: '/jobs', protocol: 'HTTP/1.1', sourceIp: '203.0.113.7', userAgent: 'groupq' },
      requestId: 'JKJaXmPLvHcESHA=',
      routeKey: 'POST /jobs',
      stage: '$default',
      time: new Date(now).toUTCString(),
      timeEpoch: now,
    },
    body: base64 ? Buffer.from(message.body).toString('base64') : message.body,
    isBase64Encoded: base64,
  };
}

for (const base64 of [false, true]) {
  describe(`examples/frameworks/lambda.ts with an HTTP API event${base64 ? ', body base64' : ''}`, () => {
    itRunsJobs(async (message) => {
      const { handler } = await import('../../examples/frameworks/lambda');
      const result = await handler(httpApiEvent(message, base64));
      return { status: result.statusCode ?? 200, retry: String(result.headers?.['groupq-retry'] ?? '') || null, text: result.body ?? '' };
    });
  });
}
