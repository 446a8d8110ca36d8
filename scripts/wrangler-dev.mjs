// The Worker for `npm run dev`: `wrangler dev` (the CLI from node_modules, run with this Node)
// on 127.0.0.1:<port> with `--test-scheduled`, every binding passed in an env file of its own
// (mode 0600, so secrets such as a real Upstash token never show in `ps`; with --env-file
// wrangler reads neither .dev.vars nor .env, and the file's values win over wrangler.toml
// [vars]), its output prefixed and stripped of wrangler's noise. wrangler runs in its own process group because it starts workerd and
// esbuild: stop() ends the whole group and resolves only when none of it is left.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

const require = createRequire(import.meta.url);
const OUTPUT_TAIL_LINES = 10;

/**
 * Lines wrangler prints that say nothing to a groupq developer: the banner, the bindings table
 * (npm run dev prints its own summary), the hint to re-run `wrangler types`, its own ready line
 * (we print ours once /health answers), the access log of the health probe and the dev ticker,
 * and the `Request.cf` warning wrangler prints when it cannot reach workers.cloudflare.com.
 */
const NOISE = [
  /^⛅️ wrangler /,
  /^─+$/,
  /^Your Worker has access to the following bindings:/,
  /^Binding\s+Resource\s+Mode$/,
  /^env\.\S+ \(.*\)\s+Environment Variable\s+local$/,
  /^❓ Your types might be out of date/,
  /^Using (secrets|vars) defined in /,
  /^⎔ Starting local server/,
  /^\[wrangler:info\] Ready on /,
  /^\[wrangler:info\] (GET|HEAD) \/(health|__scheduled)\b/,
  /^🪵\s+Logs were written to /,
];
/** Starts a multi-line warning whose stack trace follows it. */
const NOISE_WITH_TRACE = /Unable to fetch the `Request\.cf` object/;
/** Lines that belong to the trace of a dropped warning. */
const TRACE_LINE = /^(Error: |\s+at )/;
// eslint-disable-next-line no-control-regex
const ANSI = /\u001b\[[0-9;]*m/g;

/**
 * Splits a stream into lines and calls `onLine` for each, dropping wrangler's noise.
 * @param {NodeJS.ReadableStream} stream
 * @param {(line: string) => void} onLine
 */
function followOutput(stream, onLine) {
  let pending = '';
  let inTrace = false;
  /** @param {string} line */
  const handle = (line) => {
    const plain = line.replace(ANSI, '').trimEnd();
    if (inTrace && TRACE_LINE.test(plain)) return;
    inTrace = NOISE_WITH_TRACE.test(plain);
    if (inTrace || plain.trim() === '' || NOISE.some((pattern) => pattern.test(plain.trim()))) return;
    // The access log reads better without wrangler's tag: "[worker] PUT /v1/queues/q 200 OK (4ms)".
    onLine(line.replace(/^\[wrangler:info\] /, ''));
  };
  stream.setEncoding('utf8');
  stream.on('data', (/** @type {string} */ chunk) => {
    const lines = (pending + chunk).split('\n');
    pending = lines.pop() ?? '';
    for (const line of lines) handle(line);
  });
  stream.on('end', () => {
    if (pending) handle(pending);
    pending = '';
  });
}

/**
 * Resolves when nothing listens on 127.0.0.1:<port>; wrangler would otherwise fail late, or a
 * stale server on the port would answer our health probe.
 * @param {number} port
 */
function assertPortFree(port) {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', (err) => reject(new Error(`PORT ${port} is not free on 127.0.0.1 (${/** @type {NodeJS.ErrnoException} */ (err).code}); set PORT to another port`)));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(undefined)));
  });
}

/**
 * @param {number} pgid
 * @returns {boolean} whether any process of the group is still there
 */
function groupAlive(pgid) {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch (err) {
    return /** @type {NodeJS.ErrnoException} */ (err).code === 'EPERM';
  }
}

/**
 * @param {number} pgid
 * @param {NodeJS.Signals} signal
 */
function signalGroup(pgid, signal) {
  try {
    process.kill(-pgid, signal);
  } catch {
    // the group is already gone
  }
}

/** @param {number} ms */
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms).unref());

/**
 * @param {number} pgid
 * @param {number} ms
 * @returns {Promise<boolean>} true once the group is empty, false when `ms` passed first
 */
async function groupGoneWithin(pgid, ms) {
  const deadline = Date.now() + ms;
  while (groupAlive(pgid)) {
    if (Date.now() > deadline) return false;
    await sleep(50);
  }
  return true;
}

/**
 * Starts `wrangler dev` and resolves once GET /health answers {"ok":true}.
 * @param {{
 *   port: number,
 *   bindings: Record<string, string>,
 *   log: (line: string) => void,
 *   cwd: string,
 *   signal?: AbortSignal,
 *   startTimeoutMs?: number,
 * }} options
 */
/**
 * Writes the bindings as a dotenv file readable by this user only; returns its path and a remover.
 * @param {Record<string, string>} bindings
 */
function writeEnvFile(bindings) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'groupq-dev-env-'));
  const file = path.join(dir, 'worker.env');
  // Double-quoted dotenv values: backslashes and quotes escaped, so any token survives intact.
  const quote = (/** @type {string} */ value) => `"${value.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
  writeFileSync(file, Object.entries(bindings).map(([name, value]) => `${name}=${quote(value)}\n`).join(''), { mode: 0o600 });
  return { file, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

export async function startWranglerDev({ port, bindings, log, cwd, signal, startTimeoutMs = 120_000 }) {
  await assertPortFree(port);
  const envFile = writeEnvFile(bindings);
  const args = [
    require.resolve('wrangler/bin/wrangler.js'),
    'dev',
    '--ip', '127.0.0.1',
    '--port', String(port),
    '--test-scheduled',
    '--show-interactive-dev-session=false',
    '--env-file', envFile.file,
  ];
  const child = spawn(process.execPath, args, {
    cwd,
    // No stdin: wrangler then never prompts (metrics consent, error reports, hotkeys).
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
    env: {
      ...process.env,
      WRANGLER_SEND_METRICS: 'false',
      WRANGLER_SEND_ERROR_REPORTS: 'false',
      WRANGLER_HIDE_BANNER: 'true',
      // The env file is read only while loading dev vars from env files is on; and nothing of
      // this shell's environment becomes a binding.
      CLOUDFLARE_LOAD_DEV_VARS_FROM_DOT_ENV: 'true',
      CLOUDFLARE_INCLUDE_PROCESS_ENV: 'false',
    },
  });
  const pgid = /** @type {number} */ (child.pid);
  /** @type {string[]} */
  const tail = [];
  /** @param {string} line */
  const keep = (line) => {
    tail.push(line);
    if (tail.length > OUTPUT_TAIL_LINES) tail.shift();
  };
  let stopping = false;
  /** @param {string} line */
  const print = (line) => {
    keep(line);
    // While stopping, wrangler's goodbye lines are noise too.
    if (!stopping) log(line);
  };
  followOutput(/** @type {NodeJS.ReadableStream} */ (child.stdout), print);
  followOutput(/** @type {NodeJS.ReadableStream} */ (child.stderr), print);

  /** @type {Promise<{ code: number | null, signal: NodeJS.Signals | null }>} */
  const exited = new Promise((resolve) => child.once('exit', (code, sig) => resolve({ code, signal: sig })));
  let hasExited = false;
  void exited.then(() => {
    hasExited = true;
  });
  // Last resort when our process exits without calling stop() (crash, process.exit).
  const killOnExit = () => {
    signalGroup(pgid, 'SIGKILL');
    envFile.remove();
  };
  process.once('exit', killOnExit);

  /** Ends wrangler (which stops its workerd), then anything left in its group. */
  async function stop() {
    stopping = true;
    // wrangler's launcher forwards SIGTERM to its CLI, which shuts workerd down cleanly. When the
    // launcher is already gone (it crashed or was killed), whatever it left gets the signal.
    if (!hasExited) child.kill('SIGTERM');
    else signalGroup(pgid, 'SIGTERM');
    if (!(await groupGoneWithin(pgid, 8000))) {
      signalGroup(pgid, 'SIGKILL');
      await groupGoneWithin(pgid, 5000);
    }
    await exited;
    envFile.remove();
    process.removeListener('exit', killOnExit);
  }

  const describeExit = async () => {
    const { code, signal: sig } = await exited;
    return `exited (${sig ? `signal ${sig}` : `code ${code}`})${tail.length ? `; last output:\n${tail.join('\n')}` : ''}`;
  };

  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + startTimeoutMs;
  let last = 'no answer yet';
  for (;;) {
    if (signal?.aborted) {
      await stop();
      throw new Error('stopped while the Worker was starting');
    }
    if (hasExited) {
      await stop();
      throw new Error(`wrangler dev ${await describeExit()}`);
    }
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`the Worker did not answer GET /health with {"ok":true} within ${startTimeoutMs} ms (last: ${last})${tail.length ? `; wrangler's last output:\n${tail.join('\n')}` : ''}`);
    }
    try {
      const res = await fetch(`${url}/health`, { signal: AbortSignal.timeout(5000) });
      const text = await res.text();
      last = `${res.status} ${text.slice(0, 200)}`;
      if (res.ok && /** @type {{ ok?: unknown }} */ (JSON.parse(text)).ok === true) break;
    } catch (err) {
      last = /** @type {Error} */ (err).message;
    }
    await sleep(250);
  }

  return {
    url,
    stop,
    /** Resolves with a description when wrangler ends (unexpectedly, unless stop() ran). */
    exited: describeExit(),
  };
}
