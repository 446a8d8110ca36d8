// What the Worker costs before it does anything: its bundle as `wrangler deploy --minify` would
// upload it (every cold isolate parses all of it), and its startup in workerd.
// `npm run bench -- --bundle` runs only this (under a minute, no Redis).
//
// Startup: each run starts a new Miniflare (one workerd) whose entry module imports the Worker
// on the first request, as wrangler's `check startup` does: that request pays for parsing and
// compiling the bundle, running its top level and answering GET / for the first time (no Redis,
// no auth). The second request's time (the same answer from the loaded Worker: the round trip) is
// taken off. A Worker that only answers `{}` is timed the same way, run for run in turn, to show
// what is left of the harness. Cloudflare's CPUs differ: these figures compare versions on one
// machine, and other load on it spreads them.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { gzipSync } from 'node:zlib';
import { Miniflare } from 'miniflare';
import { COMPATIBILITY_DATE } from '../../scripts/worker-stack.mjs';
import { round } from './redis-stats';

export interface WorkerBundleBytes {
  /** index.js as `wrangler deploy --dry-run --minify` writes it. */
  minified: number;
  /** The same, gzipped (zlib's default level, as wrangler reports its upload size). */
  gzipped: number;
}

export interface WorkerStartup {
  runs: number;
  /** Loading the Worker and answering GET / on a new workerd, less a loaded Worker's answer: median (ms). */
  medianMs: number;
  /** The same for a Worker that only answers `{}`. */
  emptyWorkerMedianMs: number;
  samplesMs: number[];
  emptyWorkerSamplesMs: number[];
}

export interface WorkerBundleResult {
  bytes: WorkerBundleBytes;
  startup: WorkerStartup;
}

const STARTUP_RUNS = 7;
const EMPTY_WORKER = 'export default { fetch() { return new Response("{}"); } };';
/** Enough for GET / to answer 200 (src/handlers/settings.ts); nothing is ever called. */
const BINDINGS = {
  UPSTASH_REDIS_REST_URL: 'http://127.0.0.1:9',
  UPSTASH_REDIS_REST_TOKEN: 'bench-startup-token',
  GROUPQ_ADMIN_TOKEN: 'bench-startup-admin-token-0123456789',
  GROUPQ_SIGNING_SECRET: `whsec_${Buffer.from('groupq-bench-startup-secret-0123').toString('base64')}`,
  GROUPQ_PUBLIC_URL: 'https://groupq.example.com',
};

const wrangler = path.join(path.dirname(createRequire(import.meta.url).resolve('wrangler/package.json')), 'bin', 'wrangler.js');

/** Builds the Worker from wrangler.toml as a deploy would, minified, and returns its code. */
async function deployBundle(): Promise<string> {
  const outDir = await mkdtemp(path.join(os.tmpdir(), 'groupq-bundle-'));
  try {
    await promisify(execFile)(process.execPath, [wrangler, 'deploy', '--dry-run', '--minify', '--outdir', outDir], {
      env: { ...process.env, WRANGLER_SEND_METRICS: 'false', CI: 'true' },
    });
    return await readFile(path.join(outDir, 'index.js'), 'utf8');
  } finally {
    await rm(outDir, { recursive: true, force: true });
  }
}

/**
 * The entry module: it loads the Worker on the first request, as wrangler's `check startup` does,
 * so that loading it (parse, compile, top level) happens between two clocks we can read.
 */
const LOADER = `let worker;
export default {
  async fetch(request, env, ctx) {
    worker ??= (await import('./worker.js')).default;
    return worker.fetch(request, env, ctx);
  },
};`;

/**
 * Milliseconds a new workerd takes to load `code` and answer GET / with it: the first request's
 * time less the second's (the same request on a loaded Worker: the HTTP round trip).
 */
async function timeStartup(code: string): Promise<number> {
  const mf = new Miniflare({
    modules: [
      { type: 'ESModule', path: 'loader.js', contents: LOADER },
      { type: 'ESModule', path: 'worker.js', contents: code },
    ],
    compatibilityDate: COMPATIBILITY_DATE,
    bindings: BINDINGS,
  });
  try {
    await mf.ready;
    const get = async () => {
      const t0 = performance.now();
      const res = await mf.dispatchFetch('http://localhost/');
      await res.arrayBuffer();
      if (res.status !== 200) throw new Error(`worker startup: GET / answered ${res.status}`);
      return performance.now() - t0;
    };
    const first = await get();
    return first - (await get());
  } finally {
    await mf.dispose();
  }
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

/** `runs` startups of `code` and of an empty Worker, in turn. */
export async function measureStartup(code: string, runs = STARTUP_RUNS): Promise<WorkerStartup> {
  const samplesMs: number[] = [];
  const emptyWorkerSamplesMs: number[] = [];
  // One unmeasured start first: the first workerd launch also warms the disk cache.
  await timeStartup(EMPTY_WORKER);
  for (let i = 0; i < runs; i++) {
    emptyWorkerSamplesMs.push(round(await timeStartup(EMPTY_WORKER), 1));
    samplesMs.push(round(await timeStartup(code), 1));
  }
  return { runs, medianMs: median(samplesMs), emptyWorkerMedianMs: median(emptyWorkerSamplesMs), samplesMs, emptyWorkerSamplesMs };
}

export async function runWorkerBundle(log: (line: string) => void): Promise<WorkerBundleResult> {
  log('worker bundle: wrangler deploy --dry-run --minify');
  const code = await deployBundle();
  const bytes = { minified: Buffer.byteLength(code), gzipped: gzipSync(code).byteLength };
  log(`worker startup: ${STARTUP_RUNS} cold starts of the Worker and of an empty Worker, in turn`);
  return { bytes, startup: await measureStartup(code) };
}
