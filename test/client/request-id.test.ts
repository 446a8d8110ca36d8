// GroupqError.requestId: the id of the request that failed (docs/logs.md), read from the answer's
// x-request-id, or from the error body when something between dropped the header; none when no
// answer came. Against the real Worker, and real servers for answers the Worker does not give.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { GroupqClient } from '../../src/client';
import { ADMIN_TOKEN } from '../helpers/worker';
import { caught } from './support';
import { pausedQueue, uniqueQueue, useHttpSuite } from '../http/support';

const suite = useHttpSuite();
const servers: http.Server[] = [];

afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

/** A server answering every request with `status`, `headers` and `body`; its origin. */
async function answering(status: number, headers: Record<string, string>, body: string): Promise<string> {
  const server = http.createServer((_req, res) => res.writeHead(status, headers).end(body));
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe('GroupqError.requestId', () => {
  it("is the Worker's id of the failed request, as its x-request-id and error body say", async () => {
    const name = uniqueQueue('rid');
    await pausedQueue(suite.worker, name);
    const error = await caught(new GroupqClient({ url: suite.worker.url, token: ADMIN_TOKEN }).queue(name).getJob('no-such-job'));
    expect(error.code).toBe('JOB_NOT_FOUND');
    expect(error.requestId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    // The same request, asked again by hand, is another request with another id.
    const res = await suite.worker.api(`/v1/queues/${name}/jobs/no-such-job`);
    expect(((await res.json()) as { error: { requestId: string } }).error.requestId).toBe(res.headers.get('x-request-id'));
    expect(res.headers.get('x-request-id')).not.toBe(error.requestId);
  });

  it('comes from the error body when the header did not make it through', async () => {
    const url = await answering(404, { 'content-type': 'application/json' }, '{"error":{"code":"QUEUE_NOT_FOUND","message":"queue not found","requestId":"8f1c2a3b4d5e6f70-AMS"}}');
    const error = await caught(new GroupqClient({ url, token: ADMIN_TOKEN }).queue('q').get());
    expect({ code: error.code, requestId: error.requestId }).toEqual({ code: 'QUEUE_NOT_FOUND', requestId: '8f1c2a3b4d5e6f70-AMS' });
  });

  it("is the header's on an answer that is not groupq's error body", async () => {
    const url = await answering(502, { 'x-request-id': 'edge-42' }, 'bad gateway');
    const error = await caught(new GroupqClient({ url, token: ADMIN_TOKEN, retries: 0 }).queue('q').get());
    expect({ status: error.status, requestId: error.requestId }).toEqual({ status: 502, requestId: 'edge-42' });
  });

  it('is undefined when no answer came', async () => {
    const url = await answering(200, {}, '');
    servers[0]!.close();
    servers[0]!.closeAllConnections();
    servers.splice(0);
    const error = await caught(new GroupqClient({ url, token: ADMIN_TOKEN, retries: 0 }).queues());
    expect(error.code).toBe('NETWORK_ERROR');
    expect(error.requestId).toBeUndefined();
  });
});
