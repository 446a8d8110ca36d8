// HTTP API v1, request bodies that are not acceptable, over HTTP against the Worker in workerd:
// BAD_JSON (malformed, empty), UNSUPPORTED_MEDIA_TYPE (not JSON, or no content-type at all),
// PAYLOAD_TOO_LARGE (job data over the queue's maxPayloadBytes, counted in UTF-8 bytes; a body
// over 10 MiB, with a content-length or streamed without one). Each asserts the one error
// shape, status and code, and that Redis holds exactly what it held before.
import http from 'node:http';
import { describe, expect, it } from 'vitest';
import { ADMIN_TOKEN } from '../helpers/worker';
import { expectError, expectRefused as refused, quietQueue as quiet, useHttpSuite } from './support';

const suite = useHttpSuite();
const MiB = 1024 * 1024;

const expectRefused = (queue: string, status: number, code: string, send: () => Promise<Response>) =>
  refused(suite, queue, status, code, send);
const quietQueue = (prefix: string, config: Record<string, unknown> = {}) => quiet(suite, prefix, config);

/** A raw request: the body and headers exactly as given (plus the admin token). */
function raw(path: string, method: string, body: BodyInit | null, headers: Record<string, string> = {}) {
  return fetch(`${suite.worker.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, ...headers },
    body,
  });
}

const JSON_TYPE = { 'content-type': 'application/json' };

/**
 * Sends `body` with its content-length the way a careful HTTP client does: headers with
 * `expect: 100-continue` first, the body only once the server asks for it (or has not answered
 * within a second), and no more of it once an answer arrives. fetch cannot do this: a server
 * that refuses by content-length answers before reading the body and closes the connection,
 * and undici then reports the reset of its upload instead of the answer.
 */
function sendWithLength(path: string, method: string, body: string): Promise<Response> {
  const url = new URL(suite.worker.url);
  const bytes = Buffer.from(body);
  return new Promise((resolve, reject) => {
    let answered = false;
    let writing = false;
    const req = http.request({
      host: url.hostname,
      port: url.port,
      path,
      method,
      headers: {
        authorization: `Bearer ${ADMIN_TOKEN}`,
        ...JSON_TYPE,
        'content-length': String(bytes.byteLength),
        expect: '100-continue',
      },
    });
    req.on('response', (res) => {
      answered = true;
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const headers = new Headers();
        for (const [name, value] of Object.entries(res.headers)) if (typeof value === 'string') headers.set(name, value);
        resolve(new Response(Buffer.concat(chunks), { status: res.statusCode!, headers }));
      });
    });
    // A reset after the answer is the server closing on the unread rest of the body: expected.
    req.on('error', (error) => (answered ? undefined : reject(error)));
    let offset = 0;
    const writeMore = () => {
      while (!answered && offset < bytes.byteLength) {
        const end = Math.min(offset + 64 * 1024, bytes.byteLength);
        const more = req.write(bytes.subarray(offset, end));
        offset = end;
        if (!more) return void req.once('drain', writeMore);
      }
      if (!answered) req.end();
    };
    const startBody = () => {
      if (writing || answered) return;
      writing = true;
      writeMore();
    };
    req.on('continue', startBody);
    setTimeout(startBody, 1000);
    req.flushHeaders();
  });
}

const bodyRoutes = (queue: string): [string, string][] => [
  ['PUT', `/v1/queues/${queue}`],
  ['POST', `/v1/queues/${queue}/jobs`],
  ['POST', `/v1/queues/${queue}/jobs/batch`],
  ['PATCH', `/v1/queues/${queue}/jobs/p`],
  ['PUT', `/v1/queues/${queue}/repeats/k`],
];

async function queueWithJob(prefix: string, config: Record<string, unknown> = {}): Promise<string> {
  const queue = await quietQueue(prefix, config);
  const res = await suite.worker.api(`/v1/queues/${queue}/jobs`, { method: 'POST', json: { id: 'p', group: 'g', data: 1 } });
  expect(res.status).toBe(201);
  return queue;
}

describe('BAD_JSON', () => {
  it('a malformed body: 400 BAD_JSON on every route that reads one, nothing written', async () => {
    const queue = await queueWithJob('malformed');
    for (const [method, path] of bodyRoutes(queue)) {
      for (const body of ['{"group":', '{group: "g"}', "{'group':'g'}", '{"group":"g"} trailing', '\u00ff']) {
        await expectRefused(queue, 400, 'BAD_JSON', () => raw(path, method, body, JSON_TYPE));
      }
    }
  });

  it('an empty body with a JSON content-type: 400 BAD_JSON, nothing written', async () => {
    const queue = await queueWithJob('empty');
    for (const [method, path] of bodyRoutes(queue)) {
      await expectRefused(queue, 400, 'BAD_JSON', () => raw(path, method, '', JSON_TYPE));
      await expectRefused(queue, 400, 'BAD_JSON', () => raw(path, method, '  \n', JSON_TYPE));
    }
  });
});

describe('UNSUPPORTED_MEDIA_TYPE', () => {
  it('a body that is not declared JSON: 415, even when it parses as JSON', async () => {
    const queue = await queueWithJob('texttype');
    const types = ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/jsonx'];
    for (const [method, path] of bodyRoutes(queue)) {
      for (const type of types) {
        await expectRefused(queue, 415, 'UNSUPPORTED_MEDIA_TYPE', () => raw(path, method, '{"group":"g"}', { 'content-type': type }));
      }
    }
  });

  it('a body with no content-type at all: 415, nothing written', async () => {
    const queue = await queueWithJob('notype');
    for (const [method, path] of bodyRoutes(queue)) {
      // Bytes rather than a string: fetch adds text/plain to a string body by itself.
      const bytes = new TextEncoder().encode('{"group":"g","endpoint":"http://127.0.0.1:9/x"}');
      await expectRefused(queue, 415, 'UNSUPPORTED_MEDIA_TYPE', () => raw(path, method, bytes));
    }
  });

  it('a JSON content-type with parameters is JSON', async () => {
    const queue = await quietQueue('charset');
    const res = await raw(`/v1/queues/${queue}/jobs`, 'POST', '{"group":"g"}', { 'content-type': 'application/json; charset=utf-8' });
    expect(res.status).toBe(201);
  });
});

describe('PAYLOAD_TOO_LARGE', () => {
  it("job data over the queue's maxPayloadBytes: 413, counted in UTF-8 bytes of JSON, nothing written", async () => {
    const queue = await quietQueue('payload', { maxPayloadBytes: 1024 });
    // "ü" is 2 bytes: 511 of them, quoted, are exactly 1024 bytes of JSON (fine); 512 are 1026.
    const atLimit = 'ü'.repeat(511);
    const over = 'ü'.repeat(512);
    const body = await expectRefused(queue, 413, 'PAYLOAD_TOO_LARGE', () =>
      suite.worker.api(`/v1/queues/${queue}/jobs`, { method: 'POST', json: { id: 'big', group: 'g', data: over } }),
    );
    expect(body.error.details).toMatchObject({ maxPayloadBytes: 1024 });
    // In a batch, one job over the limit refuses the whole batch.
    await expectRefused(queue, 413, 'PAYLOAD_TOO_LARGE', () =>
      suite.worker.api(`/v1/queues/${queue}/jobs/batch`, {
        method: 'POST',
        json: { jobs: [{ id: 'small', group: 'g', data: 1 }, { id: 'big', group: 'g', data: over }] },
      }),
    );
    await expectError(await suite.worker.api(`/v1/queues/${queue}/jobs/small`), 404, 'JOB_NOT_FOUND');

    const fits = await suite.worker.api(`/v1/queues/${queue}/jobs`, { method: 'POST', json: { id: 'fits', group: 'g', data: atLimit } });
    expect(fits.status).toBe(201);
  });

  it('a PATCH that grows data over maxPayloadBytes: 413, the job unchanged', async () => {
    const queue = await queueWithJob('patchbig', { maxPayloadBytes: 100 });
    await expectRefused(queue, 413, 'PAYLOAD_TOO_LARGE', () =>
      suite.worker.api(`/v1/queues/${queue}/jobs/p`, { method: 'PATCH', json: { data: 'x'.repeat(200) } }),
    );
  });

  it('a body over 10 MiB with its content-length: 413, nothing written', async () => {
    const queue = await quietQueue('huge');
    const text = JSON.stringify({ group: 'g', data: 'x'.repeat(10 * MiB + 16) });
    await expectRefused(queue, 413, 'PAYLOAD_TOO_LARGE', () => sendWithLength(`/v1/queues/${queue}/jobs`, 'POST', text));
    // A batch body, and a queue PUT, are bounded the same way.
    const batch = JSON.stringify({ jobs: [{ group: 'g', data: 'x'.repeat(10 * MiB + 16) }] });
    await expectRefused(queue, 413, 'PAYLOAD_TOO_LARGE', () => sendWithLength(`/v1/queues/${queue}/jobs/batch`, 'POST', batch));
    await expectRefused(queue, 413, 'PAYLOAD_TOO_LARGE', () => sendWithLength(`/v1/queues/${queue}`, 'PUT', text));
  });

  it('a streamed body over 10 MiB without content-length: 413, nothing written', async () => {
    const queue = await quietQueue('stream');
    const chunk = new TextEncoder().encode('x'.repeat(64 * 1024));
    const total = 11 * MiB;
    const stream = () => {
      let sent = 0;
      return new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(new TextEncoder().encode('{"group":"g","data":"'));
        },
        pull(controller) {
          if (sent >= total) {
            controller.enqueue(new TextEncoder().encode('"}'));
            controller.close();
            return;
          }
          sent += chunk.byteLength;
          controller.enqueue(chunk);
        },
      });
    };
    const send = () =>
      fetch(`${suite.worker.url}/v1/queues/${queue}/jobs`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ADMIN_TOKEN}`, ...JSON_TYPE },
        body: stream(),
        duplex: 'half',
      } as RequestInit);
    const res = await send();
    // Sent chunked: there was no content-length for the Worker to judge by.
    await expectRefused(queue, 413, 'PAYLOAD_TOO_LARGE', async () => res);
  });
});
