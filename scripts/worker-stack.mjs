// The Worker under bare Miniflare (workerd) on a stack of its own: the bundle (esbuild, resolved
// the way wrangler resolves it), a private redis-server + REST bridge on free ports, and the
// Miniflare instance listening on loopback so that endpoints can call back; or several such
// instances on one stack. Shared by the Worker tests (test/helpers/worker.ts) and the end-to-end
// benchmark (bench/lib/e2e-*.ts).
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { Miniflare } from 'miniflare';
import { freePort, startRedis } from './redis-server.mjs';
import { startBridge } from './rest-bridge.mjs';

/**
 * wrangler.toml's date. The pinned workerd (1.20260426) refuses any after 2026-05-03 ("the newest
 * date supported by this server binary"): raise it only with workerd.
 */
export const COMPATIBILITY_DATE = '2026-04-26';

/**
 * wrangler.toml's [assets] as wrangler hands them to Miniflare (`wrangler dev` does the same):
 * public/ with its _headers, the ASSETS binding, and the paths where the Worker runs first.
 * Written out rather than read through wrangler, whose import costs seconds per test file.
 */
export const ASSETS = {
  directory: fileURLToPath(new URL('../public', import.meta.url)),
  binding: 'ASSETS',
  routerConfig: { has_user_worker: true, static_routing: { user_worker: ['/dashboard', '/dashboard/*'] } },
  assetConfig: { html_handling: /** @type {const} */ ('auto-trailing-slash'), not_found_handling: /** @type {const} */ ('none') },
};

/**
 * wrangler.toml's [[durable_objects.bindings]] and [[migrations]] as wrangler hands them to
 * Miniflare (`new_sqlite_classes`: useSQLite): the event hub, a class of this Worker. Change both
 * together, as ASSETS.
 */
export const DURABLE_OBJECTS = { EVENT_HUB: { className: 'EventHub', useSQLite: true } };
/** The Worker's name: the script that defines the hub, which the other Workers of a stack bind by name. */
export const WORKER_NAME = 'groupq';

/**
 * Bundles src/index.ts as wrangler would, in memory: no files to leave behind.
 * @param {{ sourcemap?: boolean }} [options] `sourcemap`: an inline source map at the end (the
 *   profiler, bench/profile-worker.ts, maps the Worker's functions back to their sources)
 * @returns {Promise<string>} the bundle, one ES module
 */
export async function bundleWorker({ sourcemap = false } = {}) {
  const result = await build({
    entryPoints: ['src/index.ts'],
    bundle: true,
    write: false,
    format: 'esm',
    // wrangler's resolution: the browser field maps cron-parser's fs imports away.
    platform: 'browser',
    target: 'es2022',
    conditions: ['workerd', 'worker', 'browser'],
    mainFields: ['browser', 'module', 'main'],
    // The runtime's own modules (cloudflare:workers, the hub's DurableObject), as wrangler leaves them.
    external: ['cloudflare:*'],
    outfile: 'index.mjs',
    sourcemap: sourcemap ? 'inline' : false,
    logLevel: 'error',
  });
  return result.outputFiles[0].text;
}

/**
 * A redis-server and REST bridge of one's own: the Worker's cron ticks every registered queue by
 * the real clock, which must not reach queues that others run (on test clocks, or measured).
 * @param {{ appendonly?: boolean, observeBridge?: (request: import('./rest-bridge.mjs').ObservedRequest) => void }} [options]
 *   AOF off by default (tests); the benchmark turns it on. `observeBridge`: the bridge's `observe`.
 */
export async function startPrivateStack({ appendonly = false, observeBridge } = {}) {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'groupq-worker-'));
  const removeDir = () => rm(dir, { recursive: true, force: true });
  /** @type {Awaited<ReturnType<typeof startRedis>> | undefined} */
  let redis;
  try {
    // freePort() frees the port before redis-server binds it: start again if it was taken.
    for (let attempt = 1; !redis; attempt++) {
      try {
        redis = await startRedis({ port: await freePort(), dir, appendonly });
      } catch (error) {
        if (attempt === 3) throw error;
      }
    }
    const restToken = randomBytes(16).toString('hex');
    const bridge = await startBridge({ port: 0, redisPort: redis.port, token: restToken, observe: observeBridge });
    const started = redis;
    return {
      restUrl: bridge.url,
      restToken,
      /** The redis-server's port on 127.0.0.1, for raw commands (INFO, SCRIPT FLUSH). */
      redisPort: started.port,
      /** The bridge's counters (HTTP requests received). */
      bridgeStats: bridge.stats,
      async close() {
        try {
          await bridge.close();
        } finally {
          await started.stop();
          await removeDir();
        }
      },
    };
  } catch (error) {
    await redis?.stop();
    await removeDir();
    throw error;
  }
}

/**
 * Where the Worker's event hub lives: its name, the durable objects it defines or binds, and the
 * dev registry by which Workers of one stack find the one that defines it.
 * @typedef {{ name?: string, durableObjects?: Record<string, { className: string, useSQLite: boolean, scriptName?: string }>, unsafeDevRegistryPath?: string }} HubOptions
 */

/**
 * Starts the Worker in workerd on 127.0.0.1:<free port>, wired to `stack`. Its public URL is its
 * own origin, http endpoints on loopback are allowed, the scheduler's stay window is 0 (a cron
 * run returns once its work is done) and the log writes warnings and errors only (a line per
 * request would bury a test's output); `bindings` add to or override these. The admin token
 * and signing secret are the caller's (GROUPQ_ADMIN_TOKEN, GROUPQ_SIGNING_SECRET).
 * @param {{ restUrl: string, restToken: string }} stack
 * @param {Record<string, string>} bindings
 * @param {{ runtimeOutputTo?: NodeJS.WritableStream, code?: string, inspectorPort?: number } & HubOptions} [options] where workerd's
 *   stdout/stderr go (Miniflare's default prints workerd's stdout on ours; a benchmark whose
 *   stdout is its result sends it to stderr); `code`: a bundle already built (bundleWorker);
 *   `inspectorPort`: workerd's V8 inspector on that port (0: any free one; mf.getInspectorURL());
 *   the hub's options: startMiniflareWorkers' (a Worker alone defines its own hub)
 */
export async function startMiniflareWorker(stack, bindings, { runtimeOutputTo, code, inspectorPort, ...hub } = {}) {
  const bundle = code ?? (await bundleWorker());
  // freePort() frees the port before workerd binds it: another process may take it meanwhile.
  // Starting again on a new port makes that race harmless.
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    try {
      return await startOnPort(stack, bindings, bundle, port, runtimeOutputTo, inspectorPort, hub);
    } catch (error) {
      if (attempt === 3) throw error;
    }
  }
}

/**
 * `n` instances of the Worker on one stack, as Cloudflare runs many isolates against one
 * database: each its own workerd process (one Miniflare each) on a port of its own, so each
 * instance's callback URLs lead back to it. Same bindings and options as startMiniflareWorker;
 * the bundle is built once. If one fails to start, those already started are disposed.
 *
 * One event hub per queue for all of them, as on Cloudflare: worker 0 (`groupq`) defines the
 * EventHub class, the others (`groupq-<i>`) bind it by script name through Miniflare's dev
 * registry, a folder of this stack's own (a temp dir, removed once every worker is disposed), so
 * that stacks running side by side never see each other's `groupq`. The spike measured this
 * (docs/design/events-plan.md): the binding code is production's, 2.5 ms p50 across processes.
 * @param {{ restUrl: string, restToken: string }} stack
 * @param {number} n
 * @param {Record<string, string>} bindings
 * @param {{ runtimeOutputTo?: NodeJS.WritableStream }} [options]
 */
export async function startMiniflareWorkers(stack, n, bindings, options = {}) {
  const code = await bundleWorker();
  const registry = await mkdtemp(path.join(os.tmpdir(), 'groupq-registry-'));
  /** @type {Awaited<ReturnType<typeof startMiniflareWorker>>[]} */
  const started = [];
  let left = n;
  const removeRegistry = () => rm(registry, { recursive: true, force: true });
  try {
    // One after another: n workerd processes booting at once on a small machine gain nothing.
    for (let i = 0; i < n; i++) {
      const hub = i === 0 ? {} : { name: `${WORKER_NAME}-${i}`, durableObjects: { EVENT_HUB: { ...DURABLE_OBJECTS.EVENT_HUB, scriptName: WORKER_NAME } } };
      const worker = await startMiniflareWorker(stack, bindings, { ...options, code, unsafeDevRegistryPath: registry, ...hub });
      const dispose = worker.dispose;
      /** @type {Promise<void> | undefined} */
      let disposed;
      started.push({
        ...worker,
        dispose: () => (disposed ??= dispose().finally(() => (--left === 0 ? removeRegistry() : undefined))),
      });
    }
    return started;
  } catch (error) {
    for (const worker of started) await worker.dispose().catch(() => {});
    await removeRegistry();
    throw error;
  }
}

/**
 * Fires the Worker's cron trigger and waits for the scheduled handler and its waitUntil to end;
 * rejects when they threw. (workerd reports a failed run as `outcome: "exception"`, not a throw.)
 * Not the URL Miniflare can serve for it (unsafeTriggerHandlers): with static assets that URL
 * reaches the assets router, which has no scheduled handler.
 * @param {Miniflare} mf
 */
export async function fireScheduled(mf) {
  const { outcome } = await (await mf.getWorker()).scheduled({ cron: '* * * * *' });
  if (outcome !== 'ok') throw new Error(`the scheduled handler failed (outcome: ${outcome})`);
}

/**
 * @param {{ restUrl: string, restToken: string }} stack
 * @param {Record<string, string>} bindings
 * @param {string} code the bundled Worker
 * @param {number} port
 * @param {NodeJS.WritableStream | undefined} runtimeOutputTo
 * @param {number | undefined} inspectorPort
 * @param {HubOptions} hub
 */
async function startOnPort(stack, bindings, code, port, runtimeOutputTo, inspectorPort, hub) {
  const url = `http://127.0.0.1:${port}`;
  const mf = new Miniflare({
    modules: [{ type: 'ESModule', path: 'index.mjs', contents: code }],
    compatibilityDate: COMPATIBILITY_DATE,
    assets: ASSETS,
    name: WORKER_NAME,
    durableObjects: DURABLE_OBJECTS,
    ...hub,
    host: '127.0.0.1',
    port,
    ...(inspectorPort === undefined ? {} : { inspectorPort }),
    bindings: {
      UPSTASH_REDIS_REST_URL: stack.restUrl,
      UPSTASH_REDIS_REST_TOKEN: stack.restToken,
      GROUPQ_PUBLIC_URL: url,
      GROUPQ_ALLOW_HTTP_LOOPBACK: 'true',
      GROUPQ_SCHEDULER_STAY_MS: '0',
      GROUPQ_LOG_LEVEL: 'warn',
      ...bindings,
    },
    ...(runtimeOutputTo
      ? {
          handleRuntimeStdio(/** @type {import('node:stream').Readable} */ stdout, /** @type {import('node:stream').Readable} */ stderr) {
            stdout.pipe(runtimeOutputTo, { end: false });
            stderr.pipe(runtimeOutputTo, { end: false });
          },
        }
      : {}),
  });
  try {
    await mf.ready;
  } catch (error) {
    await mf.dispose().catch(() => {});
    throw error;
  }
  /** @type {Promise<void> | undefined} */
  let disposed;
  return {
    mf,
    /** The Worker's origin on loopback, e.g. http://127.0.0.1:41234 (also its GROUPQ_PUBLIC_URL). */
    url,
    /** Fires the cron trigger and waits for the scheduled handler (and its waitUntil) to end. */
    scheduled: () => fireScheduled(mf),
    // Once only: a second Miniflare dispose rejects with "Server is not running".
    dispose: () => (disposed ??= mf.dispose()),
  };
}
