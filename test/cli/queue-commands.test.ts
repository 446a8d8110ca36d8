// `queue create`, `queue configure`, `queue delete` and `groups` against the real Worker
// (Miniflare, private Redis stack), in-process through main(argv, io): what each prints, its
// --json document, and what it changed as the HTTP API sees it. create refuses a queue that
// exists (a PUT would drop its publish tokens) unless --replace; configure changes the named
// settings only, publish tokens kept; delete needs --yes and says what went.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { expectJson, enqueue, pausedQueue, putQueue, settledSnapshot, snapshotQueue, uniqueQueue, useHttpSuite } from '../http/support';
import { cli, envFor, json, rowsByFirstCell } from './support';

const suite = useHttpSuite();
let env: Record<string, string>;
let dir: string;

beforeAll(async () => {
  env = envFor(suite.worker);
  dir = await mkdtemp(path.join(os.tmpdir(), 'groupq-cli-queue-'));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

const getQueue = async (name: string) => expectJson(await suite.worker.api(`/v1/queues/${name}`), 200);
const PUBLISH_TOKEN = 'pub_cli_test_token_0123456789';

/** Enqueues with a publish token: 201 while the queue still has it. */
const publish = (queue: string) =>
  suite.worker.api(`/v1/queues/${queue}/jobs`, { method: 'POST', json: { group: 'g' }, headers: { authorization: `Bearer ${PUBLISH_TOKEN}` } });

describe('queue create', () => {
  test('the flags become the config, the rest takes its defaults; it prints the config', async () => {
    const queue = uniqueQueue('cli-create');
    const flags = ['--endpoint', 'http://127.0.0.1:9/jobs', '--concurrency', '20', '--max-attempts', '5', '--timeout-ms', '10000', '--keep-completed', '100', '--keep-failed', '50'];
    const more = ['--group-concurrency', '2', '--rate-limit', '100/1000', '--backpressure', 'group', '--callback-url', 'https://producer.example/outcomes'];
    const created = await cli(['queue', 'create', queue, ...flags, ...more], env);
    expect(created).toMatchObject({ code: 0, stderr: '' });
    expect(created.stdout.split('\n')[0]).toBe(`created queue ${queue}`);
    const rows = rowsByFirstCell(created.stdout);
    expect(rows.get('SETTING')).toEqual(['SETTING', 'VALUE']);
    expect(rows.get('concurrency')).toEqual(['concurrency', '20']);
    expect(rows.get('rateLimit')).toEqual(['rateLimit', '{"max":100,"periodMs":1000}']);

    const { config } = await getQueue(queue);
    expect(config).toMatchObject({
      endpoint: 'http://127.0.0.1:9/jobs',
      concurrency: 20,
      maxAttempts: 5,
      timeoutMs: 10_000,
      keepCompleted: 100,
      keepFailed: 50,
      groupConcurrency: 2,
      rateLimit: { max: 100, periodMs: 1000 },
      backpressure: 'group',
      callbackUrl: 'https://producer.example/outcomes',
      // Not given: the defaults.
      orderingWindowMs: 0,
      dedupWindowMs: 300_000,
      partitions: 1,
    });
  });

  test('--config takes a whole config from text, a file or standard input; flags win over its fields; --json prints the PUT answer', async () => {
    const fromText = uniqueQueue('cli-create-config');
    const document = { endpoint: 'http://127.0.0.1:9/jobs', concurrency: 7, publishTokens: [PUBLISH_TOKEN], backoff: { type: 'fixed', delayMs: 500 } };
    const text = await cli(['queue', 'create', fromText, '--config', JSON.stringify(document), '--concurrency', '8', '--json'], env);
    expect(text).toMatchObject({ code: 0, stderr: '' });
    const answer = json(text);
    expect(answer).toMatchObject({ name: fromText, config: { concurrency: 8, publishTokens: 1, backoff: { type: 'fixed', delayMs: 500 } } });
    expect(answer.counts).toEqual({ waiting: 0, delayed: 0, active: 0, completed: 0, failed: 0, cancelled: 0, expired: 0, groups: 0 });
    expect((await getQueue(fromText)).config).toEqual(answer.config);
    await suite.worker.api(`/v1/queues/${fromText}/pause`, { method: 'POST' }); // nothing to deliver to
    expect((await publish(fromText)).status).toBe(201);

    const fromFile = uniqueQueue('cli-create-file');
    const file = path.join(dir, 'queue.json');
    await writeFile(file, JSON.stringify({ endpoint: 'http://127.0.0.1:9/jobs', maxJobs: 500 }));
    expect((await cli(['queue', 'create', fromFile, '--config', `@${file}`], env)).code).toBe(0);
    expect((await getQueue(fromFile)).config.maxJobs).toBe(500);

    const fromStdin = uniqueQueue('cli-create-stdin');
    const stdin = Readable.from([Buffer.from('{"endpoint":"http://127.0.0.1:9/jobs","keepFailed":3}')]);
    expect((await cli(['queue', 'create', fromStdin, '--config', '-'], env, { stdin })).code).toBe(0);
    expect((await getQueue(fromStdin)).config.keepFailed).toBe(3);
  });

  test('a queue that exists is refused (exit 1, untouched) unless --replace, which replaces the whole config', async () => {
    const queue = uniqueQueue('cli-create-exists');
    await pausedQueue(suite.worker, queue, { concurrency: 3, publishTokens: [PUBLISH_TOKEN] });
    const before = await settledSnapshot(suite.redis, queue);

    const refused = await cli(['queue', 'create', queue, '--endpoint', 'http://127.0.0.1:9/other'], env);
    expect(refused).toMatchObject({ code: 1, stdout: '' });
    expect(refused.stderr).toBe(
      `groupq: QUEUE_EXISTS: queue ${queue} exists already: change some settings with "groupq queue configure", or replace its whole config with --replace\n`,
    );
    const refusedJson = await cli(['queue', 'create', queue, '--endpoint', 'http://127.0.0.1:9/other', '--json'], env);
    expect(JSON.parse(refusedJson.stderr)).toMatchObject({ error: { code: 'QUEUE_EXISTS' } });
    expect(await snapshotQueue(suite.redis, queue)).toEqual(before);

    const replaced = await cli(['queue', 'create', queue, '--endpoint', 'http://127.0.0.1:9/other', '--replace'], env);
    expect(replaced).toMatchObject({ code: 0, stderr: '' });
    expect(replaced.stdout.split('\n')[0]).toBe(`replaced the config of queue ${queue}`);
    expect((await getQueue(queue)).config).toMatchObject({ endpoint: 'http://127.0.0.1:9/other', concurrency: 10, publishTokens: 0 });
  });

  test('what the Worker refuses (a range, a URL) is its VALIDATION_FAILED, exit 1, nothing created', async () => {
    const queue = uniqueQueue('cli-create-bad');
    const tooMany = await cli(['queue', 'create', queue, '--endpoint', 'http://127.0.0.1:9/jobs', '--concurrency', '5000'], env);
    expect(tooMany).toMatchObject({ code: 1, stdout: '' });
    expect(tooMany.stderr).toMatch(/^groupq: VALIDATION_FAILED: concurrency: /);
    const notUrl = await cli(['queue', 'create', queue, '--endpoint', 'jobs.example.com'], env);
    expect(notUrl.stderr).toMatch(/^groupq: VALIDATION_FAILED: endpoint: endpoint must be an absolute URL/);
    expect((await suite.worker.api(`/v1/queues/${queue}`)).status).toBe(404);
  });
});

describe('queue configure', () => {
  test('changes the named settings only, publish tokens kept; prints what changed', async () => {
    const queue = uniqueQueue('cli-configure');
    await putQueue(suite.worker, queue, {
      endpoint: 'http://127.0.0.1:9/jobs', concurrency: 4, maxAttempts: 7, keepCompleted: 5, publishTokens: [PUBLISH_TOKEN], rateLimit: { max: 10, periodMs: 1000 },
    });
    await suite.worker.api(`/v1/queues/${queue}/pause`, { method: 'POST' });
    const before = (await getQueue(queue)).config;

    const changed = await cli(['queue', 'configure', queue, '--concurrency', '9'], env);
    expect(changed).toMatchObject({ code: 0, stderr: '' });
    expect(changed.stdout.split('\n')[0]).toBe(`queue ${queue}: 1 setting changed`);
    expect(rowsByFirstCell(changed.stdout).get('concurrency')).toEqual(['concurrency', '4', '9']);
    const after = await getQueue(queue);
    expect(after.config).toEqual({ ...before, concurrency: 9 });
    expect(after.paused).toBe(true);
    expect((await publish(queue)).status).toBe(201);

    // --unset puts fields back to their defaults (null in the patch), by name or in kebab-case.
    const unset = await cli(['queue', 'configure', queue, '--unset', 'rateLimit', '--unset', 'max-attempts,keepCompleted', '--json'], env);
    expect(unset).toMatchObject({ code: 0, stderr: '' });
    expect(json(unset).config).toEqual({ ...before, concurrency: 9, rateLimit: null, maxAttempts: 3, keepCompleted: 0 });
    expect((await getQueue(queue)).config.publishTokens).toBe(1);

    // --config is a merge patch: an object field changes field by field.
    const patched = await cli(['queue', 'configure', queue, '--config', '{"backoff":{"delayMs":250}}', '--group-rate-limit', '5/60000'], env);
    expect(patched.code).toBe(0);
    expect((await getQueue(queue)).config).toMatchObject({ backoff: { ...before.backoff, delayMs: 250 }, groupRateLimit: { max: 5, periodMs: 60_000 }, concurrency: 9 });

    expect((await cli(['queue', 'configure', queue, '--concurrency', '9'], env)).stdout).toBe(`queue ${queue}: nothing changed\n`);
  });

  test('an unknown queue is QUEUE_NOT_FOUND; a refused value writes nothing', async () => {
    const missing = await cli(['queue', 'configure', 'no-such-queue', '--concurrency', '2'], env);
    expect(missing).toEqual({ code: 1, stdout: '', stderr: 'groupq: QUEUE_NOT_FOUND: queue not found\n' });

    const queue = uniqueQueue('cli-configure-bad');
    await pausedQueue(suite.worker, queue);
    const before = await settledSnapshot(suite.redis, queue);
    const refused = await cli(['queue', 'configure', queue, '--rate-limit', '10/10'], env);
    expect(refused).toMatchObject({ code: 1, stdout: '' });
    expect(refused.stderr).toMatch(/^groupq: VALIDATION_FAILED: rateLimit\.periodMs: /);
    expect(await snapshotQueue(suite.redis, queue)).toEqual(before);
  });
});

describe('--batch', () => {
  test('create: 10 is batches of up to 10 with no wait, 10/500 a head waiting up to 500 ms; configure sets one and none removes it', async () => {
    const endpoint = ['--endpoint', 'http://127.0.0.1:9/jobs'];
    const bare = uniqueQueue('cli-batch');
    const created = await cli(['queue', 'create', bare, ...endpoint, '--batch', '10'], env);
    expect(created).toMatchObject({ code: 0, stderr: '' });
    expect(rowsByFirstCell(created.stdout).get('batch')).toEqual(['batch', '{"maxSize":10,"maxWaitMs":0}']);
    expect((await getQueue(bare)).config.batch).toEqual({ maxSize: 10, maxWaitMs: 0 });

    const waiting = uniqueQueue('cli-batch-wait');
    expect((await cli(['queue', 'create', waiting, ...endpoint, '--batch', '10/500'], env)).code).toBe(0);
    expect((await getQueue(waiting)).config.batch).toEqual({ maxSize: 10, maxWaitMs: 500 });

    const queue = uniqueQueue('cli-batch-configure');
    await pausedQueue(suite.worker, queue, { concurrency: 20, publishTokens: [PUBLISH_TOKEN] });
    const before = (await getQueue(queue)).config;
    expect(before.batch).toBeNull();
    const set = await cli(['queue', 'configure', queue, '--batch', '20/1000'], env);
    expect(set).toMatchObject({ code: 0, stderr: '' });
    expect(set.stdout.split('\n')[0]).toBe(`queue ${queue}: 1 setting changed`);
    expect(rowsByFirstCell(set.stdout).get('batch')).toEqual(['batch', 'null', '{"maxSize":20,"maxWaitMs":1000}']);
    expect((await getQueue(queue)).config).toEqual({ ...before, batch: { maxSize: 20, maxWaitMs: 1000 } });

    const none = await cli(['queue', 'configure', queue, '--batch', 'none', '--json'], env);
    expect(none).toMatchObject({ code: 0, stderr: '' });
    expect(json(none).config).toEqual(before);
    expect((await getQueue(queue)).config.publishTokens).toBe(1);
  });

  test('what the Worker refuses (a batch over 100, or bigger than the concurrency) is its VALIDATION_FAILED, exit 1, nothing changed', async () => {
    const queue = uniqueQueue('cli-batch-bad');
    const tooBig = await cli(['queue', 'create', queue, '--endpoint', 'http://127.0.0.1:9/jobs', '--concurrency', '200', '--batch', '101'], env);
    expect(tooBig).toMatchObject({ code: 1, stdout: '' });
    expect(tooBig.stderr).toMatch(/^groupq: VALIDATION_FAILED: batch\.maxSize: /);
    expect((await suite.worker.api(`/v1/queues/${queue}`)).status).toBe(404);

    await pausedQueue(suite.worker, queue, { concurrency: 5 });
    const before = await settledSnapshot(suite.redis, queue);
    const overConcurrency = await cli(['queue', 'configure', queue, '--batch', '6'], env);
    expect(overConcurrency).toMatchObject({ code: 1, stdout: '' });
    expect(overConcurrency.stderr).toMatch(/^groupq: VALIDATION_FAILED: batch\.maxSize: batch\.maxSize must be at most concurrency \(5\)/);
    expect(await snapshotQueue(suite.redis, queue)).toEqual(before);
  });
});

describe('queue delete', () => {
  test('needs --yes; then the queue is gone, and it says what went', async () => {
    const queue = uniqueQueue('cli-delete');
    await pausedQueue(suite.worker, queue);
    await enqueue(suite.worker, queue, { group: 'a' });
    await enqueue(suite.worker, queue, { group: 'b' });
    await enqueue(suite.worker, queue, { group: 'b', delayMs: 600_000 });
    await expectJson(await suite.worker.api(`/v1/queues/${queue}/repeats/hourly`, { method: 'PUT', json: { group: 'r', every: 3_600_000 } }), 200);

    const unconfirmed = await cli(['queue', 'delete', queue], env);
    expect(unconfirmed).toMatchObject({ code: 2, stdout: '' });
    expect(unconfirmed.stderr).toBe('groupq: this deletes the queue with every job, group and repeat of it: pass --yes to do it\n(see "groupq queue delete --help")\n');
    expect((await suite.worker.api(`/v1/queues/${queue}`)).status).toBe(200);

    const deleted = await cli(['queue', 'delete', queue, '--yes'], env);
    expect(deleted).toEqual({
      code: 0,
      stdout: `deleted queue ${queue}: 3 jobs (2 waiting, 1 delayed), 2 groups with jobs, 1 repeat\n`,
      stderr: '',
    });
    expect((await suite.worker.api(`/v1/queues/${queue}`)).status).toBe(404);
    const names = json<{ name: string }[]>(await cli(['queues', '--json'], env)).map((q) => q.name);
    expect(names).not.toContain(queue);

    const again = await cli(['queue', 'delete', queue, '--yes', '--json'], env);
    expect(again).toMatchObject({ code: 1, stdout: '' });
    expect(JSON.parse(again.stderr)).toEqual({ error: { code: 'QUEUE_NOT_FOUND', message: 'queue not found', requestId: expect.any(String) } });
  });

  test('--json: what was deleted as one document', async () => {
    const queue = uniqueQueue('cli-delete-json');
    await pausedQueue(suite.worker, queue);
    const deleted = await cli(['queue', 'delete', queue, '--yes', '--json'], env);
    expect(json(deleted)).toEqual({
      name: queue, deleted: true, counts: { waiting: 0, delayed: 0, active: 0, completed: 0, failed: 0, cancelled: 0, expired: 0, groups: 0 }, repeats: 0,
    });
  });
});

describe('groups', () => {
  test("a table of the groups holding jobs: state, waiting, active out of the group's concurrency; paging as jobs pages", async () => {
    const queue = uniqueQueue('cli-groups');
    await pausedQueue(suite.worker, queue, { groupConcurrency: 2 });
    for (const [id, group] of [['1', 'a'], ['2', 'b'], ['3', 'b'], ['4', '用户:7']]) await enqueue(suite.worker, queue, { id, group });
    await expectJson(await suite.worker.api(`/v1/queues/${queue}/groups/b/pause`, { method: 'POST' }), 200);
    await expectJson(await suite.worker.api(`/v1/queues/${queue}/groups/a/limits`, { method: 'PUT', json: { concurrency: 5 } }), 200);

    const human = await cli(['groups', queue], env);
    expect(human).toMatchObject({ code: 0, stderr: '' });
    const rows = rowsByFirstCell(human.stdout);
    expect(rows.get('GROUP')).toEqual(['GROUP', 'STATE', 'WAITING', 'ACTIVE']);
    expect(rows.get('a')).toEqual(['a', 'ready', '1', '0/5']);
    expect(rows.get('b')).toEqual(['b', 'paused', '2', '0/2']);
    expect(rows.get('用户:7')).toEqual(['用户:7', 'ready', '1', '0/2']);

    const page = json<{ groups: { group: string }[]; cursor: string | null }>(await cli(['groups', queue, '--limit', '1', '--json'], env));
    // Groups are walked in hash order: a page may hold fewer than --limit, even none, and then
    // says where to go on (docs/http-api.md#paging).
    expect(page.groups.length).toBeLessThanOrEqual(1);
    if (page.groups.length === 0) expect(page.cursor).not.toBeNull();
    const every = json<{ groups: { group: string; waiting: number }[]; cursor: null }>(await cli(['groups', queue, '--limit', '1', '--all', '--json'], env));
    expect(every.cursor).toBeNull();
    expect(every.groups.map((g) => g.group).sort()).toEqual(['a', 'b', '用户:7']);

    const empty = uniqueQueue('cli-groups-empty');
    await pausedQueue(suite.worker, empty);
    expect(await cli(['groups', empty], env)).toEqual({ code: 0, stdout: 'no group holds a waiting or active job\n', stderr: '' });
    expect((await cli(['groups', 'no-such-queue'], env)).stderr).toBe('groupq: QUEUE_NOT_FOUND: queue not found\n');
  });
});
