// The end-to-end benchmark's stack: the Worker bundle in bare Miniflare (workerd, not wrangler
// dev, whose proxy layer is the bottleneck; one or more instances, each its own workerd process),
// a private redis-server (AOF on, as the engine bench) with the REST bridge, and a loopback endpoint in this process that answers 200 at once and
// notes when each job arrived. Producers call the Worker with node:http on keep-alive
// connections: undici's fetch asks for gzip, which Miniflare then does in workerd (Cloudflare
// compresses at its edge, not in the isolate); fetch and the gunzip cost this process, where the
// bridge and the endpoint wait behind them, ~0.6 ms of CPU per job more, and workerd ~0.3 ms.
// With `sharedHub`, the instances share one event hub per queue as on Cloudflare (Miniflare's dev
// registry, scripts/worker-stack.mjs startMiniflareWorkers); without it each instance defines its
// own, which no row that opens no stream can tell apart.
// With `runtime: 'node'`, one `groupq serve` process (node-server.ts) takes the Worker's place,
// on the same redis-server over TCP: no REST request, no workerd; its cron runs in the process.
// Also the measuring around a phase: Redis commands (INFO commandstats) and REST requests (the
// bridge's counter) from reset to the moment all is quiet.
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { createRespClient, type RespClient } from '../../scripts/resp.mjs';
import type { ObservedRequest } from '../../scripts/rest-bridge.mjs';
import { startMiniflareWorker, startMiniflareWorkers, startPrivateStack } from '../../scripts/worker-stack.mjs';
import { startNodeServer } from './node-server';
import { type CommandCounts, commandStats, resetStats, totalCalls } from './redis-stats';
import { meterWorkerd, type WorkerdCpu } from './workerd-cpu';
import { sleep } from './workload';

/** What serves the API: the Worker in workerd over REST, or `groupq serve` over TCP. */
export type E2eRuntime = 'worker' | 'node';

/** One push as the endpoint saw it. */
export interface Arrival {
  /** performance.now() when the request's headers arrived. */
  at: number;
  /** groupq-attempt: above 1 means the job was delivered before (a retry). */
  attempt: number;
}

export interface LoopbackEndpoint {
  url: string;
  /** First arrival per job id (groupq-job-id; an outcome callback's as `outcome:<job id>`, the id in its body). */
  arrivals: Map<string, Arrival>;
  /** Pushes of an id that had already arrived. */
  duplicates: number;
  /** Every push, in arrival order (the FIFO check reads it). */
  order: string[];
  /** Forgets what arrived (between phases). */
  reset(): void;
  close(): Promise<void>;
}

/** Answers every push 200 with an empty body as soon as its body is read; keeps no payloads. */
export async function startEndpoint(): Promise<LoopbackEndpoint> {
  const endpoint = {
    url: '',
    arrivals: new Map<string, Arrival>(),
    duplicates: 0,
    order: [] as string[],
    reset() {
      endpoint.arrivals.clear();
      endpoint.duplicates = 0;
      endpoint.order = [];
    },
    close: async () => {},
  };
  const server = http.createServer((req, res) => {
    const at = performance.now();
    const arrive = (id: string) => {
      if (endpoint.arrivals.has(id)) endpoint.duplicates++;
      else endpoint.arrivals.set(id, { at, attempt: Number(req.headers['groupq-attempt'] ?? 0) });
      endpoint.order.push(id);
    };
    if (req.headers['groupq-outcome'] !== undefined) {
      // An outcome callback names its job only in its (small) body.
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        arrive(`outcome:${(JSON.parse(Buffer.concat(chunks).toString()) as { id: string }).id}`);
        res.writeHead(200, { 'content-length': '0' }).end();
      });
      return;
    }
    arrive(String(req.headers['groupq-job-id'] ?? ''));
    // The body must be read for the connection to be reused; its content does not matter here.
    req.resume();
    req.on('end', () => res.writeHead(200, { 'content-length': '0' }).end());
  });
  ({ url: endpoint.url, close: endpoint.close } = await listenOnLoopback(server, '/jobs'));
  return endpoint;
}

/** Starts `server` on a free port of 127.0.0.1: the URL of `path` there, and a close that drops every connection. */
export async function listenOnLoopback(server: http.Server, path: string): Promise<{ url: string; close: () => Promise<void> }> {
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

export interface E2eStack {
  runtime: E2eRuntime;
  admin: RespClient;
  /** The private redis-server's port on 127.0.0.1 (for a look with redis-cli MONITOR, say). */
  redisPort: number;
  endpoint: LoopbackEndpoint;
  /** Every Worker instance's origin; they share the one Redis through the one bridge. With `node`, the server's origin. */
  workerUrls: string[];
  /** The Workers' GROUPQ_ADMIN_TOKEN (a reader of the event streams sends it). */
  adminToken: string;
  /**
   * A request with the admin token (a backend publishing with the admin token), to the Worker
   * instances in turn: a load balancer spreading requests over them; or to instance `worker`.
   */
  api(path: string, init?: { method?: string; json?: unknown; worker?: number }): Promise<Response>;
  /**
   * Fires the cron trigger of the first instance and waits for the scheduled handler to end.
   * With `node` nothing outside fires the server's cron: this waits past its next time instead.
   */
  scheduled(): Promise<void>;
  /** HTTP requests the REST bridge has received so far (from the Worker only: nothing else uses it; 0 with `node`). */
  restRequests(): number;
  /**
   * A count that moves while the runtime still talks to Redis: the REST requests with the
   * Worker; with `node`, Redis' own calls (INFO commandstats, the measuring left out).
   */
  activity(): Promise<number>;
  /** Starts counting the runtime's CPU (every workerd process, or the server's process); `stop(jobs)` reads it. */
  meterCpu(): { stop(jobs: number): WorkerdCpu };
  /** The first instance's V8 inspector (workerd's own, ws://127.0.0.1:<port>): only with `inspectorPort`. */
  inspectorUrl(): Promise<string>;
  close(): Promise<void>;
}

/** One request on `agent`, answered as a fetch Response. */
export function request(agent: http.Agent, url: string, method: string, headers: Record<string, string>, body?: string): Promise<Response> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, agent, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('error', reject);
      res.on('end', () => {
        const text = Buffer.concat(chunks);
        resolve(new Response(text.length > 0 ? text : null, { status: res.statusCode ?? 0, headers: res.headers as Record<string, string> }));
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

export async function startE2eStack(
  log: (line: string) => void,
  {
    workers = 1,
    observeBridge,
    code,
    inspectorPort,
    sharedHub = false,
    runtime = 'worker',
  }: {
    /** `node`: one `groupq serve` process over TCP in place of the Workers (`workers` and the options below are not taken). */
    runtime?: E2eRuntime;
    workers?: number;
    /** One event hub for all instances (the dev registry); `code` and `inspectorPort` are not taken then. */
    sharedHub?: boolean;
    observeBridge?: (request: ObservedRequest) => void;
    /** A bundle already built (bundleWorker), e.g. with its source map. */
    code?: string;
    /** Opens workerd's inspector (0: any free port) for a profiler (bench/profile-worker.ts). */
    inspectorPort?: number;
  } = {},
): Promise<E2eStack> {
  const stack = await startPrivateStack({ appendonly: true, observeBridge });
  const closers: (() => Promise<unknown> | void)[] = [() => stack.close()];
  const close = async () => {
    for (const closer of closers.splice(0).reverse()) await closer();
  };
  try {
    const admin = createRespClient({ port: stack.redisPort });
    closers.push(() => admin.close());
    const endpoint = await startEndpoint();
    closers.push(() => endpoint.close());
    const adminToken = randomBytes(24).toString('hex');
    const bindings = { GROUPQ_ADMIN_TOKEN: adminToken, GROUPQ_SIGNING_SECRET: `whsec_${randomBytes(32).toString('base64')}` };
    if (runtime === 'node') {
      const server = await startNodeServer(stack.redisPort, bindings, log);
      closers.push(() => server.stop());
      log(`e2e: redis-server on 127.0.0.1:${stack.redisPort}, groupq serve (pid ${server.pid}) ${server.url} over TCP, endpoint ${endpoint.url}`);
      return stackOf(runtime, stack, admin, endpoint, [server.url], adminToken, closers, close, {
        scheduled: () => server.scheduled(),
        restRequests: () => 0,
        activity: async () => totalCalls(await commandStats(admin)),
        meterCpu: () => server.meterCpu(),
        inspectorUrl: () => Promise.reject(new Error('e2e: groupq serve has no workerd inspector')),
      });
    }
    const instances: Awaited<ReturnType<typeof startMiniflareWorker>>[] = [];
    if (sharedHub) {
      // One stream for all: a few instances' pipes stay under the listener warning.
      const runtimeOutputTo = new Writable({ write: (chunk, _encoding, done) => void process.stderr.write(chunk, () => done()) });
      const started = await startMiniflareWorkers(stack, workers, bindings, { runtimeOutputTo });
      for (const worker of started) closers.push(() => worker.dispose());
      instances.push(...started);
    }
    for (let i = instances.length; i < workers; i++) {
      // stdout is the report (or the one JSON object): whatever workerd prints goes to stderr,
      // through a stream of the instance's own (piping every instance into process.stderr itself
      // would pile their listeners up there).
      const runtimeOutputTo = new Writable({ write: (chunk, _encoding, done) => void process.stderr.write(chunk, () => done()) });
      const worker = await startMiniflareWorker(stack, bindings, { runtimeOutputTo, code, inspectorPort });
      closers.push(() => worker.dispose());
      instances.push(worker);
    }
    const workerUrls = instances.map((worker) => worker.url);
    log(`e2e: redis-server on 127.0.0.1:${stack.redisPort}, REST bridge ${stack.restUrl}, Worker (Miniflare) ${workerUrls.join(' ')}, endpoint ${endpoint.url}`);
    return stackOf(runtime, stack, admin, endpoint, workerUrls, adminToken, closers, close, {
      scheduled: () => instances[0]!.scheduled(),
      restRequests: () => stack.bridgeStats.requests,
      activity: async () => stack.bridgeStats.requests,
      meterCpu: () => meterWorkerd(),
      inspectorUrl: async () => String(await instances[0]!.mf.getInspectorURL()),
    });
  } catch (error) {
    await close();
    throw error;
  }
}

/** The stack around its runtime: the producers' requests spread over `urls` on keep-alive connections. */
function stackOf(
  runtime: E2eRuntime,
  stack: { redisPort: number },
  admin: RespClient,
  endpoint: LoopbackEndpoint,
  urls: string[],
  adminToken: string,
  closers: (() => Promise<unknown> | void)[],
  close: () => Promise<void>,
  served: Pick<E2eStack, 'scheduled' | 'restRequests' | 'activity' | 'meterCpu' | 'inspectorUrl'>,
): E2eStack {
  const agent = new http.Agent({ keepAlive: true });
  closers.push(() => agent.destroy());
  let turn = 0;
  return {
    runtime,
    admin,
    redisPort: stack.redisPort,
    endpoint,
    workerUrls: urls,
    adminToken,
    api(path, { method = 'GET', json, worker } = {}) {
      const headers: Record<string, string> = { authorization: `Bearer ${adminToken}` };
      if (json !== undefined) headers['content-type'] = 'application/json';
      const url = urls[worker ?? turn++ % urls.length]!;
      return request(agent, `${url}${path}`, method, headers, json === undefined ? undefined : JSON.stringify(json));
    },
    ...served,
    close,
  };
}

/**
 * Resolves once neither the runtime's Redis traffic (the bridge's requests, or Redis' calls with
 * `node`) nor the endpoint has moved for `quietMs`.
 */
export async function waitQuiet(stack: E2eStack, quietMs = 500): Promise<void> {
  let last = [await stack.activity(), stack.endpoint.order.length];
  let since = performance.now();
  for (;;) {
    await sleep(50);
    const now = [await stack.activity(), stack.endpoint.order.length];
    if (now[0] !== last[0] || now[1] !== last[1]) {
      last = now;
      since = performance.now();
    } else if (performance.now() - since >= quietMs) {
      return;
    }
  }
}

/** How long without a new arrival before the cron is fired for jobs nothing is draining. */
const STALL_MS = 2_000;
const MAX_SCHEDULED_RUNS = 20;

/**
 * Waits until every one of `ids` reached the endpoint. Deliveries come from the drains the
 * enqueue requests started; if they stall with jobs missing, fires the cron (counted: a run that
 * needs it says so).
 */
export async function waitDelivered(stack: E2eStack, ids: string[], log: (line: string) => void): Promise<{ scheduledRuns: number }> {
  const missing = () => ids.reduce((n, id) => n + (stack.endpoint.arrivals.has(id) ? 0 : 1), 0);
  let scheduledRuns = 0;
  let seen = stack.endpoint.order.length;
  let since = performance.now();
  while (missing() > 0) {
    await sleep(20);
    if (stack.endpoint.order.length !== seen) {
      seen = stack.endpoint.order.length;
      since = performance.now();
      continue;
    }
    if (performance.now() - since < STALL_MS) continue;
    if (scheduledRuns === MAX_SCHEDULED_RUNS) throw new Error(`e2e: ${missing()} jobs never arrived, even after ${scheduledRuns} cron runs`);
    log(`e2e: deliveries stalled with ${missing()} jobs missing: firing the cron`);
    await stack.scheduled();
    scheduledRuns++;
    since = performance.now();
  }
  return { scheduledRuns };
}

export interface PhaseCost {
  commands: CommandCounts;
  restRequests: number;
}

/**
 * Runs `phase` between CONFIG RESETSTAT and the moment all is quiet, then reads the counters.
 * Nothing of ours runs on Redis in between (INFO and CONFIG are left out of the counts anyway),
 * so every command counted is the Worker's (or the server's).
 */
export async function measured<T>(stack: E2eStack, phase: () => Promise<T>): Promise<{ value: T; cost: PhaseCost }> {
  await waitQuiet(stack);
  await resetStats(stack.admin);
  const restBefore = stack.restRequests();
  const value = await phase();
  await waitQuiet(stack);
  const commands = await commandStats(stack.admin);
  return { value, cost: { commands, restRequests: stack.restRequests() - restBefore } };
}
