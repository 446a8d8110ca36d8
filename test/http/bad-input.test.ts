// HTTP API v1, VALIDATION_FAILED over HTTP against the Worker in workerd: one test per class of
// bad input (queue names and configs, groups, job ids, delayMs with runAt, batches, PATCH,
// repeat specs, list queries). Each asserts the one error shape with its status and code, AND
// that Redis holds exactly what it held before the request: a bad request writes nothing.
import { describe, expect, it } from 'vitest';
import { type ErrorBody, expectError, expectJson, expectRefused, putQueue, quietQueue as quiet, snapshotQueue, uniqueQueue, useHttpSuite } from './support';

const suite = useHttpSuite();
const NOWHERE = 'http://127.0.0.1:9/jobs';

const expectInvalid = (queue: string, send: () => Promise<Response>) => expectRefused(suite, queue, 400, 'VALIDATION_FAILED', send);
const quietQueue = (prefix: string, config: Record<string, unknown> = {}) => quiet(suite, prefix, config);

const postJob = (queue: string, job: unknown) => suite.worker.api(`/v1/queues/${queue}/jobs`, { method: 'POST', json: job });
const postBatch = (queue: string, body: unknown) => suite.worker.api(`/v1/queues/${queue}/jobs/batch`, { method: 'POST', json: body });
const paths = (body: ErrorBody) => (body.error.details as { path: string }[]).map((d) => d.path);

describe('queues', () => {
  it('a bad queue name: 400 naming the path parameter, and no queue comes into being', async () => {
    for (const name of ['bad!name', 'x'.repeat(65), 'a b', 'über', 'a:b']) {
      const encoded = encodeURIComponent(name);
      const body = await expectInvalid(name, () => suite.worker.api(`/v1/queues/${encoded}`, { method: 'PUT', json: { endpoint: NOWHERE } }));
      expect(body.error.details).toEqual([{ in: 'path', path: 'queue', message: expect.any(String) }]);
      expect(body.error.message).toMatch(/^path parameter queue: /);
      expect(await snapshotQueue(suite.redis, name)).toEqual({ registered: false });
      // Enqueue and read routes refuse the name the same way.
      expect((await expectInvalid(name, () => postJob(encoded, { group: 'g' }))).error.details).toEqual(body.error.details);
    }
    const list = await expectJson<{ queues: { name: string }[] }>(await suite.worker.api('/v1/queues'), 200);
    expect(list.queues.map((q) => q.name)).not.toContain('bad!name');
  });

  it('a config without endpoint: 400 naming the field; a new queue is not created, an old one keeps its config', async () => {
    const fresh = uniqueQueue('noendpoint');
    const body = await expectInvalid(fresh, () => suite.worker.api(`/v1/queues/${fresh}`, { method: 'PUT', json: { concurrency: 5 } }));
    expect(paths(body)).toContain('endpoint');
    await expectError(await suite.worker.api(`/v1/queues/${fresh}`), 404, 'QUEUE_NOT_FOUND');

    const existing = uniqueQueue('keepconfig');
    await putQueue(suite.worker, existing, { endpoint: NOWHERE, concurrency: 7, publishTokens: ['publish-token-old-000001'] });
    // A refused PUT changes nothing: the old config and its one token stay.
    await expectInvalid(existing, () =>
      suite.worker.api(`/v1/queues/${existing}`, {
        method: 'PUT',
        json: { concurrency: 1, publishTokens: ['publish-token-new-000001'] },
      }),
    );
    expect((await expectJson(await suite.worker.api(`/v1/queues/${existing}`), 200)).config).toMatchObject({
      concurrency: 7,
      publishTokens: 1,
    });
  });

  it('an endpoint that is not https (http is for loopback only) or not a URL: 400', async () => {
    const queue = uniqueQueue('endpoint');
    for (const endpoint of ['http://example.com/hook', 'http://10.0.0.1/hook', 'ftp://127.0.0.1/x', 'not a url', '/relative']) {
      const body = await expectInvalid(queue, () => suite.worker.api(`/v1/queues/${queue}`, { method: 'PUT', json: { endpoint } }));
      expect(paths(body)).toContain('endpoint');
    }
  });

  it('other bad config fields (unknown key, concurrency 0, bad origin, short publish token): 400', async () => {
    const queue = await quietQueue('badconfig');
    const bad = [
      { endpoint: NOWHERE, concurency: 5 },
      { endpoint: NOWHERE, concurrency: 0 },
      { endpoint: NOWHERE, timeoutMs: 1.5 },
      { endpoint: NOWHERE, backoff: { type: 'linear' } },
      { endpoint: NOWHERE, allowedOrigins: ['https://app.example/'] },
      { endpoint: NOWHERE, publishTokens: ['short'] },
      [],
      'endpoint',
    ];
    for (const json of bad) await expectInvalid(queue, () => suite.worker.api(`/v1/queues/${queue}`, { method: 'PUT', json }));
  });
});

describe('jobs', () => {
  it('a bad group (control characters, empty, over 256 characters, a dot segment, missing): 400, nothing written', async () => {
    const queue = await quietQueue('badgroup');
    // "." and "..": URLs resolve them as path segments, so no group route could reach the group.
    for (const group of ['a\u0001b', 'tab\there', 'del\u007f', 'nl\n', '', 'g'.repeat(257), '.', '..', 42, undefined]) {
      const body = await expectInvalid(queue, () => postJob(queue, { group, data: 1 }));
      expect(paths(body)).toContain('group');
    }
    // 256 characters of UTF-8 (not bytes) is fine.
    expect((await postJob(queue, { group: 'ü'.repeat(256) })).status).toBe(201);
  });

  it('a bad job id (space, 257 characters, non-ASCII, empty, a dot segment): 400, nothing written', async () => {
    const queue = await quietQueue('badid');
    // "." and "..": the job's callback URLs would resolve to other routes (jobs/../complete).
    for (const id of ['has space', 'x'.repeat(257), 'ünïcode', '', 'tab\tid', '.', '..', 7]) {
      const body = await expectInvalid(queue, () => postJob(queue, { id, group: 'g' }));
      expect(paths(body)).toContain('id');
    }
    expect((await postJob(queue, { id: 'x'.repeat(256), group: 'g' })).status).toBe(201);
  });

  it('delayMs and runAt together: 400, nothing written', async () => {
    const queue = await quietQueue('delayrun');
    const body = await expectInvalid(queue, () => postJob(queue, { group: 'g', delayMs: 1000, runAt: Date.now() + 5000 }));
    expect(body.error.message).toMatch(/delayMs|runAt/);
  });

  it('other bad job fields (unknown key, negative delay, maxAttempts 0, fractional orderMs): 400', async () => {
    const queue = await quietQueue('badjob');
    for (const job of [
      { group: 'g', colour: 'red' },
      { group: 'g', delayMs: -1 },
      { group: 'g', maxAttempts: 0 },
      { group: 'g', orderMs: 1.5 },
      { group: 'g', timeoutMs: 'soon' },
      [{ group: 'g' }],
      null,
    ]) {
      await expectInvalid(queue, () => postJob(queue, job));
    }
  });

  it('an empty batch, a batch of 1001, or a batch without jobs: 400, nothing written', async () => {
    const queue = await quietQueue('batchsize');
    await expectInvalid(queue, () => postBatch(queue, { jobs: [] }));
    const jobs = Array.from({ length: 1001 }, (_, i) => ({ id: `j${i}`, group: `g${i % 7}` }));
    await expectInvalid(queue, () => postBatch(queue, { jobs }));
    await expectInvalid(queue, () => postBatch(queue, {}));
    await expectInvalid(queue, () => postBatch(queue, [{ group: 'g' }]));
    // 1000 is the most a batch may hold.
    expect((await postBatch(queue, { jobs: jobs.slice(0, 1000) })).status).toBe(201);
  });

  it('a batch with one bad job writes none of it, and says which job', async () => {
    const queue = await quietQueue('batchbad');
    const jobs = [
      { id: 'ok-1', group: 'g', data: 1 },
      { id: 'ok-2', group: 'h', data: 2 },
      { id: 'bad', group: 'bad\u0000group', data: 3 },
      { id: 'ok-3', group: 'g', data: 4 },
    ];
    const body = await expectInvalid(queue, () => postBatch(queue, { jobs }));
    expect(paths(body)).toContain('jobs.2.group');
    for (const id of ['ok-1', 'ok-2', 'ok-3']) {
      await expectError(await suite.worker.api(`/v1/queues/${queue}/jobs/${id}`), 404, 'JOB_NOT_FOUND');
    }
  });

  it('data nested deeper than 512 levels: 400 (not a stack overflow), nothing written', async () => {
    const queue = await quietQueue('deep');
    const nested = (levels: number) => {
      let value: unknown = 'bottom';
      for (let i = 0; i < levels; i++) value = i % 2 === 0 ? [value] : { a: value };
      return value;
    };
    expect((await postJob(queue, { id: 'p', group: 'g', data: 1 })).status).toBe(201);
    for (const levels of [600, 2000]) {
      await expectInvalid(queue, () => postJob(queue, { group: 'g', data: nested(levels) }));
      await expectInvalid(queue, () => postBatch(queue, { jobs: [{ group: 'g', data: nested(levels) }] }));
      await expectInvalid(queue, () => suite.worker.api(`/v1/queues/${queue}/jobs/p`, { method: 'PATCH', json: { data: nested(levels) } }));
    }
    // Deep but within bounds (the body's own object is one more level) is fine.
    const ok = await postJob(queue, { id: 'deep-ok', group: 'g', data: nested(511) });
    expect(ok.status).toBe(201);
    expect((await expectJson(await suite.worker.api(`/v1/queues/${queue}/jobs/deep-ok`), 200)).data).toEqual(nested(511));
  });

  it('a bad PATCH (empty, unknown key, negative delay): 400, the job unchanged', async () => {
    const queue = await quietQueue('badpatch');
    expect((await postJob(queue, { id: 'p', group: 'g', data: { v: 1 } })).status).toBe(201);
    for (const json of [{}, { colour: 'red' }, { delayMs: -5 }, { delayMs: 'later' }]) {
      await expectInvalid(queue, () => suite.worker.api(`/v1/queues/${queue}/jobs/p`, { method: 'PATCH', json }));
    }
    expect(await expectJson(await suite.worker.api(`/v1/queues/${queue}/jobs/p`), 200)).toMatchObject({ data: { v: 1 }, state: 'waiting' });
  });
});

describe('repeatable jobs', () => {
  const putRepeat = (queue: string, key: string, json: unknown) =>
    suite.worker.api(`/v1/queues/${queue}/repeats/${encodeURIComponent(key)}`, { method: 'PUT', json });

  it('a bad cron pattern: 400 naming pattern, nothing written', async () => {
    const queue = await quietQueue('badpattern');
    for (const pattern of ['61 * * * *', 'not a cron at all', '* * * * * *', '0 9 * *', '0 9 32 * *', 'H * * * *']) {
      const body = await expectInvalid(queue, () => putRepeat(queue, 'k', { group: 'g', pattern }));
      expect(paths(body)).toContain('pattern');
    }
    expect((await expectJson(await suite.worker.api(`/v1/queues/${queue}/repeats`), 200)).repeats).toEqual([]);
  });

  it('an unknown IANA time zone: 400 naming tz, nothing written', async () => {
    const queue = await quietQueue('badtz');
    for (const tz of ['Mars/Olympus_Mons', 'Europe/Berlinn', 'UTC+25']) {
      const body = await expectInvalid(queue, () => putRepeat(queue, 'k', { group: 'g', pattern: '0 9 * * *', tz }));
      expect(paths(body)).toContain('tz');
    }
  });

  it('both or neither of every and pattern, every under 1000, a bad key or group: 400', async () => {
    const queue = await quietQueue('badrepeat');
    await expectInvalid(queue, () => putRepeat(queue, 'k', { group: 'g', every: 60_000, pattern: '* * * * *' }));
    await expectInvalid(queue, () => putRepeat(queue, 'k', { group: 'g' }));
    await expectInvalid(queue, () => putRepeat(queue, 'k', { group: 'g', every: 999 }));
    await expectInvalid(queue, () => putRepeat(queue, 'k', { group: 'bad\u0001', every: 60_000 }));
    await expectInvalid(queue, () => putRepeat(queue, 'bad key', { group: 'g', every: 60_000 }));
    await expectInvalid(queue, () => putRepeat(queue, 'k'.repeat(129), { group: 'g', every: 60_000 }));
  });
});

describe('path parameters', () => {
  it('a bad job id, group or repeat key in the path: 400 naming that parameter, nothing written', async () => {
    const queue = await quietQueue('badparams');
    const at = `/v1/queues/${queue}`;
    const cases: [string, string, string, unknown?][] = [
      ['id', 'GET', `${at}/jobs/${encodeURIComponent('has space')}`],
      ['id', 'DELETE', `${at}/jobs/${encodeURIComponent('x'.repeat(257))}`],
      ['id', 'POST', `${at}/jobs/${encodeURIComponent('ü')}/retry`],
      ['id', 'POST', `${at}/jobs/%20/heartbeat`, { lease: 'l' }],
      ['group', 'GET', `${at}/groups/${encodeURIComponent('a\u0001b')}`],
      ['group', 'POST', `${at}/groups/${encodeURIComponent('g'.repeat(257))}/pause`],
      ['key', 'PUT', `${at}/repeats/${encodeURIComponent('bad key')}`, { group: 'g', every: 60_000 }],
      ['key', 'DELETE', `${at}/repeats/${encodeURIComponent('k'.repeat(129))}`],
    ];
    for (const [param, method, path, json] of cases) {
      const body = await expectInvalid(queue, () => suite.worker.api(path, { method, json }));
      expect(body.error.details, `${method} ${path}`).toEqual([{ in: 'path', path: param, message: expect.any(String) }]);
      expect(body.error.message).toMatch(new RegExp(`^path parameter ${param}: `));
    }
  });
});

describe('list queries', () => {
  it('limit=0, limit=1001, an unknown state, a bad group or an unknown parameter: 400', async () => {
    const queue = await quietQueue('badquery');
    for (const query of ['limit=0', 'limit=1001', 'limit=ten', 'limit=1.5', 'state=done', 'group=%01', 'sort=asc']) {
      await expectInvalid(queue, () => suite.worker.api(`/v1/queues/${queue}/jobs?${query}`));
    }
    for (const query of ['limit=0', 'limit=1001', 'page=2']) {
      await expectInvalid(queue, () => suite.worker.api(`/v1/queues/${queue}/groups?${query}`));
    }
    // The bounds themselves are fine.
    for (const query of ['limit=1', 'limit=1000']) expect((await suite.worker.api(`/v1/queues/${queue}/jobs?${query}`)).status).toBe(200);
  });
});
