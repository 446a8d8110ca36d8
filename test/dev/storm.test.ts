// Storms of malformed requests against `npm run dev` (issue 28): 10 storms in a row, each of 500
// requests in flight at once over a few keep-alive connections, and every request gets an HTTP
// answer. Before the fix, workerd closed a connection whose request body was left unread (a 401
// or 404 that never looked at it) without saying so: the client's next request on that connection,
// or the rest of its upload, met a reset.
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DevStack, READY_TIMEOUT_MS, startDevStack } from '../helpers/dev-stack';

const DEV_ADMIN_TOKEN = 'gq_dev_admin_token';
const STORMS = 10;
const REQUESTS_PER_STORM = 500;
/** Few connections for many requests: each is reused dozens of times in a storm. */
const SOCKETS = 8;
/** A request without an answer by then counts as unanswered (the test fails, it does not hang). */
const REQUEST_TIMEOUT_MS = 30_000;

interface Malformed {
  what: string;
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: string;
}

const admin = { authorization: `Bearer ${DEV_ADMIN_TOKEN}` };
const json = { 'content-type': 'application/json' };

/** What a stranger sends: each is refused, none is served. */
const MALFORMED: Malformed[] = [
  { what: 'a 300 KB body with a wrong token', method: 'POST', path: '/v1/queues/storm/jobs', headers: { ...json, authorization: 'Bearer wrong' }, body: `{"data":"${'x'.repeat(300_000)}"}` },
  { what: 'JSON cut short, no token', method: 'POST', path: '/v1/queues/storm/jobs', headers: json, body: '{"group": tru' },
  { what: 'JSON cut short, admin token', method: 'POST', path: '/v1/queues/storm/jobs', headers: { ...json, ...admin }, body: '{"group": "g", "data": ' },
  { what: 'a 100 KB batch of brackets', method: 'POST', path: '/v1/queues/storm/jobs/batch', headers: { ...json, ...admin }, body: '['.repeat(100_000) },
  { what: 'a 20 KB publish with a made-up publish token', method: 'POST', path: '/v1/queues/storm/publish', headers: { ...json, authorization: 'Bearer gqp_made_up' }, body: '{'.repeat(20_000) },
  { what: 'a path that is no route', method: 'GET', path: '/v1/../../etc/passwd' },
  { what: 'a bad percent escape', method: 'GET', path: '/v1/queues/%zz/jobs', headers: admin },
  { what: 'a 40 KB header, no token', method: 'GET', path: '/v1/queues', headers: { 'x-filler': 'f'.repeat(40_000) } },
  { what: 'a text body where JSON belongs', method: 'PUT', path: '/v1/queues/storm', headers: { ...admin, 'content-type': 'text/plain' }, body: 'endpoint=nowhere'.repeat(2_000) },
  { what: 'a body on a DELETE with a wrong token', method: 'DELETE', path: '/v1/queues/storm', headers: { ...json, authorization: 'Bearer wrong' }, body: '{}'.repeat(10_000) },
];

type Outcome = { what: string; status: number } | { what: string; error: string };

/** Sends one request over `agent` and reads its whole answer; never rejects. */
function send(agent: http.Agent, port: number, request: Malformed): Promise<Outcome> {
  return new Promise((resolve) => {
    // Content-Length always: Node frames a DELETE's body with neither it nor chunked encoding,
    // and the server rightly reads those bytes as the next request.
    const headers = { ...request.headers, ...(request.body === undefined ? {} : { 'content-length': String(Buffer.byteLength(request.body)) }) };
    const req = http.request({ host: '127.0.0.1', port, agent, method: request.method, path: request.path, headers, timeout: REQUEST_TIMEOUT_MS }, (res) => {
      res.on('data', () => {});
      res.on('end', () => resolve({ what: request.what, status: res.statusCode ?? 0 }));
      res.on('error', (error) => resolve({ what: request.what, error: `${(error as NodeJS.ErrnoException).code ?? ''} ${error.message}` }));
    });
    req.on('timeout', () => req.destroy(new Error(`no answer within ${REQUEST_TIMEOUT_MS} ms`)));
    req.on('error', (error) => resolve({ what: request.what, error: `${(error as NodeJS.ErrnoException).code ?? ''} ${error.message}` }));
    req.end(request.body);
  });
}

describe('npm run dev under storms of malformed requests', () => {
  let stack: DevStack;

  beforeAll(async () => {
    stack = await startDevStack();
  }, READY_TIMEOUT_MS + 10_000);

  afterAll(async () => {
    await stack?.dispose();
  }, 30_000);

  it(`answers every request of ${STORMS} storms of ${REQUESTS_PER_STORM}, each refused with a 4xx`, async () => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: SOCKETS });
    try {
      for (let storm = 0; storm < STORMS; storm++) {
        const outcomes = await Promise.all(
          Array.from({ length: REQUESTS_PER_STORM }, (_, i) => send(agent, stack.ports.port, MALFORMED[i % MALFORMED.length]!)),
        );
        const unanswered = outcomes.filter((outcome) => 'error' in outcome);
        expect(unanswered, `storm ${storm + 1}`).toEqual([]);
        const served = outcomes.filter((outcome) => 'status' in outcome && (outcome.status < 400 || outcome.status > 499));
        expect(served, `storm ${storm + 1}`).toEqual([]);
      }
    } finally {
      agent.destroy();
    }
    // The stack is still up, and said nothing went wrong.
    expect(stack.child.exitCode).toBe(null);
    expect(stack.stderr()).toBe('');
  }, 240_000);
});
