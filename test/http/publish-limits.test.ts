// Publish tokens add jobs and nothing more (docs/security.md#what-a-public-publish-token-exposes), through the Worker against real
// Redis: `group`, `data` and `id` always; `delayMs` and `callbackUrl` only as far as the queue
// opens them; every other field 403 FIELD_NOT_ALLOWED. Their ids live apart (`x` is the job
// `pub:x`), a duplicate tells them no state, `repeat:` ids are the scheduler's, and
// publishRateLimit bounds the jobs each client adds (429 RATE_LIMITED with Retry-After). Every
// refusal leaves the queue's keys exactly as they were, a batch refused whole.
import { describe, expect, it } from 'vitest';
import { expectError, expectJson, expectRefused, quietQueue, useHttpSuite } from './support';

const suite = useHttpSuite();
const TOKEN = 'browser-publish-token-0001';
const HOOKS = 'https://hooks.example.com';

const asBrowser = (token = TOKEN, headers: Record<string, string> = {}) => ({ authorization: `Bearer ${token}`, ...headers });

/** POSTs one job (or a batch, `{jobs}`) with the publish token. */
function publish(queue: string, body: unknown, headers: Record<string, string> = asBrowser()) {
  const path = typeof body === 'object' && body !== null && 'jobs' in body ? 'jobs/batch' : 'jobs';
  return suite.worker.api(`/v1/queues/${queue}/${path}`, { method: 'POST', json: body, headers });
}

/** A paused queue with the publish token, and what the test opens to it. */
const publishQueue = (config: Record<string, unknown> = {}) => quietQueue(suite, 'pub', { publishTokens: [TOKEN], ...config });

const job = async (queue: string, id: string) => suite.worker.api(`/v1/queues/${queue}/jobs/${encodeURIComponent(id)}`);

describe('what a publish token may send', () => {
  it('group, data and id: the id reads back as pub:<id>, never the same job as the admin\'s id', async () => {
    const queue = await publishQueue();
    const sent = await expectJson(await publish(queue, { id: 'welcome-42', group: 'g', data: { from: 'browser' } }), 201);
    expect(sent).toEqual({ id: 'pub:welcome-42', state: 'waiting' });
    expect((await expectJson(await job(queue, 'pub:welcome-42'), 200)).data).toEqual({ from: 'browser' });
    // The backend's own welcome-42 is another job: new, not a duplicate of the browser's.
    const admin = await suite.worker.api(`/v1/queues/${queue}/jobs`, { method: 'POST', json: { id: 'welcome-42', group: 'g', data: 'backend' } });
    expect(await expectJson(admin, 201)).toEqual({ id: 'welcome-42', state: 'waiting' });
    expect((await expectJson(await job(queue, 'welcome-42'), 200)).data).toBe('backend');
    // And the browser cannot reach it either: its welcome-42 stays its own.
    expect(await expectJson(await publish(queue, { id: 'welcome-42', group: 'g' }), 200)).toEqual({ id: 'pub:welcome-42', duplicate: true });
  });

  it('a duplicate answers a publish token with no state; the admin still learns it', async () => {
    const queue = await publishQueue();
    await expectJson(await publish(queue, { id: 'once', group: 'g' }), 201);
    const again = await expectJson(await publish(queue, { id: 'once', group: 'g' }), 200);
    expect(again).toEqual({ id: 'pub:once', duplicate: true });
    const batch = await expectJson(await publish(queue, { jobs: [{ id: 'once', group: 'g' }, { id: 'twice', group: 'g' }] }), 201);
    expect(batch.jobs).toEqual([{ id: 'pub:once', duplicate: true }, { id: 'pub:twice', state: 'waiting' }]);
    const admin = await suite.worker.api(`/v1/queues/${queue}/jobs`, { method: 'POST', json: { id: 'pub:once', group: 'g' } });
    expect(await expectJson(admin, 200)).toEqual({ id: 'pub:once', state: 'waiting', duplicate: true });
  });

  it('every other field: 403 FIELD_NOT_ALLOWED naming it, nothing written', async () => {
    const queue = await publishQueue();
    const refused: [Record<string, unknown>, string][] = [
      [{ priority: 1000 }, 'priority'],
      [{ orderMs: 0 }, 'orderMs'],
      [{ runAt: Date.now() + 60_000 }, 'runAt'],
      [{ maxAttempts: 1000 }, 'maxAttempts'],
      [{ backoff: { delayMs: 86_400_000 } }, 'backoff'],
      [{ timeoutMs: 86_400_000 }, 'timeoutMs'],
      [{ debounce: { key: 'k', delayMs: 1000 } }, 'debounce'],
      // Closed by default: publishMaxDelayMs 0, publishCallbackOrigins [].
      [{ delayMs: 1000 }, 'delayMs'],
      [{ callbackUrl: `${HOOKS}/done` }, 'callbackUrl'],
    ];
    for (const [fields, name] of refused) {
      const body = await expectRefused(suite, queue, 403, 'FIELD_NOT_ALLOWED', () => publish(queue, { group: 'g', ...fields }));
      expect(body.error.details).toEqual({ fields: [name] });
    }
  });

  it('a batch with one such job is refused whole, every field named', async () => {
    const queue = await publishQueue();
    const jobs = [{ id: 'fine', group: 'g' }, { group: 'g', priority: 5 }, { group: 'h', maxAttempts: 9, priority: 1 }];
    const body = await expectRefused(suite, queue, 403, 'FIELD_NOT_ALLOWED', () => publish(queue, { jobs }));
    expect(body.error.details).toEqual({ fields: ['maxAttempts', 'priority'] });
    await expectError(await job(queue, 'pub:fine'), 404, 'JOB_NOT_FOUND');
  });

  it('delayMs up to publishMaxDelayMs; past it 400 VALIDATION_FAILED at delayMs, nothing written', async () => {
    const queue = await publishQueue({ publishMaxDelayMs: 60_000 });
    expect((await expectJson(await publish(queue, { group: 'g', delayMs: 60_000 }), 201)).state).toBe('delayed');
    const one = await expectRefused(suite, queue, 400, 'VALIDATION_FAILED', () => publish(queue, { group: 'g', delayMs: 60_001 }));
    expect(one.error.details).toEqual([{ path: 'delayMs', message: expect.stringContaining('publishMaxDelayMs') }]);
    const batch = await expectRefused(suite, queue, 400, 'VALIDATION_FAILED', () =>
      publish(queue, { jobs: [{ group: 'g', delayMs: 10 }, { group: 'g', delayMs: 120_000 }] }),
    );
    expect(batch.error.details).toEqual([{ path: 'jobs.1.delayMs', message: expect.any(String) }]);
  });

  it('callbackUrl on an origin of publishCallbackOrigins; any other origin is 403 FIELD_NOT_ALLOWED', async () => {
    const queue = await publishQueue({ publishCallbackOrigins: [HOOKS] });
    const sent = await expectJson(await publish(queue, { id: 'cb', group: 'g', callbackUrl: `${HOOKS}/outcomes?u=1` }), 201);
    expect((await expectJson(await job(queue, sent.id), 200)).callbackUrl).toBe(`${HOOKS}/outcomes?u=1`);
    for (const url of ['https://evil.example.com/x', 'https://hooks.example.com:8443/x', 'https://sub.hooks.example.com/x']) {
      const body = await expectRefused(suite, queue, 403, 'FIELD_NOT_ALLOWED', () => publish(queue, { group: 'g', callbackUrl: url }));
      expect(body.error.details).toEqual({ fields: ['callbackUrl'] });
    }
  });

  it('ids starting with repeat: belong to the scheduler: 400 for a publish token and for the admin', async () => {
    const queue = await publishQueue();
    const id = `repeat:daily:${Date.now()}`;
    for (const headers of [asBrowser(), {}]) {
      const one = await expectRefused(suite, queue, 400, 'VALIDATION_FAILED', () => publish(queue, { id, group: 'g' }, headers));
      expect(one.error.details).toEqual([{ path: 'id', message: expect.stringContaining('repeat:') }]);
      await expectRefused(suite, queue, 400, 'VALIDATION_FAILED', () => publish(queue, { jobs: [{ group: 'g' }, { id, group: 'g' }] }, headers));
    }
  });

  it('a publish token id longer than 252 characters (no room for pub:) is 400 at id', async () => {
    const queue = await publishQueue();
    const body = await expectRefused(suite, queue, 400, 'VALIDATION_FAILED', () => publish(queue, { id: 'x'.repeat(253), group: 'g' }));
    expect(body.error.details).toEqual([{ path: 'id', message: expect.any(String) }]);
    expect((await expectJson(await publish(queue, { id: 'y'.repeat(252), group: 'g' }), 201)).id).toBe(`pub:${'y'.repeat(252)}`);
  });
});

describe('publishRateLimit', () => {
  it('past max jobs in the window: 429 RATE_LIMITED with Retry-After, nothing written; the admin is not limited', async () => {
    const queue = await publishQueue({ publishRateLimit: { max: 3, periodMs: 60_000 } });
    await expectJson(await publish(queue, { jobs: [{ group: 'g' }, { group: 'h' }] }), 201);
    // Two more would make 4: the batch is refused whole.
    const refused = await publish(queue, { jobs: [{ id: 'a', group: 'g' }, { id: 'b', group: 'g' }] });
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect((await expectError(refused, 429, 'RATE_LIMITED')).error.details).toEqual({ max: 3, periodMs: 60_000 });
    await expectError(await job(queue, 'pub:a'), 404, 'JOB_NOT_FOUND');
    // One more fits exactly; then even one is refused, and the refusal writes nothing.
    await expectJson(await publish(queue, { group: 'g' }), 201);
    await expectRefused(suite, queue, 429, 'RATE_LIMITED', () => publish(queue, { group: 'g' }));
    // A field not allowed is refused before the rate limit is looked at.
    await expectRefused(suite, queue, 403, 'FIELD_NOT_ALLOWED', () => publish(queue, { group: 'g', priority: 1 }));
    for (let i = 0; i < 5; i++) await expectJson(await suite.worker.api(`/v1/queues/${queue}/jobs`, { method: 'POST', json: { group: 'g' } }), 201);
  });

  it('counts per client address (CF-Connecting-IP): each address its own window, every token of one address the same', async () => {
    const queue = await publishQueue({ publishRateLimit: { max: 1, periodMs: 60_000 }, publishTokens: [TOKEN, `${TOKEN}-2`] });
    const from = (address: string, token = TOKEN) => asBrowser(token, { 'cf-connecting-ip': address });
    await expectJson(await publish(queue, { group: 'g' }, from('203.0.113.7')), 201);
    await expectError(await publish(queue, { group: 'g' }, from('203.0.113.7')), 429, 'RATE_LIMITED');
    await expectError(await publish(queue, { group: 'g' }, from('203.0.113.7', `${TOKEN}-2`)), 429, 'RATE_LIMITED');
    await expectJson(await publish(queue, { group: 'g' }, from('2001:db8::1')), 201);
    await expectJson(await publish(queue, { group: 'g' }, from('203.0.113.8')), 201);
    // An IPv6 client holds a whole /64: its addresses share one window, another /64 has its own.
    await expectError(await publish(queue, { group: 'g' }, from('2001:db8:0:0:ffff::2')), 429, 'RATE_LIMITED');
    await expectJson(await publish(queue, { group: 'g' }, from('2001:db8:0:1::1')), 201);
  });

  it('a batch larger than max could never pass: 400 at jobs, not a 429 to retry, nothing written', async () => {
    const queue = await publishQueue({ publishRateLimit: { max: 3, periodMs: 60_000 } });
    const jobs = Array.from({ length: 4 }, () => ({ group: 'g' }));
    const refused = await expectRefused(suite, queue, 400, 'VALIDATION_FAILED', () => publish(queue, { jobs }));
    expect(refused.error.details).toEqual([{ path: 'jobs', message: expect.stringContaining('publishRateLimit.max (3)') }]);
    await expectJson(await publish(queue, { jobs: jobs.slice(1) }), 201);
  });

  it('null: no limit', async () => {
    const queue = await publishQueue({ publishRateLimit: null });
    const jobs = Array.from({ length: 200 }, (_, i) => ({ group: `g${i % 7}` }));
    expect((await expectJson(await publish(queue, { jobs }), 201)).jobs).toHaveLength(200);
  });

  it('defaults to 120 jobs a minute', async () => {
    const queue = await publishQueue();
    const jobs = Array.from({ length: 120 }, (_, i) => ({ group: `g${i % 7}` }));
    await expectJson(await publish(queue, { jobs }), 201);
    expect((await expectError(await publish(queue, { group: 'g' }), 429, 'RATE_LIMITED')).error.details).toEqual({ max: 120, periodMs: 60_000 });
  });
});
