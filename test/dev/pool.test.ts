// `GROUPQ_DEV_DATABASES=3 npm run dev`: three redis-servers on REDIS_PORT, +1, +2, each behind its
// own REST bridge on REDIS_REST_PORT, +1, +2, the Worker given the pool (GROUPQ_REDIS_POOL), the
// ready line still last. Queues land on every database and their jobs complete; a database whose
// redis-server is killed is restarted from its AOF like the first, and its queue's jobs complete.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../scripts/redis-server.mjs';
import { createRespClient } from '../../scripts/resp.mjs';
import { canListen, type DevStack, processesMentioning, READY_TIMEOUT_MS, startDevStack } from '../helpers/dev-stack';
import { type Endpoint, startEndpoint } from '../helpers/endpoint';
import { nameOn } from '../helpers/pool';

const ADMIN_TOKEN = 'gq_dev_admin_token';

/** A port p such that p, p+1 and p+2 are all free. */
async function threeFreePorts(): Promise<number> {
  for (;;) {
    const port = await freePort();
    if (port + 2 <= 65535 && (await canListen(port + 1)) && (await canListen(port + 2))) return port;
  }
}


describe('GROUPQ_DEV_DATABASES=3 npm run dev', () => {
  let stack: DevStack;
  let endpoint: Endpoint;
  let redisPort: number;
  let restPort: number;

  beforeAll(async () => {
    endpoint = await startEndpoint(() => ({ status: 200 }));
    redisPort = await threeFreePorts();
    restPort = await threeFreePorts();
    stack = await startDevStack({ GROUPQ_DEV_DATABASES: '3', REDIS_PORT: String(redisPort), REDIS_REST_PORT: String(restPort), GROUPQ_DEV_TICK_MS: '200' });
  }, READY_TIMEOUT_MS + 10_000);

  afterAll(async () => {
    await stack?.dispose();
    await endpoint?.close();
  }, 30_000);

  const api = (method: string, path: string, body?: unknown) =>
    fetch(`http://127.0.0.1:${stack.ports.port}${path}`, {
      method,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });

  async function completes(queue: string, id: string): Promise<boolean> {
    for (let i = 0; i < 600; i++) {
      const res = await api('GET', `/v1/queues/${queue}/jobs/${id}`);
      if (res.status === 200 && ((await res.json()) as { state: string }).state === 'completed') return true;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    return false;
  }

  it('starts three databases, each with its bridge, hands the Worker the pool, and prints the ready line last', () => {
    const out = stack.output();
    for (let i = 0; i < 3; i++) {
      expect(out).toMatch(new RegExp(`^Redis ${i}: +redis://127\\.0\\.0\\.1:${redisPort + i} \\(data in `, 'm'));
      expect(out).toMatch(new RegExp(`^Upstash REST bridge ${i}: http://127\\.0\\.0\\.1:${restPort + i} -> redis 127\\.0\\.0\\.1:${redisPort + i} `, 'm'));
    }
    expect(out).toMatch(new RegExp(`^GROUPQ_REDIS_POOL=\\[\\{"url":"http://127\\.0\\.0\\.1:${restPort + 1}",`, 'm'));
    expect(out.trimEnd().split('\n').at(-1)).toBe(`groupq dev ready: http://127.0.0.1:${stack.ports.port}`);
  });

  it('queues on each database run their jobs; a database killed is restarted from its AOF and its jobs complete', async () => {
    const names = [0, 1, 2].map((database) => nameOn(`dev-pool-${database}-`, database));
    for (const name of names) {
      expect((await api('PUT', `/v1/queues/${name}`, { endpoint: endpoint.url, keepCompleted: 100 })).status).toBe(200);
      expect((await api('POST', `/v1/queues/${name}/jobs`, { id: 'first', group: 'g' })).status).toBe(201);
    }
    for (const name of names) expect(await completes(name, 'first')).toBe(true);
    for (let database = 0; database < 3; database++) {
      const client = createRespClient({ port: redisPort + database });
      try {
        expect(Number(await client.call(['EXISTS', `gq:{${names[database]}}:meta`]))).toBe(1);
      } finally {
        client.close();
      }
    }

    // Accepted by database 2, then its redis-server dies before delivering: paused queue.
    const last = names[2]!;
    expect((await api('POST', `/v1/queues/${last}/pause`)).status).toBe(200);
    expect((await api('POST', `/v1/queues/${last}/jobs`, { id: 'second', group: 'g' })).status).toBe(201);
    const [pid] = processesMentioning([`127.0.0.1:${redisPort + 2}`]).filter((line) => line.includes('redis-server')).map((line) => Number(line.split(':')[0]));
    expect(pid).toBeGreaterThan(0);
    process.kill(pid!, 'SIGKILL');
    await stack.waitForOutput(new RegExp(`^groupq dev: redis-server restarted \\(pid \\d+\\) on 127\\.0\\.0\\.1:${redisPort + 2}, `, 'm'), 30_000);
    // Database 0 and 1 went on meanwhile, and still do.
    expect((await api('POST', `/v1/queues/${names[1]}/jobs`, { id: 'second', group: 'g' })).status).toBe(201);
    expect(await completes(names[1]!, 'second')).toBe(true);
    let resumed = 0;
    for (let i = 0; i < 100 && resumed !== 200; i++) {
      resumed = (await api('POST', `/v1/queues/${last}/resume`)).status; // 503 until its bridge reconnected
      if (resumed !== 200) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(resumed).toBe(200);
    expect(await completes(last, 'second')).toBe(true);
  });

  it('SIGTERM stops all three databases and frees every port', async () => {
    stack.child.kill('SIGTERM');
    expect(await stack.exit).toEqual({ code: 0, signal: null });
    for (let i = 0; i < 3; i++) {
      expect(await canListen(redisPort + i)).toBe(true);
      expect(await canListen(restPort + i)).toBe(true);
    }
    expect(processesMentioning([0, 1, 2].map((i) => `127.0.0.1:${redisPort + i}`))).toEqual([]);
  }, 30_000);
});
