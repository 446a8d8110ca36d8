// Outbound requests (docs/delivery.md#outcome-callbacks): a callbackUrl that is an IP literal of an
// internal range is refused with 400 VALIDATION_FAILED, for a job, a batch and a queue, writing
// nothing; loopback only while GROUPQ_ALLOW_HTTP_LOOPBACK is on. Outcome sends, through the
// Worker to real loopback servers: at most 2 of an invocation's push slots, so deliveries go on
// while callback URLs hang, and an attempt that never got a slot is handed back uncounted, then
// sent by a later tick.
import { afterEach, describe, expect, it } from 'vitest';
import { type Endpoint, startEndpoint } from '../helpers/endpoint';
import type { RunningWorker } from '../helpers/worker';
import { enqueueBatch, getJob, jobInState, poll, putQueue, queueName, useWorker } from './support';

/** Asks the Worker to take `callbackUrl` on a job, a batch and a queue; returns each status. */
async function tryCallbackUrl(worker: RunningWorker, callbackUrl: string): Promise<number[]> {
  const q = queueName('outbound');
  // Paused: an accepted job is never delivered, so no test reaches out of this machine.
  await putQueue(worker, q, { endpoint: 'https://endpoint.invalid/jobs' });
  expect((await worker.api(`/v1/queues/${q}/pause`, { method: 'POST' })).status).toBe(200);
  const statuses: number[] = [];
  const attempts = [
    [`/v1/queues/${q}/jobs`, 'POST', { group: 'g', callbackUrl }, 'callbackUrl'],
    [`/v1/queues/${q}/jobs/batch`, 'POST', { jobs: [{ group: 'g' }, { group: 'g', callbackUrl }] }, 'jobs.1.callbackUrl'],
    [`/v1/queues/${q}`, 'PUT', { endpoint: 'https://endpoint.invalid/jobs', callbackUrl }, 'callbackUrl'],
  ] as const;
  for (const [path, method, json, field] of attempts) {
    const res = await worker.api(path, { method, json });
    statuses.push(res.status);
    if (res.status === 400) {
      const { error } = (await res.json()) as { error: { code: string; details: { path: string; message: string }[] } };
      expect(error.code).toBe('VALIDATION_FAILED');
      expect(error.details).toContainEqual({ path: field, message: expect.stringMatching(/^callbackUrl must not point at a /) });
    }
  }
  if (statuses.every((status) => status === 400)) {
    // Nothing written: no job, and the queue's config as it was.
    const info = (await (await worker.api(`/v1/queues/${q}`)).json()) as { config: Record<string, unknown>; counts: Record<string, number> };
    expect(info.config.callbackUrl).toBeUndefined();
    expect(info.counts).toMatchObject({ waiting: 0, delayed: 0, active: 0 });
  }
  return statuses;
}

const INTERNAL = [
  'https://10.0.0.7/outcomes',
  'https://172.16.0.1/outcomes',
  'https://192.168.1.20:8443/outcomes',
  'https://169.254.169.254/latest/meta-data',
  'https://100.64.0.1/outcomes',
  'https://0.0.0.0/outcomes',
  'https://0/outcomes', // 0.0.0.0 as WHATWG URL reads it
  'https://[::]/outcomes',
  'https://[fe80::1]/outcomes',
  'https://[fd12:3456::1]/outcomes',
  'https://[::ffff:10.1.2.3]/outcomes', // IPv4-mapped IPv6
  'https://[::ffff:169.254.169.254]/outcomes',
  'https://[::ffff:0:10.1.2.3]/outcomes', // IPv4-translated IPv6 (::ffff:0:0/96)
  'https://[64:ff9b:1::a01:203]/outcomes', // local-use NAT64 (64:ff9b:1::/48)
  'https://0xa9.0xfe.0xa9.0xfe/outcomes', // 169.254.169.254 in hex
  'https://224.0.0.1/outcomes',
  'https://[2002:a00:1::1]/outcomes', // 6to4 of 10.0.0.1
  'https://[2002:7f00:1::]/outcomes', // 6to4 of 127.0.0.1
  'https://[2001:0:4136:e378:8000:63bf:3f57:fefe]/outcomes', // Teredo, client 192.168.1.1
  'https://metadata.google.internal/computeMetadata/v1', // names of private networks
  'https://printer.local/outcomes',
  'https://router.home.arpa/outcomes',
  'https://nas.lan/outcomes',
  'https://redis/outcomes', // one label: a resolver's search domains complete it
];
const LOOPBACK = [
  'https://127.0.0.1/outcomes',
  'https://127.1.2.3/outcomes',
  'https://2130706433/outcomes', // 127.0.0.1 as one number
  'https://[::1]/outcomes',
  'https://[::ffff:127.0.0.1]/outcomes',
  'https://localhost/outcomes',
  'https://app.localhost/outcomes',
];
const PUBLIC = [
  'https://203.0.113.9/outcomes',
  'https://[2606:4700::1111]/outcomes',
  'https://producer.example/outcomes',
  'https://172.32.0.1/outcomes',
  'https://[2002:cb00:7109::1]/outcomes', // 6to4 of 203.0.113.9
  'https://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/outcomes', // Teredo, both ends public
  'https://local.example/outcomes', // a private suffix only counts at the end
];

describe('callbackUrl: internal addresses, local development (GROUPQ_ALLOW_HTTP_LOOPBACK=true)', () => {
  const env = useWorker();

  it.each(INTERNAL)('%s: 400 VALIDATION_FAILED for a job, a batch and a queue, nothing written', async (url) => {
    expect(await tryCallbackUrl(env.worker, url)).toEqual([400, 400, 400]);
  });

  it('loopback is allowed, over http and https', async () => {
    for (const url of [...LOOPBACK, 'http://127.0.0.1:8080/outcomes', 'http://[::1]:8080/outcomes']) {
      expect(await tryCallbackUrl(env.worker, url), url).toEqual([201, 201, 200]);
    }
  });
});

describe('callbackUrl: internal addresses, deployed (GROUPQ_ALLOW_HTTP_LOOPBACK off)', () => {
  const env = useWorker({ GROUPQ_ALLOW_HTTP_LOOPBACK: 'false' });

  it('loopback is refused too, in every spelling', async () => {
    for (const url of [...LOOPBACK, ...INTERNAL.slice(0, 3)]) expect(await tryCallbackUrl(env.worker, url), url).toEqual([400, 400, 400]);
  });

  it('public addresses and names are taken', async () => {
    for (const url of PUBLIC) expect(await tryCallbackUrl(env.worker, url), url).toEqual([201, 201, 200]);
  });
});

describe('outcome sends', () => {
  const env = useWorker();
  const servers: Endpoint[] = [];
  afterEach(async () => {
    for (const server of servers.splice(0)) await server.close();
  });

  it('use at most 2 push slots: deliveries go on while callback URLs hang, and only attempts sent count', async () => {
    let hang = true;
    let open = 0;
    let mostOpen = 0;
    const callback = await startEndpoint((received) => {
      if (!hang) return { status: 204 };
      mostOpen = Math.max(mostOpen, ++open);
      received.signal.addEventListener('abort', () => open--);
      return { hang: true };
    });
    const endpoint = await startEndpoint(() => ({ status: 200 }));
    servers.push(callback, endpoint);
    const q = queueName('oc-slots');
    await putQueue(env.worker, q, { endpoint: endpoint.url, callbackUrl: callback.url, concurrency: 20, keepCompleted: 100 });
    const jobs = await enqueueBatch(
      env.worker,
      q,
      Array.from({ length: 8 }, (_, i) => ({ group: `g${i}`, data: i })),
    );
    const view = () => Promise.all(jobs.map(({ id }) => getJob(env.worker, q, id)));

    // Every job is delivered and completed while two outcome sends hang: those two hold two of
    // the invocation's six slots, the other outcomes wait, and deliveries keep the other four.
    for (const { id } of jobs) await jobInState(env.worker, q, id, 'completed');
    expect(endpoint.received).toHaveLength(8);
    expect(callback.received).toHaveLength(2);

    // groupq gives up on those two after 10 s (failed attempts, retried by the schedule); the
    // others, which got no slot in time, are handed back uncounted and leased again by the
    // invocation's next ticks, never more than two sends open at once.
    await poll(async () => ((await view()).filter((job) => job.outcome?.lastError).length >= 2 ? true : undefined), {
      timeoutMs: 30_000,
      intervalMs: 500,
      what: 'the first two attempts to time out',
    });
    expect(mostOpen).toBe(2);

    // The callback URL answers now: the cron sends what is due. Every outcome is delivered, and
    // counts exactly the attempts the callback URL received for it.
    hang = false;
    const delivered = await poll(async () => ((await view()).every((job) => job.outcome?.state === 'delivered') ? await view() : undefined), {
      pump: env.worker,
      timeoutMs: 60_000,
      intervalMs: 500,
      what: 'every outcome to be delivered',
    });
    for (const job of delivered) {
      const sent = callback.received.filter((r) => JSON.parse(r.rawBody).id === job.id).length;
      expect(job.outcome, job.id).toMatchObject({ state: 'delivered', attempts: sent });
    }
    // (Leased and handed back unsent, some of them several times, they would have counted each
    // lease as an attempt before: more attempts than sends.)
  });
});
