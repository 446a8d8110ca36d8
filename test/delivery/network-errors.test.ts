// A push that gets no answer says where it went and what happened there (docs/delivery.md): the
// job's `error` names the endpoint's host (never its path or query, which may carry a token) and
// the cause as the runtime reports it. Under workerd that is test/delivery/responses.test.ts ("a
// refused connection"); here Node's fetch, the runtime of a Node server, on a real refused port
// and a real reset, and a cause Node does not name.
import net from 'node:net';
import { describe, expect, it } from 'vitest';
import { networkError } from '../../src/core/push/delivery';
import { startEndpoint } from '../helpers/endpoint';

/** What Node's fetch of `url` rejects with. */
async function fetchError(url: string): Promise<unknown> {
  try {
    await fetch(url, { method: 'POST', body: '{}' });
  } catch (error) {
    return error;
  }
  throw new Error(`${url} answered`);
}

describe('a delivery with no answer', () => {
  it('a refused port: the host and port, and "refused the connection"; no path, no query', async () => {
    const closed = await startEndpoint();
    await closed.close();
    const url = `${closed.url}?token=secret-in-the-url`;
    const message = networkError(url, await fetchError(url));
    expect(message).toBe(`network error: ${new URL(closed.url).host} refused the connection`);
  });

  it('a reset connection: "reset the connection"', async () => {
    const server = net.createServer((socket) => socket.once('data', () => socket.resetAndDestroy()));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as net.AddressInfo;
      const url = `http://127.0.0.1:${port}/jobs`;
      expect(networkError(url, await fetchError(url))).toBe(`network error: 127.0.0.1:${port} reset the connection`);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('a cause without a known code: the host, the message and its cause', () => {
    const error = new TypeError('fetch failed', { cause: new Error('bad port') });
    expect(networkError('https://hooks.example.com/jobs', error)).toBe('network error: hooks.example.com: fetch failed: bad port');
  });
});
