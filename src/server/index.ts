// The Node server (`groupq serve`, `node dist/server.js`): the Worker's Hono app on
// @hono/node-server, for a team that runs its own servers (docs/self-hosting.md). The same
// routes, engine, scripts and pushes; what a Worker gets from Cloudflare comes from here:
// - settings from the environment under the bindings' names (env.ts), REDIS_URL for a Redis over TCP;
// - the cron trigger: an in-process scheduler on the same schedule (scheduler.ts);
// - waitUntil: the work after an answer (drains, pushes, events) runs on in this process, and
//   a stop waits for it;
// - static assets: public/ with its _headers (assets.ts), served before the app except on the
//   dashboard's paths, as wrangler.toml's run_worker_first says;
// - the event hubs: in this process (hub.ts), and Redis pub/sub between processes (bus.ts).
// Settings that do not parse stop the process at once, naming them (a Worker answers 500).
import type { AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { serve } from '@hono/node-server';
import { app } from '../handlers/app';
import { runScheduled } from '../handlers/scheduled';
import { REQUEST_DRAIN_MS } from '../handlers/scope';
import { BindingsError, settingsOf } from '../handlers/settings';
import { createLog } from '../core/log';
import { createAssets } from './assets';
import { serverEnv } from './env';
import { createServerRuntime } from './runtime';
import { WORKER_CRON, checkCron, startScheduler } from './scheduler';

export interface ServerOptions {
  /** The environment to read settings from. @default process.env */
  env?: NodeJS.ProcessEnv;
  port?: number;
  hostname?: string;
  /** The static assets' folder (the dashboard). @default dist/public beside this file */
  assets?: string;
  /**
   * The scheduler's schedule; null: none, the caller fires scheduled() (npm run dev's ticker).
   * @default GROUPQ_CRON, else wrangler.toml's
   */
  cron?: string | null;
}

export interface RunningServer {
  url: string;
  /** Runs the scheduler once, as the cron does; resolves when it and the work it started ended. */
  scheduled(): Promise<void>;
  /** Stops taking requests and the scheduler, waits for the work under way, closes Redis. */
  stop(): Promise<void>;
}

/** The server's settings beyond the app's: where it listens and when its cron runs. */
function serverSettings(source: NodeJS.ProcessEnv, options: ServerOptions) {
  const port = options.port ?? Number(source.PORT || 8787);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new BindingsError(`groupq serve: PORT must be a port number, got "${source.PORT}"`);
  const cron = options.cron === undefined ? source.GROUPQ_CRON || WORKER_CRON : options.cron;
  const problem = cron === null ? null : checkCron(cron);
  if (problem !== null) throw new BindingsError(`groupq serve: GROUPQ_CRON is not a cron schedule (${problem})`);
  return { port, hostname: options.hostname ?? (source.HOST || '0.0.0.0'), cron };
}

export async function startServer(options: ServerOptions = {}): Promise<RunningServer> {
  const source = options.env ?? process.env;
  const { port, hostname, cron } = serverSettings(source, options);
  const root = options.assets ?? join(dirname(fileURLToPath(import.meta.url)), 'public');
  const runtime = createServerRuntime();
  const assets = createAssets(root);
  const env = serverEnv(source, runtime, assets.fetcher);
  let settings;
  try {
    settings = settingsOf(env);
    await runtime.start(settings);
  } catch (error) {
    await runtime.close();
    throw error;
  }
  const log = createLog(settings.logLevel, {});
  // waitUntil's work: what a stop waits for.
  const pending = new Set<Promise<unknown>>();
  const waitUntil = (work: Promise<unknown>) => {
    const tracked = work.catch((error: unknown) => log.error('background_failed', 'work after an answer failed', { error }));
    pending.add(tracked);
    void tracked.finally(() => pending.delete(tracked));
  };
  const executionCtx = { waitUntil, passThroughOnException() {}, props: {} } as unknown as ExecutionContext;
  const server = serve({
    hostname,
    port,
    fetch: (request: Request) => {
      const path = new URL(request.url).pathname;
      if (!path.startsWith('/dashboard') && assets.has(path)) return env.ASSETS.fetch(request);
      return app.fetch(request, env, executionCtx);
    },
  });
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('listening', resolve);
      server.once('error', reject);
    });
  } catch (error) {
    await runtime.close(); // a port taken: nothing of it stays open
    throw error;
  }
  const scheduler = cron === null ? null : startScheduler(cron, () => runScheduled(env, waitUntil), () => {
    // runScheduled logged it: the next time comes as usual.
  });
  const address = server.address() as AddressInfo;
  const host = hostname === '0.0.0.0' || hostname === '::' ? '127.0.0.1' : hostname;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${address.port}`,
    async scheduled() {
      const work: Promise<unknown>[] = [];
      await runScheduled(env, (promise) => {
        work.push(promise);
        waitUntil(promise);
      });
      await Promise.allSettled(work);
    },
    async stop() {
      await scheduler?.stop();
      const http = server as { closeIdleConnections?: () => void; closeAllConnections?: () => void };
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      http.closeIdleConnections?.();
      const deadline = new Promise((resolve) => setTimeout(resolve, REQUEST_DRAIN_MS).unref());
      await Promise.race([Promise.all([...pending]), deadline]);
      // Open event streams would hold the close: they end, and their readers resume elsewhere.
      http.closeAllConnections?.();
      await closed;
      await runtime.close();
    },
  };
}

/** `groupq serve`: starts, prints where, and stops on SIGINT or SIGTERM (exit 0). */
export async function main(): Promise<void> {
  let running: RunningServer;
  try {
    running = await startServer();
  } catch (error) {
    // Settings that do not parse, a Redis that does not answer, a port taken: one line, no stack.
    const cause = error instanceof Error && error.cause instanceof Error ? ` (${error.cause.message})` : '';
    console.error(error instanceof BindingsError ? error.message : `groupq serve: ${error instanceof Error ? error.message : String(error)}${cause}`);
    process.exit(1);
  }
  console.log(`groupq serve: listening on ${running.url}`);
  const stop = () => {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
    running.stop().then(
      () => process.exit(0),
      (error: unknown) => {
        console.error(error);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) await main();
