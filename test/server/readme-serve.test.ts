// README.md#run-it-on-your-own-server as written: its command line, run by a shell, starts the
// Node server on a Redis over TCP, and a job goes round trip through it (created, pushed signed to
// a loopback endpoint, completed). Only the Redis address and the public URL are swapped for this
// test's; PORT and GROUPQ_ALLOW_HTTP_LOOPBACK (the endpoint is http on 127.0.0.1) come from the
// environment, as a user's own settings would.
import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { freePort } from '../../scripts/redis-server.mjs';
import { type Endpoint, startEndpoint } from '../helpers/endpoint';
import { type PrivateStack, startPrivateStack } from '../helpers/worker';
import { poll } from '../delivery/support';

const root = path.resolve(import.meta.dirname, '../..');

/** The one shell command of README.md#run-it-on-your-own-server. */
async function readmeCommand(): Promise<string> {
  const readme = await readFile(path.join(root, 'README.md'), 'utf8');
  const section = readme.split('\n## Run it on your own server\n')[1]!.split('\n## ')[0]!;
  const blocks = [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!.trim());
  expect(blocks).toHaveLength(1);
  return blocks[0]!;
}

let stack: PrivateStack;
let endpoint: Endpoint;
let server: ReturnType<typeof spawn> | undefined;
let output = '';

beforeAll(async () => {
  stack = await startPrivateStack();
  endpoint = await startEndpoint(() => ({ status: 200, headers: { 'content-type': 'application/json' }, body: '{"done":true}' }));
});
afterAll(async () => {
  if (server && server.exitCode === null) {
    server.kill('SIGTERM');
    await new Promise((resolve) => server!.once('exit', resolve));
  }
  await endpoint?.close();
  await stack?.close();
});

it('the README command starts the server, and a job goes round trip through it', async () => {
  const port = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  const command = await readmeCommand();
  expect(command).toContain('redis://127.0.0.1:6379');
  expect(command).toContain('https://groupq.example.com');
  const ours = command.replace('redis://127.0.0.1:6379', `redis://127.0.0.1:${stack.redisPort}`).replace('https://groupq.example.com', origin);
  // `exec env`: the shell becomes the server, whose pid and environment this test then reads.
  server = spawn('sh', ['-c', `exec env ${ours}`], {
    cwd: root,
    env: { PATH: process.env.PATH, PORT: String(port), HOST: '127.0.0.1', GROUPQ_ALLOW_HTTP_LOOPBACK: 'true' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  server.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  server.stderr!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  await poll(async () => (/groupq serve: listening on /.test(output) ? true : undefined), { timeoutMs: 30_000, what: `the listening line (output: ${output})` });

  // The admin token is the one the command made: read it back from the process' environment.
  const token = (await readFile(`/proc/${server.pid}/environ`, 'utf8')).split('\0').find((kv) => kv.startsWith('GROUPQ_ADMIN_TOKEN='))!.split('=')[1]!;
  const api = (p: string, init: RequestInit = {}) =>
    fetch(`${origin}${p}`, { ...init, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' } });
  expect((await api('/v1/queues/readme', { method: 'PUT', body: JSON.stringify({ endpoint: endpoint.url, keepCompleted: 10 }) })).status).toBe(200);
  const created = (await (await api('/v1/queues/readme/jobs', { method: 'POST', body: JSON.stringify({ group: 'g', data: { hello: 'world' } }) })).json()) as { id: string };
  const job = await poll(async () => {
    const read = (await (await api(`/v1/queues/readme/jobs/${created.id}`)).json()) as { state: string; result?: unknown };
    return read.state === 'completed' ? read : undefined;
  }, { timeoutMs: 30_000, get what() { return `the job completed (received ${endpoint.received.length}; output: ${output})`; } });
  expect(job.result).toEqual({ done: true });
  expect(endpoint.received[0]!.headers['webhook-signature']).toMatch(/^v1,/);

  server.kill('SIGTERM');
  const code = await new Promise<number | null>((resolve) => server!.once('exit', (exitCode) => resolve(exitCode)));
  expect(code).toBe(0);
});
