// Shared pieces of the receiver suite: a real loopback HTTP server that runs a Fetch-API handler
// (node:http adapted to Request/Response, as a Node user would), recording each request it got
// and the status it answered; a fetch for the lease callbacks that notes which ones were sent
// (and still sends them, unchanged); a gate a job function can wait on.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Exchange {
  /** The request as it arrived: headers and the raw body, for replaying altered copies. */
  headers: Headers;
  rawBody: string;
  status: number;
  /** The answer's headers and text. */
  responseHeaders: Headers;
  responseText: string;
}

export interface Server {
  /** The server's URL, e.g. http://127.0.0.1:40000/jobs. */
  url: string;
  exchanges: Exchange[];
  /** Resolves once `n` exchanges (answered requests) happened in total. */
  waitFor(n: number, timeoutMs?: number): Promise<Exchange[]>;
  close(): Promise<void>;
}

/** Reads a node request into a Web Request. */
async function toRequest(req: http.IncomingMessage, origin: string): Promise<Request> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const headers = new Headers();
  for (let i = 0; i < req.rawHeaders.length; i += 2) headers.append(req.rawHeaders[i]!, req.rawHeaders[i + 1]!);
  const hasBody = req.method !== 'GET' && req.method !== 'HEAD';
  return new Request(new URL(req.url ?? '/', origin), { method: req.method, headers, body: hasBody ? Buffer.concat(chunks) : undefined });
}

/** A loopback server answering every request with `handler`. */
export async function serve(handler: (request: Request) => Promise<Response>): Promise<Server> {
  const exchanges: Exchange[] = [];
  const waiters = new Set<() => void>();
  let origin = '';
  const server = http.createServer(async (req, res) => {
    try {
      const request = await toRequest(req, origin);
      const copy = request.clone();
      const response = await handler(request);
      const responseText = await response.text();
      exchanges.push({
        headers: copy.headers,
        rawBody: await copy.text(),
        status: response.status,
        responseHeaders: response.headers,
        responseText,
      });
      for (const wake of waiters) wake();
      response.headers.forEach((value, name) => res.setHeader(name, value));
      res.writeHead(response.status).end(responseText);
    } catch (error) {
      res.writeHead(599).end(String(error));
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: `${origin}/jobs`,
    exchanges,
    waitFor(n, timeoutMs = 20_000) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`server: ${exchanges.length} of ${n} exchanges after ${timeoutMs} ms`));
        }, timeoutMs);
        function check() {
          if (exchanges.length < n) return;
          clearTimeout(timer);
          waiters.delete(check);
          resolve(exchanges);
        }
        waiters.add(check);
        check();
      });
    },
    close() {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

/** Which lease callback a URL is (its last path segment). */
export function callbackKind(url: string): string {
  return new URL(url).pathname.split('/').pop()!;
}

/**
 * The global fetch, noting each callback sent and the status it got. Requests and answers go
 * through untouched: this only watches.
 */
export function watchedFetch(): { fetch: (input: string, init: RequestInit) => Promise<Response>; calls: { kind: string; status: number }[] } {
  const calls: { kind: string; status: number }[] = [];
  return {
    calls,
    async fetch(input, init) {
      const response = await fetch(input, init);
      calls.push({ kind: callbackKind(input), status: response.status });
      return response;
    },
  };
}

/** A promise the test opens when it wants: a job function awaits `wait`, the test calls `open`. */
export function gate<T = void>(): { wait: Promise<T>; open(value: T): void } {
  let open!: (value: T) => void;
  const wait = new Promise<T>((resolve) => (open = resolve));
  return { wait, open };
}
