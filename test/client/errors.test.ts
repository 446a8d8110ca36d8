// The client's error and its signal, against the real Worker: a typed code, whether trying again
// may help (`retryable`), the network error kept as `cause`, and an AbortSignal that ends a wait
// at once (ABORTED) and, aborted before it starts, adds no job.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { GroupqClient, type GroupqErrorCode } from '../../src/client';
import { ADMIN_TOKEN } from '../helpers/worker';
import { caught } from './support';
import { pausedQueue, uniqueQueue, useHttpSuite } from '../http/support';

const suite = useHttpSuite();
const client = () => new GroupqClient({ url: suite.worker.url, token: ADMIN_TOKEN });

describe('GroupqError', () => {
  it('carries the API code, typed, and says a refusal is not worth retrying', async () => {
    const error = await caught(client().queue(uniqueQueue('err-missing')).get());
    const code: GroupqErrorCode = error.code;
    expect({ code, status: error.status, retryable: error.retryable }).toEqual({ code: 'QUEUE_NOT_FOUND', status: 404, retryable: false });
  });

  it('keeps the network error as its cause when no answer came, and says trying again may help', async () => {
    // A port that was free a moment ago: nothing answers there.
    const server = http.createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    await new Promise((resolve) => server.close(resolve));
    const offline = new GroupqClient({ url: `http://127.0.0.1:${port}`, token: ADMIN_TOKEN, retries: 0 });
    const error = await caught(offline.queues());
    expect({ code: error.code, status: error.status, retryable: error.retryable }).toEqual({ code: 'NETWORK_ERROR', status: 0, retryable: true });
    expect(error.cause).toBeInstanceOf(Error);
    expect(error.message).toContain('got no answer');
  });
});

describe("a call's own timeoutMs", () => {
  it('bounds each attempt of that call instead of the client\'s', async () => {
    // A server that takes requests and never answers them.
    const silent = http.createServer(() => {});
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as AddressInfo;
    try {
      const patient = new GroupqClient({ url: `http://127.0.0.1:${port}`, token: ADMIN_TOKEN, retries: 0, timeoutMs: 600_000 });
      const error = await caught(patient.queue('q').get({ timeoutMs: 200 }));
      expect({ code: error.code, retryable: error.retryable }).toEqual({ code: 'NETWORK_ERROR', retryable: true });
    } finally {
      silent.closeAllConnections();
      await new Promise((resolve) => silent.close(resolve));
    }
  });
});

describe('an AbortSignal', () => {
  it('ends waitForJob at once with ABORTED, instead of after its timeout', async () => {
    const name = uniqueQueue('err-abort');
    await pausedQueue(suite.worker, name);
    const q = client().queue(name);
    const { id } = await q.add({ group: 'g' });
    const controller = new AbortController();
    const waiting = caught(q.waitForJob(id, { timeoutMs: 600_000, signal: controller.signal }));
    setTimeout(() => controller.abort(new Error('the user left')), 300);
    const error = await waiting;
    expect({ code: error.code, retryable: error.retryable }).toEqual({ code: 'ABORTED', retryable: false });
    expect(error.cause).toEqual(new Error('the user left'));
  });

  it('aborted before addAndWait starts: nothing is added', async () => {
    const name = uniqueQueue('err-abort-add');
    await pausedQueue(suite.worker, name);
    const q = client().queue(name);
    const error = await caught(q.addAndWait({ group: 'g' }, { signal: AbortSignal.abort() }));
    expect(error.code).toBe('ABORTED');
    expect((await q.counts()).waiting).toBe(0);
  });

  it('every call takes one: a page of a listing, an addBatch, a bulk action', async () => {
    const q = client().queue(uniqueQueue('err-abort-all'));
    const gone = AbortSignal.abort();
    const calls: PromiseLike<unknown>[] = [
      q.listJobs({ state: 'waiting', signal: gone }),
      q.addBatch([{ group: 'g' }], { signal: gone }),
      q.clean({ state: 'failed', signal: gone }),
      q.get({ signal: gone }),
    ];
    for (const call of calls) expect((await caught(Promise.resolve(call))).code).toBe('ABORTED');
  });

  it('cancelJob cancels, as cancel did', async () => {
    const name = uniqueQueue('err-cancel');
    await pausedQueue(suite.worker, name);
    const q = client().queue(name);
    const { id } = await q.add({ group: 'g' });
    expect(await q.cancelJob(id)).toEqual({ id, state: 'cancelled' });
  });
});
