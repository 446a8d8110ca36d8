// HTTP API v1, every bad value of every flow-control field over HTTP against the Worker in
// workerd: the queue config (groupConcurrency, rateLimit, groupRateLimit, dedupWindowMs,
// backpressure), the job fields (priority, debounce; single and batch) and a group's limits.
// Each is 400 VALIDATION_FAILED in the one error shape, naming the field, and leaves Redis
// exactly as it was; the bounds themselves are accepted.
import { describe, expect, it } from 'vitest';
import { type ErrorBody, expectError, expectJson, expectRefused, putQueue, quietQueue, uniqueQueue, useHttpSuite } from './support';

const suite = useHttpSuite();
const NOWHERE = 'http://127.0.0.1:9/jobs';

const expectInvalid = (queue: string, send: () => Promise<Response>) => expectRefused(suite, queue, 400, 'VALIDATION_FAILED', send);
const paths = (body: ErrorBody) => (body.error.details as { path: string }[]).map((d) => d.path);

const putConfig = (queue: string, config: unknown) => suite.worker.api(`/v1/queues/${queue}`, { method: 'PUT', json: config });
const postJob = (queue: string, job: unknown) => suite.worker.api(`/v1/queues/${queue}/jobs`, { method: 'POST', json: job });
const postBatch = (queue: string, jobs: unknown[]) => suite.worker.api(`/v1/queues/${queue}/jobs/batch`, { method: 'POST', json: { jobs } });
const limitsPath = (queue: string, group: string) => `/v1/queues/${queue}/groups/${encodeURIComponent(group)}/limits`;
const putLimits = (queue: string, body: unknown, group = 'g') => suite.worker.api(limitsPath(queue, group), { method: 'PUT', json: body });

/** Bad rate limits, for rateLimit, groupRateLimit and a group's limits alike. */
const BAD_RATE_LIMITS: unknown[] = [
  { max: 0, periodMs: 1000 },
  { max: 1_000_001, periodMs: 1000 },
  { max: 1.5, periodMs: 1000 },
  { max: 1, periodMs: 999 },
  { max: 1, periodMs: 86_400_001 },
  { max: 1 },
  { periodMs: 1000 },
  {},
  { max: 1, periodMs: 1000, burst: 2 },
  { max: '1', periodMs: 1000 },
  '10/s',
  10,
];

/** The stored config of a queue with every flow field set, which a refused PUT must keep. */
const FLOW_CONFIG = {
  endpoint: NOWHERE,
  groupConcurrency: 3,
  rateLimit: { max: 50, periodMs: 1000 },
  groupRateLimit: { max: 5, periodMs: 2000 },
  dedupWindowMs: 60_000,
  backpressure: 'group',
};

describe('queue config', () => {
  it('each bad value of each flow field: 400 naming the field, the stored config unchanged', async () => {
    const queue = await quietQueue(suite, 'flowconfig', FLOW_CONFIG);
    const bad: Record<string, unknown[]> = {
      groupConcurrency: [0, 1001, 1.5, '2', null, -1],
      rateLimit: BAD_RATE_LIMITS,
      groupRateLimit: BAD_RATE_LIMITS,
      dedupWindowMs: [-1, 604_800_001, 1.5, '300000', null],
      backpressure: ['other', 'JOB', '', null, 1],
    };
    for (const [field, values] of Object.entries(bad)) {
      for (const value of values) {
        const body = await expectInvalid(queue, () => putConfig(queue, { ...FLOW_CONFIG, [field]: value }));
        expect(paths(body).some((path) => path === field || path.startsWith(`${field}.`)), `${field}: ${JSON.stringify(value)}`).toBe(true);
      }
    }
    expect((await expectJson(await suite.worker.api(`/v1/queues/${queue}`), 200)).config).toMatchObject(FLOW_CONFIG);
  });

  it('the bounds are accepted', async () => {
    const queue = uniqueQueue('flowbounds');
    const highest = { max: 1_000_000, periodMs: 86_400_000 };
    const highestGroup = { max: 1000, periodMs: 86_400_000 }; // a group's window is scanned at each offer: capped
    const lowest = { max: 1, periodMs: 1000 };
    const high = { endpoint: NOWHERE, groupConcurrency: 1000, rateLimit: highest, groupRateLimit: highestGroup, dedupWindowMs: 604_800_000, backpressure: 'queue' };
    expect((await putQueue(suite.worker, queue, high)).config).toMatchObject(high);
    const low = { endpoint: NOWHERE, groupConcurrency: 1, rateLimit: lowest, groupRateLimit: lowest, dedupWindowMs: 0, backpressure: 'job' };
    expect((await putQueue(suite.worker, queue, low)).config).toMatchObject(low);
    const none = { endpoint: NOWHERE, rateLimit: null, groupRateLimit: null };
    expect((await putQueue(suite.worker, queue, none)).config).toMatchObject(none);
  });
});

describe('job fields', () => {
  const BAD_JOBS: [field: string, job: Record<string, unknown>][] = [
    ['priority', { priority: -1001 }],
    ['priority', { priority: 1001 }],
    ['priority', { priority: 0.5 }],
    ['priority', { priority: '1' }],
    ['priority', { priority: null }],
    ['debounce', { debounce: { key: '', delayMs: 1000 } }],
    ['debounce', { debounce: { key: 'k'.repeat(257), delayMs: 1000 } }],
    ['debounce', { debounce: { key: 7, delayMs: 1000 } }],
    ['debounce', { debounce: { key: 'k', delayMs: -1 } }],
    ['debounce', { debounce: { key: 'k', delayMs: 86_400_001 } }],
    ['debounce', { debounce: { key: 'k', delayMs: 1.5 } }],
    ['debounce', { debounce: { key: 'k' } }],
    ['debounce', { debounce: { delayMs: 1000 } }],
    ['debounce', { debounce: { key: 'k', delayMs: 1000, maxDelayMs: -1 } }],
    ['debounce', { debounce: { key: 'k', delayMs: 1000, maxDelayMs: 'soon' } }],
    ['debounce', { debounce: { key: 'k', delayMs: 1000, leading: true } }],
    ['debounce', { debounce: 'k' }],
    ['debounce', { debounce: null }],
  ];

  it('each bad priority or debounce, alone or in a batch: 400 naming the field, nothing written', async () => {
    const queue = await quietQueue(suite, 'flowjobs');
    // Delayed for an hour: no timer of its own comes due while the refusals are checked.
    await postJob(queue, { id: 'kept', group: 'g', priority: 5, debounce: { key: 'kept', delayMs: 3_600_000 } });
    for (const [field, fields] of BAD_JOBS) {
      const single = await expectInvalid(queue, () => postJob(queue, { group: 'g', ...fields }));
      expect(paths(single).some((path) => path === field || path.startsWith(`${field}.`)), JSON.stringify(fields)).toBe(true);
      // One bad job refuses the whole batch: the good one before it is not written either.
      const batch = await expectInvalid(queue, () => postBatch(queue, [{ group: 'g' }, { group: 'h', ...fields }]));
      expect(paths(batch).some((path) => path.startsWith(`jobs.1.${field}`)), JSON.stringify(fields)).toBe(true);
    }
  });

  it('the bounds are accepted', async () => {
    const queue = await quietQueue(suite, 'flowjobbounds');
    for (const [i, fields] of [
      { priority: -1000 },
      { priority: 1000 },
      { priority: 0 },
      { debounce: { key: 'k'.repeat(256), delayMs: 0 } },
      { debounce: { key: 'b', delayMs: 86_400_000, maxDelayMs: 0 } },
    ].entries()) {
      expect((await postJob(queue, { group: `g${i}`, ...fields })).status).toBe(201);
    }
  });
});

describe('group limits', () => {
  it('a bad body (none, empty, bad concurrency, bad rate limit, unknown field): 400, the limits unchanged', async () => {
    const queue = await quietQueue(suite, 'flowlimits');
    await postJob(queue, { group: 'g' });
    const kept = { concurrency: 2, rateLimit: { max: 3, periodMs: 1000 } };
    await expectJson(await putLimits(queue, kept), 200);
    const bad: unknown[] = [
      {},
      { concurrency: 0 },
      { concurrency: 1001 },
      { concurrency: 1.5 },
      { concurrency: '2' },
      { concurrency: null },
      ...BAD_RATE_LIMITS.map((rateLimit) => ({ rateLimit })),
      { colour: 'red' },
      { concurrency: 2, colour: 'red' },
      [],
      null,
      'concurrency',
    ];
    for (const body of bad) await expectInvalid(queue, () => putLimits(queue, body));
    expect(await expectJson(await suite.worker.api(`/v1/queues/${queue}/groups/g`), 200)).toMatchObject({ limits: kept, concurrency: 2 });
  });

  it('a bad group name: 400 naming the path parameter; an unknown queue: 404', async () => {
    const queue = await quietQueue(suite, 'flowlimitgroup');
    for (const group of ['a\u0001b', 'g'.repeat(257)]) {
      const body = await expectInvalid(queue, () => putLimits(queue, { concurrency: 2 }, group));
      expect(body.error.details).toEqual([{ in: 'path', path: 'group', message: expect.any(String) }]);
      await expectInvalid(queue, () => suite.worker.api(limitsPath(queue, group), { method: 'DELETE' }));
    }
    await expectError(await putLimits(uniqueQueue('nope'), { concurrency: 2 }), 404, 'QUEUE_NOT_FOUND');
    await expectError(await suite.worker.api(limitsPath(uniqueQueue('nope'), 'g'), { method: 'DELETE' }), 404, 'QUEUE_NOT_FOUND');
  });
});
