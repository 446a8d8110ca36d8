// A real HTTP endpoint on loopback for deliveries: it records every request (headers, raw body,
// parsed job) and answers with whatever the test's handler says, after an optional delay. The
// use* helpers start them for a test file and close them when it (or each test) ends.
import { createHmac } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll } from 'vitest';

export interface DeliveredJob {
  id: string;
  queue: string;
  group: string;
  data: unknown;
  attempt: number;
  maxAttempts: number;
  orderMs: number;
  createdAt: number;
  lease: { token: string; expiresAt: number };
  callbacks: { heartbeat: string; complete: string; fail: string; progress: string };
}

export interface Received {
  headers: http.IncomingHttpHeaders;
  rawBody: string;
  job: DeliveredJob;
  /** Date.now() when the request arrived. */
  at: number;
  /** Aborts when the caller hangs up before an answer was written (groupq's timeout, say). */
  signal: AbortSignal;
}

export interface Reply {
  status?: number;
  headers?: Record<string, string>;
  body?: string;
  /** Wait this long before answering. */
  delayMs?: number;
  /** Never answer (the connection stays open until the endpoint closes). */
  hang?: boolean;
}

export type Handler = (received: Received) => Reply | Promise<Reply>;

export interface Endpoint {
  url: string;
  received: Received[];
  /** Replace the handler (default: 200 with an empty body). */
  handle(handler: Handler): void;
  /** Resolves once `n` requests have arrived in total. */
  waitFor(n: number, timeoutMs?: number): Promise<Received[]>;
  close(): Promise<void>;
}

export async function startEndpoint(handler: Handler = () => ({})): Promise<Endpoint> {
  let current = handler;
  const received: Received[] = [];
  const waiters: { n: number; resolve: () => void }[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', async () => {
      const rawBody = Buffer.concat(chunks).toString('utf8');
      const hangUp = new AbortController();
      res.on('close', () => {
        if (!res.writableFinished) hangUp.abort();
      });
      const entry: Received = { headers: req.headers, rawBody, job: JSON.parse(rawBody) as DeliveredJob, at: Date.now(), signal: hangUp.signal };
      received.push(entry);
      for (const w of waiters.splice(0)) {
        if (received.length >= w.n) w.resolve();
        else waiters.push(w);
      }
      const reply = await current(entry);
      if (reply.hang) return;
      if (reply.delayMs) await new Promise((r) => setTimeout(r, reply.delayMs));
      res.writeHead(reply.status ?? 200, reply.headers ?? {}).end(reply.body ?? '');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/jobs`,
    received,
    handle(next) {
      current = next;
    },
    waitFor(n, timeoutMs = 20_000) {
      if (received.length >= n) return Promise.resolve(received);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`endpoint: ${received.length} of ${n} requests after ${timeoutMs} ms`)), timeoutMs);
        waiters.push({ n, resolve: () => (clearTimeout(timer), resolve(received)) });
      });
    },
    close() {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * One endpoint per handler for the calling test file, started in beforeAll and closed in
 * afterAll. Read them inside tests: the object is filled in once beforeAll has run.
 */
export function useEndpoints<Name extends string>(handlers: Record<Name, Handler>): Record<Name, Endpoint> {
  const endpoints = {} as Record<Name, Endpoint>;
  beforeAll(async () => {
    for (const name of Object.keys(handlers) as Name[]) endpoints[name] = await startEndpoint(handlers[name]);
  });
  afterAll(async () => {
    await Promise.all(Object.values<Endpoint | undefined>(endpoints).map((endpoint) => endpoint?.close()));
  });
  return endpoints;
}

/** A startEndpoint for the calling file's tests whose endpoints close when their test ends (afterEach). */
export function useEndpointPerTest(): typeof startEndpoint {
  const started: Endpoint[] = [];
  afterEach(async () => {
    for (const endpoint of started.splice(0)) await endpoint.close();
  });
  return async (...args) => {
    const endpoint = await startEndpoint(...args);
    started.push(endpoint);
    return endpoint;
  };
}

/** The Standard Webhooks signature of a delivery, as a receiver computes it. */
export function expectedSignature(secret: string, id: string, timestamp: string, body: string): string {
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}
