// The docs' code runs as written: each block marked `<!-- snippet: name -->` in the README or a
// page of docs/ (each name in exactly one place, wherever it now lives) is compiled
// with esbuild (TypeScript as a user's build would) inside the project, so `groupq/client`
// and `groupq/receiver` resolve to the built package. The client snippet runs with the command
// README.md#enqueue gives for it (node scripts/run-ts.mjs on Node 20); the
// receiver snippets are Workers, run in workerd as the endpoints (or callback URLs) of real queues. Only the dev
// stack's addresses and tokens are swapped for this test's Worker and endpoint.
import { execFile } from 'node:child_process';
import { mkdir, readFile, readdir, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import { Miniflare } from 'miniflare';
import { COMPATIBILITY_DATE } from '../../scripts/worker-stack.mjs';
import { freePort } from '../../scripts/redis-server.mjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Endpoint, startEndpoint } from '../helpers/endpoint';
import { ADMIN_TOKEN, type PrivateStack, type RunningWorker, SIGNING_SECRET, startPrivateStack, startWorker } from '../helpers/worker';
import type { Job } from '../../src/protocol/api/types';
import { jobInState, poll } from '../delivery/support';

const root = path.resolve(import.meta.dirname, '../..');
const run = promisify(execFile);

/** The README and every page of docs/: where snippets may live. */
async function pages(): Promise<string[]> {
  const docs = (await readdir(path.join(root, 'docs'))).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`);
  return ['README.md', ...docs.sort()];
}

async function snippet(name: string): Promise<string> {
  const found: { page: string; code: string }[] = [];
  for (const page of await pages()) {
    const text = await readFile(path.join(root, page), 'utf8');
    for (const match of text.matchAll(new RegExp(`<!-- snippet: ${name} -->\\s*\`\`\`(?:ts|js)\\n([\\s\\S]*?)\`\`\``, 'g'))) {
      found.push({ page, code: match[1]! });
    }
  }
  if (found.length !== 1) throw new Error(`snippet "${name}" is in ${found.length} places (${found.map((f) => f.page).join(', ')}), not one`);
  return found[0]!.code;
}

/** Bundles a Worker snippet as wrangler would and runs it in workerd on a loopback port. */
async function startSnippetWorker(name: string): Promise<{ url: string; dispose(): Promise<void> }> {
  const entry = path.join(root, '.cache', 'doc-snippets', `${name}.ts`);
  await mkdir(path.dirname(entry), { recursive: true });
  await writeFile(entry, await snippet(name));
  const bundled = await build({
    entryPoints: [entry],
    bundle: true,
    write: false,
    format: 'esm',
    platform: 'neutral',
    conditions: ['workerd', 'worker', 'browser'],
    target: 'es2022',
    logLevel: 'error',
  });
  const port = await freePort();
  const mf = new Miniflare({
    modules: [{ type: 'ESModule', path: 'index.js', contents: bundled.outputFiles[0]!.text }],
    compatibilityDate: COMPATIBILITY_DATE,
    host: '127.0.0.1',
    port,
    bindings: { GROUPQ_SIGNING_SECRET: SIGNING_SECRET },
  });
  await mf.ready;
  return { url: `http://127.0.0.1:${port}`, dispose: () => mf.dispose() };
}

/** Pages for the link checker: /page answers 200 with 5 bytes, anything else 404. */
async function startPages(): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    res.writeHead(req.url === '/page' ? 200 : 404).end(req.url === '/page' ? 'hello' : '');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

let stack: PrivateStack;
let worker: RunningWorker;
let endpoint: Endpoint;
beforeAll(async () => {
  stack = await startPrivateStack();
  worker = await startWorker(stack);
  endpoint = await startEndpoint(() => ({ status: 200, body: '{"sent":true}', headers: { 'content-type': 'application/json' } }));
});
afterAll(async () => {
  await endpoint?.close();
  await worker?.dispose();
  await stack?.close();
});

async function queueTo(url: string): Promise<string> {
  const name = `readme-${Math.random().toString(36).slice(2, 10)}`;
  const answer = await worker.api(`/v1/queues/${name}`, { method: 'PUT', json: { endpoint: url, keepCompleted: 10, maxAttempts: 3 } });
  expect(answer.status).toBe(200);
  return name;
}

async function enqueue(queue: string, data: unknown): Promise<string> {
  const answer = await worker.api(`/v1/queues/${queue}/jobs`, { method: 'POST', json: { group: 'links', data } });
  return ((await answer.json()) as { id: string }).id;
}

function forThisStack(source: string): string {
  return source
    .replaceAll('http://127.0.0.1:8787', worker.url)
    .replaceAll('gq_dev_admin_token', ADMIN_TOKEN)
    .replaceAll('http://127.0.0.1:8788/jobs', `${endpoint.url}/jobs`);
}

describe('doc snippets', () => {
  it('client: run with the command the README names, configures, enqueues, reads, pages and catches a GroupqError', async () => {
    // README.md says how to run it on Node 20 (no type stripping): that command, with the
    // snippet as the .ts file it names (global setup did `npm run build`).
    const readme = await readFile(path.join(root, 'README.md'), 'utf8');
    const command = readme.match(/save it as `(\w+\.ts)`, then\s+`npm run build && node (scripts\/run-ts\.mjs) \1`/);
    expect(command, 'the README names the command that runs the client snippet').not.toBeNull();
    const file = path.join(root, '.cache', 'doc-snippets', command![1]!);
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, forThisStack(await snippet('client')));
    const { stdout } = await run(process.execPath, [command![2]!, file], { cwd: root });
    expect(stdout).toContain('404 JOB_NOT_FOUND job not found');
    await endpoint.waitFor(3);
    expect(endpoint.received.map((r) => r.job.group).sort()).toEqual(['user:42', 'user:7', 'vip:1']);
  });

  it('receiver-handler: a link checker Worker completes, and fails a gone page at once', async () => {
    const pages = await startPages();
    const snippetWorker = await startSnippetWorker('receiver-handler');
    try {
      const queue = await queueTo(snippetWorker.url);
      const ok = await enqueue(queue, { url: `${pages.url}/page` });
      expect(await jobInState(worker, queue, ok, 'completed')).toMatchObject({ attempts: 1, result: { status: 200, bytes: 5 } });
      const gone = await enqueue(queue, { url: `${pages.url}/gone` });
      const failed = await jobInState(worker, queue, gone, 'failed');
      expect(failed).toMatchObject({ attempts: 1, error: `HTTP 500: ${pages.url}/gone is gone` });
      const bad = await enqueue(queue, { url: 'not a url' });
      expect(await jobInState(worker, queue, bad, 'failed')).toMatchObject({ attempts: 1 });
    } finally {
      await snippetWorker.dispose();
      await pages.close();
    }
  });

  it('receiver-outcomes: takes the outcome callbacks of a queue', async () => {
    const snippetWorker = await startSnippetWorker('receiver-outcomes');
    try {
      const queue = `readme-${Math.random().toString(36).slice(2, 10)}`;
      const config = { endpoint: endpoint.url, callbackUrl: snippetWorker.url, keepCompleted: 10 };
      expect((await worker.api(`/v1/queues/${queue}`, { method: 'PUT', json: config })).status).toBe(200);
      const id = await enqueue(queue, { to: 'ada@example.com' });
      const job = await poll(async () => {
        const seen = (await (await worker.api(`/v1/queues/${queue}/jobs/${id}`)).json()) as Job;
        return seen.outcome?.state === 'delivered' ? seen : undefined;
      });
      expect(job).toMatchObject({ state: 'completed', outcome: { attempts: 1 } });
      const unsigned = await fetch(snippetWorker.url, { method: 'POST', body: '{}' });
      expect(unsigned.status).toBe(401);
    } finally {
      await snippetWorker.dispose();
    }
  });

  it('receiver-verify: answers what it verified', async () => {
    const snippetWorker = await startSnippetWorker('receiver-verify');
    try {
      const queue = await queueTo(snippetWorker.url);
      const id = await enqueue(queue, { url: 'https://example.com/' });
      expect(await jobInState(worker, queue, id, 'completed')).toMatchObject({
        result: { checked: 'https://example.com/', attempt: 1 },
      });
      const unsigned = await fetch(snippetWorker.url, { method: 'POST', body: '{}' });
      expect(unsigned.status).toBe(401);
    } finally {
      await snippetWorker.dispose();
    }
  });
});
