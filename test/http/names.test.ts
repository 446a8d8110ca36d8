// Strings groupq stores must be ones every layer can carry, and names must be ones a person can
// tell apart (docs/security.md#names): a lone surrogate (a \uD800-\uDFFF escape without its pair)
// anywhere in a request body is 400 VALIDATION_FAILED naming where, not a 500 from Redis half
// way; new group names with format characters (bidi controls, zero-width) are 400 (a path or a
// listing may still name such a group, made before the rule); queue names "."
// and ".." are 400; group rate limits are capped. Each refusal writes nothing.
import { describe, expect, it } from 'vitest';
import { createEngine } from '../../src/core/engine';
import { expectError, expectJson, expectRefused, quietQueue, useHttpSuite } from './support';

const suite = useHttpSuite();
const NOWHERE = 'http://127.0.0.1:9/jobs';
/** JSON.stringify writes a lone surrogate as the escape \ud800: what a producer's JSON holds. */
const LONE = '\ud800';
const LOW = 'x\udc00y';

const send = (method: string, path: string, body: unknown) => suite.worker.api(path, { method, json: body });

describe('lone surrogates', () => {
  it('anywhere in an enqueued job (group, data, its keys, debounce key, callbackUrl, a batch): 400 at that path, nothing written', async () => {
    const queue = await quietQueue(suite, 'lone', { endpoint: NOWHERE });
    const cases: [string, unknown, string][] = [
      ['jobs', { group: `g${LONE}` }, 'group'],
      ['jobs', { group: 'g', data: { text: `a${LONE}b` } }, 'data.text'],
      ['jobs', { group: 'g', data: [1, 2, LOW] }, 'data.2'],
      ['jobs', { group: 'g', data: { [`k${LONE}`]: 1 } }, `data.k${LONE}`],
      ['jobs', { group: 'g', debounce: { key: `user${LONE}`, delayMs: 1000 } }, 'debounce.key'],
      ['jobs', { group: 'g', callbackUrl: `http://127.0.0.1:9/cb/${LONE}` }, 'callbackUrl'],
      ['jobs/batch', { jobs: [{ group: 'g' }, { group: 'g', data: LONE }] }, 'jobs.1.data'],
    ];
    for (const [route, body, path] of cases) {
      const answer = await expectRefused(suite, queue, 400, 'VALIDATION_FAILED', () => send('POST', `/v1/queues/${queue}/${route}`, body));
      expect(answer.error.details, JSON.stringify(body)).toEqual([{ path, message: expect.stringMatching(/lone surrogate/) }]);
    }
    // The same job without the surrogate is taken: only the string was at fault.
    await expectJson(await send('POST', `/v1/queues/${queue}/jobs`, { group: 'g', data: { text: 'ab' } }), 201);
  });

  it('in a repeat, a job update, a queue config or group limits: 400, nothing written', async () => {
    const queue = await quietQueue(suite, 'lone2', { endpoint: NOWHERE });
    const { id } = await expectJson(await send('POST', `/v1/queues/${queue}/jobs`, { group: 'g', delayMs: 600_000 }), 201);
    const cases: [string, string, unknown][] = [
      ['PUT', `/v1/queues/${queue}/repeats/nightly`, { group: 'g', every: 60_000, data: LONE }],
      ['PUT', `/v1/queues/${queue}/repeats/nightly`, { group: `g${LONE}`, every: 60_000 }],
      ['PUT', `/v1/queues/${queue}/repeats/nightly`, { group: 'g', pattern: '0 3 * * *', tz: `Europe/${LONE}` }],
      ['PATCH', `/v1/queues/${queue}/jobs/${id}`, { data: { a: LOW } }],
      ['PUT', `/v1/queues/${queue}`, { endpoint: `http://127.0.0.1:9/${LONE}` }],
      ['PUT', `/v1/queues/${queue}`, { endpoint: NOWHERE, callbackUrl: `http://127.0.0.1:9/cb${LONE}` }],
      ['PUT', `/v1/queues/${queue}/groups/g/limits`, { concurrency: 2, [LONE]: 1 }],
    ];
    for (const [method, path, body] of cases) {
      await expectRefused(suite, queue, 400, 'VALIDATION_FAILED', () => send(method, path, body));
    }
  });

  it('in a lease callback (an error, a result, progress): 400 before the lease is looked at', async () => {
    const queue = await quietQueue(suite, 'lone3', { endpoint: NOWHERE });
    const lease = '0123456789abcdef';
    for (const [action, body] of [
      ['fail', { lease, error: `boom${LONE}` }],
      ['complete', { lease, result: { r: LONE } }],
      ['progress', { lease, progress: LOW }],
    ] as const) {
      const res = await fetch(`${suite.worker.url}/v1/queues/${queue}/jobs/x/${action}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      await expectError(res, 400, 'VALIDATION_FAILED');
    }
  });

  it('a surrogate pair (an emoji) is fine anywhere, and comes back as sent', async () => {
    const queue = await quietQueue(suite, 'pair', { endpoint: NOWHERE });
    const job = { id: 'emoji', group: 'g\u{1F600}', data: { text: '\u{1F600}' }, debounce: { key: 'k\u{1F600}', delayMs: 60_000 } };
    await expectJson(await send('POST', `/v1/queues/${queue}/jobs`, job), 201);
    const read = await expectJson(await suite.worker.api(`/v1/queues/${queue}/jobs/emoji`), 200);
    expect(read).toMatchObject({ group: 'g\u{1F600}', data: { text: '\u{1F600}' } });
  });
});

describe('group names with format characters', () => {
  // Bidi controls, zero-width characters, the BOM and the soft hyphen: all Unicode category Cf.
  const spoofs = ['pay\u202Eusd', 'a\u200Bb', '\u2066x\u2069', '\uFEFFg', 'ad\u00ADmin', 'x\u200D', '\u061Cy'];

  it('are 400 VALIDATION_FAILED at enqueue, in a batch and a repeat, nothing written', async () => {
    const queue = await quietQueue(suite, 'cf', { endpoint: NOWHERE });
    for (const group of spoofs) {
      const one = await expectRefused(suite, queue, 400, 'VALIDATION_FAILED', () => send('POST', `/v1/queues/${queue}/jobs`, { group }));
      expect(one.error.details).toEqual([{ path: 'group', message: expect.stringMatching(/format characters/) }]);
      await expectRefused(suite, queue, 400, 'VALIDATION_FAILED', () => send('POST', `/v1/queues/${queue}/jobs/batch`, { jobs: [{ group: 'ok' }, { group }] }));
      await expectRefused(suite, queue, 400, 'VALIDATION_FAILED', () => send('PUT', `/v1/queues/${queue}/repeats/r`, { group, every: 60_000 }));
    }
  });

  it('still name a group in a path or a listing: a group made before the rule stays reachable', async () => {
    const queue = await quietQueue(suite, 'cfpath', { endpoint: NOWHERE });
    for (const group of spoofs.slice(0, 3)) {
      const path = `/v1/queues/${queue}/groups/${encodeURIComponent(group)}`;
      await expectError(await suite.worker.api(path), 404, 'GROUP_NOT_FOUND');
      const listed = await expectJson(await suite.worker.api(`/v1/queues/${queue}/jobs?group=${encodeURIComponent(group)}`), 200);
      expect(listed.jobs).toEqual([]);
    }
  });

  it('letters of every script stay allowed', async () => {
    const queue = await quietQueue(suite, 'scripts', { endpoint: NOWHERE });
    for (const group of ['über', 'グループ', 'مجموعة', 'समूह', 'a b', 'a:b']) {
      await expectJson(await send('POST', `/v1/queues/${queue}/jobs`, { group }), 201);
    }
  });
});

describe('group rate limits are capped', () => {
  it('max over 1000 is 400 in the queue config and in a group\'s own limits; 1000 is taken', async () => {
    const queue = await quietQueue(suite, 'cap', { endpoint: NOWHERE });
    const over = { max: 1001, periodMs: 60_000 };
    const put = await expectRefused(suite, queue, 400, 'VALIDATION_FAILED', () => send('PUT', `/v1/queues/${queue}`, { endpoint: NOWHERE, groupRateLimit: over }));
    expect(put.error.details).toEqual([expect.objectContaining({ path: 'groupRateLimit.max' })]);
    const limits = await expectRefused(suite, queue, 400, 'VALIDATION_FAILED', () => send('PUT', `/v1/queues/${queue}/groups/g/limits`, { rateLimit: over }));
    expect(limits.error.details).toEqual([expect.objectContaining({ path: 'rateLimit.max' })]);
    await expectJson(await send('PUT', `/v1/queues/${queue}/groups/g/limits`, { rateLimit: { max: 1000, periodMs: 60_000 } }), 200);
  });
});

describe('queue names "." and ".."', () => {
  // A URL resolves them as path segments, so no request reaches the Worker with such a name; the
  // engine (and any caller of it) refuses them too, so no route is ever needed to reach one.
  it('are refused by the engine with VALIDATION_FAILED, and nothing is created', async () => {
    const engine = createEngine({ redis: suite.redis, allowHttpLoopback: true });
    for (const name of ['.', '..']) {
      await expect(engine.putQueue(name, { endpoint: NOWHERE })).rejects.toMatchObject({ code: 'VALIDATION_FAILED' });
      await expect(engine.enqueue(name, { group: 'g' })).rejects.toMatchObject({ code: 'VALIDATION_FAILED' });
      expect(await engine.listQueueNames()).not.toContain(name);
    }
    // Dots inside a name are still fine.
    await engine.putQueue('a.b..c', { endpoint: NOWHERE });
    await engine.deleteQueue('a.b..c');
  });
});
