// The two endpoint examples, run as a user runs them, as the endpoints of real queues:
// examples/worker-endpoint bundled by `wrangler deploy --dry-run` (so 'groupq/receiver' resolves
// through the package's own exports to dist/, as under `wrangler dev`) and run in workerd, and
// examples/node-endpoint/server.mjs spawned with node. Both need dist/ (test/global-setup.ts
// builds it).
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Miniflare } from 'miniflare';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COMPATIBILITY_DATE } from '../../scripts/worker-stack.mjs';
import { freePort } from '../../scripts/redis-server.mjs';
import { SIGNING_SECRET } from '../helpers/worker';
import { enqueue, jobInState, putQueue, queueName, useWorker } from '../delivery/support';

const run = promisify(execFile);
const require = createRequire(import.meta.url);
const wrangler = path.join(path.dirname(require.resolve('wrangler/package.json')), 'bin', 'wrangler.js');
const tsc = require.resolve('typescript/bin/tsc');

/** SHA-256 applied `rounds` times, as the Worker example computes it. */
function digest(text: string, rounds: number): string {
  let bytes: Buffer = Buffer.from(text, 'utf8');
  for (let i = 0; i < rounds; i++) bytes = createHash('sha256').update(bytes).digest();
  return bytes.toString('hex');
}

describe('examples/worker-endpoint in workerd', () => {
  const env = useWorker();
  let example: Miniflare;
  let exampleUrl: string;

  beforeAll(async () => {
    const outDir = mkdtempSync(path.join(os.tmpdir(), 'groupq-example-worker-'));
    try {
      await run(process.execPath, [wrangler, 'deploy', '--dry-run', '--outdir', outDir, '-c', 'examples/worker-endpoint/wrangler.toml'], {
        env: { ...process.env, WRANGLER_SEND_METRICS: 'false', CI: 'true' },
      });
      const port = await freePort();
      exampleUrl = `http://127.0.0.1:${port}`;
      example = new Miniflare({
        modules: [{ type: 'ESModule', path: 'index.js', contents: readFileSync(path.join(outDir, 'index.js'), 'utf8') }],
        compatibilityDate: COMPATIBILITY_DATE,
        host: '127.0.0.1',
        port,
        bindings: { GROUPQ_SIGNING_SECRET: SIGNING_SECRET },
      });
      await example.ready;
    } finally {
      rmSync(outDir, { recursive: true, force: true });
    }
  });
  afterAll(() => example?.dispose());

  it('type-checks against the published types', async () => {
    await run(process.execPath, [tsc, '-p', 'examples/worker-endpoint']);
  });

  it('POST / answers with the result, which the job stores', async () => {
    const queue = queueName('example-worker');
    await putQueue(env.worker, queue, { endpoint: `${exampleUrl}/`, keepCompleted: 10 });
    const { id } = await enqueue(env.worker, queue, { group: 'docs', data: { text: 'hello', rounds: 3 } });
    const job = await jobInState(env.worker, queue, id, 'completed');
    expect(job).toMatchObject({ attempts: 1, result: { sha256: digest('hello', 3), rounds: 3 } });
  });

  it('POST /async answers 202 and finishes through the callbacks under waitUntil, with progress', async () => {
    const queue = queueName('example-worker-async');
    await putQueue(env.worker, queue, { endpoint: `${exampleUrl}/async`, keepCompleted: 10 });
    const { id } = await enqueue(env.worker, queue, { group: 'docs', data: { text: 'hello', rounds: 20 } });
    const job = await jobInState(env.worker, queue, id, 'completed');
    // Progress at each tenth of the way: the last one sent was 90 (18 of 20 rounds).
    expect(job).toMatchObject({ attempts: 1, result: { sha256: digest('hello', 20), rounds: 20 }, progress: 90 });
  });

  it('data that does not fit its schema fails the job at once (400)', async () => {
    const queue = queueName('example-worker-bad');
    await putQueue(env.worker, queue, { endpoint: `${exampleUrl}/`, maxAttempts: 3 });
    const { id } = await enqueue(env.worker, queue, { group: 'docs', data: { text: 42 } });
    const job = await jobInState(env.worker, queue, id, 'failed');
    expect(job.attempts).toBe(1);
    expect(job.error).toBe("HTTP 400: the job's data is not valid: text: Invalid input: expected string, received number");
  });

  it('refuses what groupq did not sign, and anything but POST', async () => {
    const forged = await fetch(`${exampleUrl}/`, { method: 'POST', body: '{}' });
    expect(forged.status).toBe(401);
    expect(await forged.text()).toMatch(/^missing headers: webhook-id/);
    expect((await fetch(`${exampleUrl}/`)).status).toBe(405);
  });
});

/** Starts the Node example and resolves with its URL once it says it listens. */
function startNodeExample(extraEnv: Record<string, string>): Promise<{ child: ChildProcess; url: string; output: () => string }> {
  const child = spawn(process.execPath, ['examples/node-endpoint/server.mjs'], {
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', ...extraEnv },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  return new Promise((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = /listening on (http:\/\/127\.0\.0\.1:\d+)\//.exec(output);
      if (match) resolve({ child, url: match[1]!, output: () => output });
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`the Node example exited (${code}): ${output}`)));
  });
}

describe('examples/node-endpoint/server.mjs on Node', () => {
  const env = useWorker();
  let example: Awaited<ReturnType<typeof startNodeExample>>;
  beforeAll(async () => {
    example = await startNodeExample({ GROUPQ_SIGNING_SECRET: SIGNING_SECRET });
  });
  afterAll(() => {
    if (example?.child.exitCode === null) example.child.kill('SIGKILL');
  });

  it('completes a job with its result, and fails bad data without retries', async () => {
    const queue = queueName('example-node');
    await putQueue(env.worker, queue, { endpoint: `${example.url}/jobs`, keepCompleted: 10, maxAttempts: 3 });
    const good = await enqueue(env.worker, queue, { group: 'g', data: { text: 'one two  three\n' } });
    const bad = await enqueue(env.worker, queue, { group: 'h', data: { text: 42 } });
    expect(await jobInState(env.worker, queue, good.id, 'completed')).toMatchObject({ attempts: 1, result: { words: 3, attempt: 1 } });
    expect(await jobInState(env.worker, queue, bad.id, 'failed')).toMatchObject({ attempts: 1, error: 'HTTP 500: data.text must be a string' });
    expect(example.output()).toContain(`200 job ${good.id} attempt 1`);
  });

  it('stops on SIGTERM with exit code 0', async () => {
    const exited = new Promise<number | null>((resolve) => example.child.once('exit', resolve));
    example.child.kill('SIGTERM');
    expect(await exited).toBe(0);
  });

  it('refuses to start without a signing secret', async () => {
    const child = spawn(process.execPath, ['examples/node-endpoint/server.mjs'], {
      env: { ...process.env, GROUPQ_SIGNING_SECRET: '', PORT: '0' },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(code).toBe(1);
    expect(stderr).toContain('set GROUPQ_SIGNING_SECRET');
  });
});
