// The built bin, as `npx groupq` runs it: `node dist/cli.js` (built by test/global-setup.ts
// from src/cli/index.ts) in a child process with GROUPQ_URL/GROUPQ_TOKEN in its environment.
// Exit codes reach the shell, and Ctrl-C (SIGINT) stops a live monitor with exit 0.
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';
import { enqueue, pausedQueue, uniqueQueue, useHttpSuite } from '../http/support';
import { ADMIN_TOKEN } from '../helpers/worker';

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '../..');
const bin = path.join(root, 'dist/cli.js');
const suite = useHttpSuite();

interface Run {
  child: ChildProcess;
  stdout: () => string;
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>;
}

/** `node dist/cli.js <argv>` with only PATH and `env` in its environment. */
function run(argv: string[], env: Record<string, string>): Run {
  const child = spawn(process.execPath, [bin, ...argv], { cwd: root, env: { PATH: process.env.PATH ?? '', ...env } });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>((resolve) =>
    child.on('close', (code, signal) => resolve({ code, signal, stderr })),
  );
  return { child, stdout: () => stdout, exit };
}

describe('node dist/cli.js', () => {
  test('is an executable script', () => {
    expect(readFileSync(bin, 'utf8').startsWith('#!/usr/bin/env node\n')).toBe(true);
  });

  test('queues --json with GROUPQ_URL and GROUPQ_TOKEN in the environment', async () => {
    const queue = uniqueQueue('cli-bin');
    await pausedQueue(suite.worker, queue);
    const { stdout, exit } = run(['queues', '--json'], { GROUPQ_URL: suite.worker.url, GROUPQ_TOKEN: ADMIN_TOKEN });
    expect(await exit).toEqual({ code: 0, signal: null, stderr: '' });
    const list = JSON.parse(stdout()) as { name: string; paused: boolean }[];
    expect(list.find((q) => q.name === queue)).toMatchObject({ name: queue, paused: true });
  });

  test('an id led by "-" is read after "--" (without it, exit 2 and where it goes)', async () => {
    const queue = uniqueQueue('cli-bin');
    await pausedQueue(suite.worker, queue);
    const id = '-lxi4TqW0aPzR4kTc';
    await enqueue(suite.worker, queue, { group: 'g', id, data: null });
    const env = { GROUPQ_URL: suite.worker.url, GROUPQ_TOKEN: ADMIN_TOKEN };

    const ended = run(['job', queue, '--', id], env);
    expect(await ended.exit).toEqual({ code: 0, signal: null, stderr: '' });
    expect(JSON.parse(ended.stdout())).toMatchObject({ id, state: 'waiting' });

    const bare = run(['job', queue, id], env);
    const { code, stderr } = await bare.exit;
    expect(code).toBe(2);
    expect(stderr).toMatch(/^groupq: unknown option '-l' \(an argument led by "-" goes after "--"/);
  });

  test('exit 2 and the hint when the environment lacks GROUPQ_URL', async () => {
    const { stdout, exit } = run(['queues'], { GROUPQ_TOKEN: ADMIN_TOKEN });
    const { code, stderr } = await exit;
    expect(code).toBe(2);
    expect(stdout()).toBe('');
    expect(stderr).toMatch(/^groupq: no Worker URL: set GROUPQ_URL or pass --url <url>\n/);
  });

  test('Ctrl-C ends a live monitor with exit 0', async () => {
    const queue = uniqueQueue('cli-bin-monitor');
    await pausedQueue(suite.worker, queue);
    const monitor = run(['monitor', queue, '--interval', '200'], { GROUPQ_URL: suite.worker.url, GROUPQ_TOKEN: ADMIN_TOKEN });
    const deadline = Date.now() + 20_000;
    while ((monitor.stdout().match(/groupq monitor/g) ?? []).length < 2 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    monitor.child.kill('SIGINT');
    const { code, signal, stderr } = await monitor.exit;
    expect({ code, signal, stderr }).toEqual({ code: 0, signal: null, stderr: '' });
    expect(monitor.stdout()).toContain(`groupq monitor  ${queue}  PAUSED`);
  });
});
