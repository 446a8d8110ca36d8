// Every failure is a GroupqError, also when what answers is not groupq: a 2xx that is not JSON
// (a captive portal, a proxy's page) is BAD_RESPONSE, a body that stops coming before timeoutMs
// is NETWORK_ERROR (no answer came). A real loopback server plays the part.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GroupqClient, GroupqError } from '../../src/client';

let server: http.Server;
let url = '';
beforeAll(async () => {
  server = http.createServer((req, res) => {
    if (req.url === '/v1/queues') {
      res.writeHead(200, { 'content-type': 'text/html' }).end('<html>sign in to the wifi</html>');
      return;
    }
    // Headers, then a body that never ends.
    res.writeHead(200, { 'content-type': 'application/json' });
    res.write('{"ok":');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

async function failure(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(() => 'resolved', (e: unknown) => e);
}

describe('client answers that are not the API', () => {
  it('a 200 whose body is not JSON throws a GroupqError BAD_RESPONSE quoting it', async () => {
    const error = await failure(new GroupqClient({ url, token: 't', retries: 0 }).queues());
    expect(error).toBeInstanceOf(GroupqError);
    expect(error).toMatchObject({ code: 'BAD_RESPONSE', status: 200, message: expect.stringContaining('sign in to the wifi') });
  });

  it('a body that stops before timeoutMs throws a GroupqError NETWORK_ERROR', async () => {
    const error = await failure(new GroupqClient({ url, token: 't', retries: 0, timeoutMs: 300 }).health());
    expect(error).toBeInstanceOf(GroupqError);
    expect(error).toMatchObject({ code: 'NETWORK_ERROR', status: 0 });
  });
});
