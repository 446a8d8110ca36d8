// The Worker under Miniflare (workerd): bundled from src/index.ts with esbuild, as wrangler
// would. It gets a Redis and REST bridge of its own: its cron handler ticks every registered
// queue by the real clock, which must not reach the queues other test files run on test clocks.
// The bundling and the stack live in scripts/worker-stack.mjs (the benchmark uses them too);
// this file adds the tests' tokens and the `api` helper, for one Worker or several on one stack.
import { Buffer } from 'node:buffer';
import type { Miniflare } from 'miniflare';
import { bundleWorker, startMiniflareWorker, startMiniflareWorkers, startPrivateStack as startStack } from '../../scripts/worker-stack.mjs';

export { bundleWorker };

export interface PrivateStack {
  restUrl: string;
  restToken: string;
  /** The redis-server's port on 127.0.0.1, for raw commands (SCRIPT FLUSH) in tests. */
  redisPort: number;
  close(): Promise<void>;
}

/** A redis-server and REST bridge for one test file. */
export async function startPrivateStack(): Promise<PrivateStack> {
  const { restUrl, restToken, redisPort, close } = await startStack({ appendonly: false });
  return { restUrl, restToken, redisPort, close };
}

export const ADMIN_TOKEN = 'test-admin-token-0123456789';
export const SIGNING_SECRET = `whsec_${Buffer.from('groupq-test-signing-secret-01234').toString('base64')}`;

export interface RunningWorker {
  mf: Miniflare;
  /** The Worker's origin on loopback, e.g. http://127.0.0.1:41234 (also its GROUPQ_PUBLIC_URL). */
  url: string;
  /** fetch against the Worker, with the admin token unless `init.headers` says otherwise. */
  api(path: string, init?: RequestInit & { json?: unknown }): Promise<Response>;
  /** Fires the cron trigger and waits for the scheduled handler (and its waitUntil) to end. */
  scheduled(): Promise<void>;
  dispose(): Promise<void>;
}

type Started = Awaited<ReturnType<typeof startMiniflareWorker>>;

/** The tests' tokens, on top of the caller's bindings. */
const withTokens = (bindings: Record<string, string>) => ({ GROUPQ_ADMIN_TOKEN: ADMIN_TOKEN, GROUPQ_SIGNING_SECRET: SIGNING_SECRET, ...bindings });

function running({ mf, url, scheduled, dispose }: Started): RunningWorker {
  return {
    mf,
    url,
    api(path, { json, headers, ...init } = {}) {
      const h = new Headers(headers);
      if (!h.has('authorization')) h.set('authorization', `Bearer ${ADMIN_TOKEN}`);
      if (json !== undefined && !h.has('content-type')) h.set('content-type', 'application/json');
      return fetch(`${url}${path}`, { ...init, headers: h, body: json === undefined ? init.body : JSON.stringify(json) });
    },
    scheduled,
    dispose,
  };
}

/**
 * The Worker in workerd, listening on a loopback port so that endpoints can call back. The
 * scheduler's stay window is 0 by default: a cron run returns once its work is done.
 * `runtimeOutputTo`: where workerd's stdout and stderr go (the Worker's log lines), instead of ours.
 */
export async function startWorker(
  stack: PrivateStack,
  bindings: Record<string, string> = {},
  options: { runtimeOutputTo?: NodeJS.WritableStream } = {},
): Promise<RunningWorker> {
  return running(await startMiniflareWorker(stack, withTokens(bindings), options));
}

/**
 * `n` Workers on one stack, each its own workerd process with its own URL (as startWorker),
 * like the many isolates Cloudflare runs against one database.
 */
export async function startWorkers(stack: PrivateStack, n: number, bindings: Record<string, string> = {}): Promise<RunningWorker[]> {
  return (await startMiniflareWorkers(stack, n, withTokens(bindings))).map(running);
}
