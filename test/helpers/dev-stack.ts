// `npm run dev` as a user runs it (node scripts/dev.mjs), for the test/dev suites: on free ports,
// with its own data dir, its stdout and stderr kept apart and together, and the /proc and port
// checks that tell whether it left anything behind.
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '../../scripts/redis-server.mjs';

/** Distinct free ports (freePort alone may hand out the same one twice). */
export async function distinctFreePorts(n: number): Promise<number[]> {
  const ports = new Set<number>();
  while (ports.size < n) ports.add(await freePort());
  return [...ports];
}

/** Resolves when nothing listens on 127.0.0.1:port (we can listen there ourselves). */
export function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** Command lines of live processes (Linux /proc) that mention any of `needles`. */
export function processesMentioning(needles: string[]): string[] {
  if (!existsSync('/proc/self/cmdline')) return [];
  const found: string[] = [];
  for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    let cmdline = '';
    try {
      cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ').trim();
    } catch {
      continue; // ended while we looked
    }
    if (needles.some((needle) => cmdline.includes(needle))) found.push(`${pid}: ${cmdline}`);
  }
  return found;
}

export type Exit = { code: number | null; signal: NodeJS.Signals | null };

export interface DevStack {
  child: ChildProcess;
  /** The Worker, the local Redis, the REST bridge and the example endpoint. */
  ports: { port: number; redisPort: number; restPort: number; examplePort: number };
  /** stdout and stderr as they arrived, interleaved. */
  output(): string;
  stderr(): string;
  exit: Promise<Exit>;
  /** Resolves with the first match of `pattern` in the output, waiting for it if needed. */
  waitForOutput(pattern: RegExp, timeoutMs: number): Promise<RegExpMatchArray>;
  /** SIGTERM when still running, then removes the data dir. */
  dispose(): Promise<void>;
}

export const READY_TIMEOUT_MS = 90_000;

/**
 * Starts `npm run dev` with the defaults a fresh machine has, plus `env`; resolves when ready.
 * `node`: the binary that runs it (test/node-versions runs it on other Node versions).
 */
export async function startDevStack(env: NodeJS.ProcessEnv = {}, node = process.execPath): Promise<DevStack> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'groupq-dev-'));
  const [port, redisPort, restPort, examplePort] = (await distinctFreePorts(4)) as [number, number, number, number];
  const childEnv: NodeJS.ProcessEnv = {
    ...process.env,
    PORT: String(port),
    REDIS_PORT: String(redisPort),
    REDIS_REST_PORT: String(restPort),
    EXAMPLE_ENDPOINT_PORT: String(examplePort),
    GROUPQ_DEV_DATA_DIR: path.join(dir, 'redis'),
  };
  // The defaults a fresh machine has: the local Redis and the printed dev tokens.
  // Every setting npm run dev passes on to the Worker is unset unless the test sets it.
  for (const name of [
    'UPSTASH_REDIS_REST_URL',
    'UPSTASH_REDIS_REST_TOKEN',
    'GROUPQ_ADMIN_TOKEN',
    'GROUPQ_SIGNING_SECRET',
    'GROUPQ_SIGNING_SECRET_NEXT',
    'GROUPQ_METRICS_TOKEN',
    'GROUPQ_PUBLIC_URL',
    'GROUPQ_REDIS_POOL',
    'GROUPQ_MAX_PUSHES',
    'GROUPQ_SCHEDULER_STAY_MS',
    'GROUPQ_SCRIPT_KEY_LOCKING',
  ]) {
    delete childEnv[name];
  }
  Object.assign(childEnv, env);
  const child = spawn(node, ['scripts/dev.mjs'], { env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] });
  const exit = new Promise<Exit>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  let all = '';
  let errors = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (all += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
    all += chunk;
    errors += chunk;
  });

  function waitForOutput(pattern: RegExp, timeoutMs: number): Promise<RegExpMatchArray> {
    return new Promise((resolve, reject) => {
      const streams = [child.stdout!, child.stderr!];
      const cleanup = () => {
        clearTimeout(timer);
        for (const stream of streams) stream.off('data', check);
        child.off('exit', exited);
      };
      const check = () => {
        const match = all.match(pattern);
        if (!match) return false;
        cleanup();
        resolve(match);
        return true;
      };
      const exited = () => {
        cleanup();
        reject(new Error(`npm run dev exited before printing ${pattern}; output:\n${all}`));
      };
      const timer = setTimeout(() => {
        cleanup();
        reject(new Error(`no ${pattern} within ${timeoutMs} ms; output:\n${all}`));
      }, timeoutMs);
      if (check()) return;
      for (const stream of streams) stream.on('data', check);
      child.once('exit', exited);
    });
  }

  const stack: DevStack = {
    child,
    ports: { port, redisPort, restPort, examplePort },
    output: () => all,
    stderr: () => errors,
    exit,
    waitForOutput,
    async dispose() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        await exit;
      }
      await rm(dir, { recursive: true, force: true });
    },
  };
  try {
    await waitForOutput(/^groupq dev ready: (\S+)$/m, READY_TIMEOUT_MS);
  } catch (error) {
    await stack.dispose();
    throw error;
  }
  return stack;
}
