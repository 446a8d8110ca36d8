// `npm run dev` when the redis-server it started dies (SIGKILL) in the middle of deliveries: the
// stack restarts it from its AOF instead of stopping, the Worker answers 503 REDIS_UNAVAILABLE
// while it is down, the bridge reconnects by itself, and afterwards every job is delivered and
// completed (at least once: duplicates allowed, losses not) with the first deliveries of each
// group in FIFO order. Then SIGTERM while a restart is pending stops everything and leaves no
// redis-server behind. Real stack, real redis-server, a real endpoint on loopback.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRespClient } from '../../scripts/resp.mjs';
import { canListen, type DevStack, processesMentioning, READY_TIMEOUT_MS, startDevStack } from '../helpers/dev-stack';
import { type Endpoint, startEndpoint } from '../helpers/endpoint';

const ADMIN_TOKEN = 'gq_dev_admin_token';
const QUEUE = 'crash';
const GROUPS = ['a', 'b', 'c', 'd', 'e'];
const JOBS_PER_GROUP = 60;
/** Long enough that the test sees Redis down (and can SIGTERM inside the wait) for sure. */
const RESTART_DELAY_MS = 2000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `probe` every 100 ms until it returns a value other than undefined; fails after `timeoutMs`. */
async function eventually<T>(what: string, timeoutMs: number, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await sleep(100);
  }
}

describe('npm run dev when its redis-server crashes', () => {
  let stack: DevStack;
  let endpoint: Endpoint;
  const ids = Array.from({ length: JOBS_PER_GROUP }, (_, i) => GROUPS.map((group) => ({ id: `${group}-${i}`, group }))).flat();

  beforeAll(async () => {
    // Each delivery takes a little while, so the crash lands in the middle of the deliveries.
    endpoint = await startEndpoint(() => ({ delayMs: 20 }));
    stack = await startDevStack({ GROUPQ_DEV_TICK_MS: '200', GROUPQ_DEV_REDIS_RESTART_MS: String(RESTART_DELAY_MS) });
  }, READY_TIMEOUT_MS + 10_000);

  afterAll(async () => {
    await stack?.dispose();
    await endpoint?.close();
  }, 30_000);

  function api(method: string, path: string, body?: unknown): Promise<Response> {
    return fetch(`http://127.0.0.1:${stack.ports.port}${path}`, {
      method,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  }

  /** The pid of whatever redis-server answers on the stack's REDIS_PORT. */
  async function redisPid(): Promise<number> {
    const client = createRespClient({ port: stack.ports.redisPort });
    try {
      const info = String(await client.call(['INFO', 'server']));
      return Number(/^process_id:(\d+)\r?$/m.exec(info)?.[1]);
    } finally {
      client.close();
    }
  }

  /** Job ids in the order of their first delivery, per group. */
  function firstDeliveries(): Map<string, string[]> {
    const seen = new Set<string>();
    const byGroup = new Map<string, string[]>(GROUPS.map((group) => [group, []]));
    for (const { job } of endpoint.received) {
      if (seen.has(job.id)) continue;
      seen.add(job.id);
      byGroup.get(job.group)!.push(job.id);
    }
    return byGroup;
  }
  const firstDeliveryCount = () => [...firstDeliveries().values()].reduce((sum, list) => sum + list.length, 0);

  /** The supervisor's restart line; `g` to count them all. */
  const restartLine = (flags = 'm') =>
    new RegExp(`^groupq dev: redis-server restarted \\(pid (\\d+)\\) on 127\\.0\\.0\\.1:${stack.ports.redisPort}, its data reloaded from its AOF$`, flags);
  const exitLine = (pid: number) => new RegExp(`^groupq dev: redis-server \\(pid ${pid}\\) exited unexpectedly \\(signal SIGKILL\\); restarting it in (\\d+) ms$`, 'm');

  it('restarts it from its AOF: 503 REDIS_UNAVAILABLE meanwhile, then every job delivered and completed, FIFO per group', async () => {
    const put = await api('PUT', `/v1/queues/${QUEUE}`, {
      endpoint: endpoint.url,
      // A push whose outcome the crash lost is retried once its lease (timeout + 5 s) expires.
      timeoutMs: 2000,
      maxAttempts: 10,
      backoff: { type: 'fixed', delayMs: 100 },
      keepCompleted: 10_000,
    });
    expect(put.status).toBe(200);
    // Interleaved over the groups, in batches: each group's jobs in index order.
    for (let i = 0; i < ids.length; i += 100) {
      const res = await api('POST', `/v1/queues/${QUEUE}/jobs/batch`, { jobs: ids.slice(i, i + 100).map(({ id, group }) => ({ id, group, data: { id } })) });
      expect(res.status).toBe(201);
    }

    await eventually('a fifth of the jobs delivered', 60_000, async () => (firstDeliveryCount() >= ids.length / 5 ? true : undefined));
    const pid = await redisPid();
    expect(firstDeliveryCount(), 'the crash must land in the middle of the deliveries').toBeLessThan(ids.length);
    process.kill(pid, 'SIGKILL');

    const [exited] = await stack.waitForOutput(exitLine(pid), 20_000);
    expect(stack.stderr()).toContain(exited);
    expect(exited).toContain(`restarting it in ${RESTART_DELAY_MS} ms`);

    // While it is down, the API says so (and nothing else): 503 REDIS_UNAVAILABLE.
    await eventually('a 503 REDIS_UNAVAILABLE while Redis is down', 20_000, async () => {
      if (restartLine().test(stack.output())) throw new Error('Redis was back before any API call answered 503');
      const res = await api('GET', `/v1/queues/${QUEUE}`);
      const body = (await res.json()) as { error?: { code?: string } };
      return res.status === 503 && body.error?.code === 'REDIS_UNAVAILABLE' ? true : undefined;
    });

    const [restarted, newPid] = await stack.waitForOutput(restartLine(), 30_000);
    expect(stack.stderr()).toContain(restarted);
    expect(Number(newPid)).not.toBe(pid);
    expect(await redisPid()).toBe(Number(newPid));
    expect(stack.child.exitCode, 'the stack keeps running').toBeNull();

    // Leases whose outcome the crash lost expire and are retried by the dev ticker's cron passes.
    const counts = await eventually('every job completed', 120_000, async () => {
      const res = await api('GET', `/v1/queues/${QUEUE}`);
      if (res.status !== 200) return undefined; // the Worker may still be catching up
      const { counts } = (await res.json()) as { counts: Record<string, number> };
      expect(counts.failed).toBe(0);
      return counts.completed === ids.length ? counts : undefined;
    });
    expect(counts).toMatchObject({ waiting: 0, delayed: 0, active: 0, completed: ids.length, failed: 0, groups: 0 });

    const listed = await api('GET', `/v1/queues/${QUEUE}/jobs?state=completed&limit=1000`);
    const { jobs } = (await listed.json()) as { jobs: { id: string; state: string }[] };
    expect(jobs.map((job) => job.id).sort()).toEqual(ids.map(({ id }) => id).sort());

    // At least once: every job reached the endpoint; FIFO: each group's first deliveries in order.
    const firsts = firstDeliveries();
    for (const group of GROUPS) {
      expect(firsts.get(group), `first deliveries of group ${group}`).toEqual(ids.filter((job) => job.group === group).map(({ id }) => id));
    }
    expect(endpoint.received.length).toBeGreaterThanOrEqual(ids.length);
  }, 240_000);

  it('SIGTERM while a restart is pending stops everything and leaves no redis-server behind', async () => {
    const restarts = () => stack.output().match(restartLine('gm'))?.length ?? 0;
    const restartsBefore = restarts();
    const pid = await redisPid();
    process.kill(pid, 'SIGKILL');
    // The line is printed when the wait before the restart begins: the SIGTERM lands inside it.
    const [, delayMs] = await stack.waitForOutput(exitLine(pid), 20_000);
    expect(Number(delayMs)).toBeGreaterThanOrEqual(RESTART_DELAY_MS);
    stack.child.kill('SIGTERM');

    expect(await stack.exit).toEqual({ code: 0, signal: null });
    expect(restarts(), 'no restart after shutdown began').toBe(restartsBefore);
    expect(processesMentioning([`127.0.0.1:${stack.ports.redisPort}`])).toEqual([]);
    for (const port of Object.values(stack.ports)) expect(await canListen(port)).toBe(true);
  }, 30_000);
});
