// `npm run dev` passes on the Worker's optional settings from the environment
// (docs/local-development.md): a GROUPQ_METRICS_TOKEN set for it opens GET /metrics alone, and a
// GROUPQ_PUBLIC_URL set for it (a tunnel) is the origin the Worker names. A value the Worker would
// refuse stops the stack before anything starts, naming the variable.
import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DevStack, READY_TIMEOUT_MS, startDevStack } from '../helpers/dev-stack';

const METRICS_TOKEN = 'gq_dev_metrics_token_0123';
const TUNNEL = 'https://groupq-dev.tunnel.example.com';

describe('npm run dev with the optional settings set', () => {
  let stack: DevStack;
  let url: string;

  beforeAll(async () => {
    stack = await startDevStack({ GROUPQ_METRICS_TOKEN: METRICS_TOKEN, GROUPQ_PUBLIC_URL: TUNNEL, GROUPQ_MAX_PUSHES: '8' });
    url = `http://127.0.0.1:${stack.ports.port}`;
  }, READY_TIMEOUT_MS + 10_000);

  afterAll(async () => {
    await stack?.dispose();
  }, 30_000);

  it('prints the metrics token with what it opens', () => {
    expect(stack.output()).toContain(`GROUPQ_METRICS_TOKEN=${METRICS_TOKEN}  (opens ${url}/metrics alone)`);
  });

  it('the metrics token opens GET /metrics, whose links are on GROUPQ_PUBLIC_URL; it opens nothing else', async () => {
    const admin = { authorization: 'Bearer gq_dev_admin_token', 'content-type': 'application/json' };
    const put = await fetch(`${url}/v1/queues/metered`, { method: 'PUT', headers: admin, body: JSON.stringify({ endpoint: 'http://127.0.0.1:9/jobs' }) });
    expect(put.status).toBe(200);
    const metrics = await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    expect(metrics.status).toBe(200);
    expect(await metrics.text()).toContain(`${TUNNEL}/dashboard/`);
    expect((await fetch(`${url}/metrics`)).status).toBe(401);
    expect((await fetch(`${url}/v1/queues`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).status).toBe(401);
  });
});

/** Runs npm run dev with `env` and returns how it ended, when it ends by itself. */
function devExit(env: Record<string, string>): Promise<{ code: number | null; stderr: string; stdout: string }> {
  const child = spawn(process.execPath, ['scripts/dev.mjs'], { env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env } });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, stderr, stdout })));
}

describe('npm run dev with a setting the Worker would refuse', () => {
  it.each([
    [{ GROUPQ_METRICS_TOKEN: 'short' }, 'GROUPQ_METRICS_TOKEN must be at least 16 characters'],
    [{ GROUPQ_MAX_PUSHES: '0' }, 'GROUPQ_MAX_PUSHES must be an integer in [1, 10000000], got "0"'],
    [{ GROUPQ_SCRIPT_KEY_LOCKING: 'yes' }, 'GROUPQ_SCRIPT_KEY_LOCKING must be true or false, got "yes"'],
    [{ GROUPQ_PUBLIC_URL: 'groupq.example.com' }, 'GROUPQ_PUBLIC_URL must be a URL, got "groupq.example.com"'],
    [{ GROUPQ_REDIS_POOL: '[{"url":"https://db1.upstash.io","token":"t"}]' }, 'GROUPQ_REDIS_POOL adds databases after a real Upstash one'],
  ])('%o: exits 1 at once, naming it, starting nothing', async (env, message) => {
    const { code, stderr, stdout } = await devExit(env);
    expect(stderr).toContain(`groupq dev: ${message}`);
    expect(stdout).toBe('');
    expect(code).toBe(1);
  });
});
