// Every one-shot command of the CLI against the real Worker (Miniflare, private Redis stack),
// in-process through main(argv, io): its human output, its --json document, and what it changed
// as the HTTP API sees it. Deliveries go to a real loopback endpoint where they matter (failed
// jobs, retry). API errors exit 1 with a one-line message, leave stdout empty and never show
// the token; a refused enqueue writes nothing.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { describe, expect, test } from 'vitest';
import { ADMIN_TOKEN } from '../helpers/worker';
import {
  enqueue, expectJson, pausedQueue, putQueue, settledSnapshot, snapshotQueue, uniqueQueue, waitForState,
} from '../http/support';
import { cli, json, rowsByFirstCell, useCliSuite } from './support';

/** A JSON error carries the Worker's request id, the one its log lines carry (docs/logs.md). */
const REQUEST_ID = expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);

const suite = useCliSuite();

const getJob = async (queue: string, id: string) => expectJson(await suite.worker.api(`/v1/queues/${queue}/jobs/${encodeURIComponent(id)}`), 200);

describe('queues', () => {
  test('a table of every queue with its counts, or the same as JSON', async () => {
    const busy = uniqueQueue('cli-queues');
    await pausedQueue(suite.worker, busy);
    await enqueue(suite.worker, busy, { group: 'a', data: 1 });
    await enqueue(suite.worker, busy, { group: 'b', data: 2 });
    await enqueue(suite.worker, busy, { group: 'b', data: 3, delayMs: 600_000 });
    const idle = uniqueQueue('cli-queues');
    await putQueue(suite.worker, idle, { endpoint: suite.endpoint.url });

    const human = await cli(['queues'], suite.env);
    expect(human).toMatchObject({ code: 0, stderr: '' });
    const rows = rowsByFirstCell(human.stdout);
    expect(rows.get('NAME')).toEqual(['NAME', 'PAUSED', 'WAITING', 'DELAYED', 'ACTIVE', 'COMPLETED', 'FAILED', 'CANCELLED', 'EXPIRED', 'GROUPS']);
    expect(rows.get(busy)).toEqual([busy, 'yes', '2', '1', '0', '0', '0', '0', '0', '2']);
    expect(rows.get(idle)).toEqual([idle, 'no', '0', '0', '0', '0', '0', '0', '0', '0']);

    const machine = await cli(['queues', '--json'], suite.env);
    expect(machine).toMatchObject({ code: 0, stderr: '' });
    const list = json<{ name: string; paused: boolean; counts: Record<string, number> }[]>(machine);
    expect(list.find((q) => q.name === busy)).toEqual({
      name: busy,
      paused: true,
      counts: { waiting: 2, delayed: 1, active: 0, completed: 0, failed: 0, cancelled: 0, expired: 0, groups: 2 },
      oldestReady: { id: expect.any(String), orderMs: expect.any(Number) }, // the API's object as it is
    });
  });
});

describe('enqueue', () => {
  test('prints the id and state; --id makes it idempotent; --delay, --order-ms and --callback-url reach the job', async () => {
    const queue = uniqueQueue('cli-enqueue');
    await pausedQueue(suite.worker, queue);

    const plain = await cli(['enqueue', queue, '--group', 'user:42', '--data', '{"sku":"A1","n":[1,2]}'], suite.env);
    expect(plain).toMatchObject({ code: 0, stderr: '' });
    const [id, state] = plain.stdout.trim().split(' ');
    expect(state).toBe('waiting');
    expect(await getJob(queue, id!)).toMatchObject({ group: 'user:42', data: { sku: 'A1', n: [1, 2] }, state: 'waiting' });

    const first = await cli(['enqueue', queue, '--group', 'g', '--id', 'order-7', '--data', '"x"', '--json'], suite.env);
    expect(json(first)).toEqual({ id: 'order-7', state: 'waiting' });
    const again = await cli(['enqueue', queue, '--group', 'g', '--id', 'order-7', '--data', '"y"'], suite.env);
    expect(again.stdout).toBe('order-7 waiting (duplicate: a job with this id was enqueued already)\n');
    expect(json(await cli(['enqueue', queue, '--group', 'g', '--id', 'order-7', '--json'], suite.env))).toEqual({
      id: 'order-7', state: 'waiting', duplicate: true,
    });
    expect((await getJob(queue, 'order-7')).data).toBe('x');

    const callbackUrl = 'https://producer.example/outcomes';
    const delayed = await cli(['enqueue', queue, '--group', 'g', '--delay', '600000', '--order-ms', '5', '--id', 'later', '--callback-url', callbackUrl], suite.env);
    expect(delayed.stdout).toBe('later delayed\n');
    const job = await getJob(queue, 'later');
    expect(job).toMatchObject({ state: 'delayed', orderMs: 5, data: null, callbackUrl });
    expect(job.runAt).toBeGreaterThan(Date.now() + 500_000);
  });

  test('--data @<file> reads a file, --data - standard input; a file that is not there is a usage error', async () => {
    const queue = uniqueQueue('cli-data');
    await pausedQueue(suite.worker, queue);
    const dir = await mkdtemp(path.join(os.tmpdir(), 'groupq-cli-data-'));
    try {
      const file = path.join(dir, 'order.json');
      await writeFile(file, '{"sku":"B2","note":"ünïcode ✓"}\n');
      const fromFile = await cli(['enqueue', queue, '--group', 'g', '--id', 'from-file', '--data', `@${file}`], suite.env);
      expect(fromFile).toMatchObject({ code: 0, stderr: '' });
      expect((await getJob(queue, 'from-file')).data).toEqual({ sku: 'B2', note: 'ünïcode ✓' });

      // Standard input in two chunks, a multi-byte character split across them.
      const bytes = Buffer.from('{"from":"stdin ✓"}');
      const stdin = Readable.from([bytes.subarray(0, 15), bytes.subarray(15)]);
      const fromStdin = await cli(['enqueue', queue, '--group', 'g', '--id', 'from-stdin', '--data', '-'], suite.env, { stdin });
      expect(fromStdin).toMatchObject({ code: 0, stderr: '' });
      expect((await getJob(queue, 'from-stdin')).data).toEqual({ from: 'stdin ✓' });

      const missing = await cli(['enqueue', queue, '--group', 'g', '--data', `@${path.join(dir, 'nope.json')}`], suite.env);
      expect(missing.code).toBe(2);
      expect(missing.stderr).toMatch(/^groupq: --data @.+nope\.json: cannot read it: ENOENT/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  test('--priority and --debounce-* reach the Worker, which checks their values', async () => {
    const queue = uniqueQueue('cli-enqueue-flow');
    await pausedQueue(suite.worker, queue);
    const flow = ['--priority=-5', '--debounce-key', 'reindex:42', '--debounce-ms', '1000', '--debounce-max-ms', '5000'];
    const taken = await cli(['enqueue', queue, '--group', 'g', '--id', 'flow', ...flow, '--json'], suite.env);
    expect(taken).toMatchObject({ code: 0, stderr: '' });
    expect(json(taken)).toMatchObject({ id: 'flow' });
    expect(await getJob(queue, 'flow')).toMatchObject({ priority: -5 });

    const before = await settledSnapshot(suite.redis, queue);
    const tooLong = await cli(['enqueue', queue, '--group', 'g', '--debounce-key', 'k', '--debounce-ms', '86400001'], suite.env);
    expect(tooLong).toMatchObject({ code: 1, stdout: '' });
    expect(tooLong.stderr).toMatch(/^groupq: VALIDATION_FAILED: debounce\.delayMs: /);
    expect(await snapshotQueue(suite.redis, queue)).toEqual(before);
  });

  test('--ttl gives the job a deadline to start, shown by jobs; the Worker checks its value', async () => {
    const queue = uniqueQueue('cli-enqueue-ttl');
    await pausedQueue(suite.worker, queue);
    expect(await cli(['enqueue', queue, '--group', 'g', '--id', 'code', '--ttl', '3600000'], suite.env)).toMatchObject({ code: 0, stderr: '' });
    const job = await getJob(queue, 'code');
    expect(job.expiresAt - job.createdAt).toBe(3_600_000);
    expect(rowsByFirstCell((await cli(['jobs', queue], suite.env)).stdout).get('code')?.[4]).toMatch(/^expires in .+ unless started$/);

    const before = await settledSnapshot(suite.redis, queue);
    const tooLong = await cli(['enqueue', queue, '--group', 'g', '--ttl', String(30 * 86_400_000 + 1)], suite.env);
    expect(tooLong).toMatchObject({ code: 1, stdout: '' });
    expect(tooLong.stderr).toMatch(/^groupq: VALIDATION_FAILED: ttlMs: /);
    expect(await snapshotQueue(suite.redis, queue)).toEqual(before);
  });

  test('bad --data JSON is refused before any request: exit 2, nothing written', async () => {
    const queue = uniqueQueue('cli-enqueue-bad');
    await pausedQueue(suite.worker, queue);
    const before = await settledSnapshot(suite.redis, queue);
    for (const data of ['{sku: 1}', "{'a':1}", '', 'undefined']) {
      const result = await cli(['enqueue', queue, '--group', 'g', '--data', data], suite.env);
      expect(result).toMatchObject({ code: 2, stdout: '' });
      expect(result.stderr).toMatch(/^groupq: --data is not valid JSON: /);
    }
    expect(await snapshotQueue(suite.redis, queue)).toEqual(before);
  });

  test('a job the Worker refuses: exit 1 with its code and reason, nothing written', async () => {
    const queue = uniqueQueue('cli-enqueue-refused');
    await pausedQueue(suite.worker, queue, { maxPayloadBytes: 16 });
    const before = await settledSnapshot(suite.redis, queue);

    const emptyGroup = await cli(['enqueue', queue, '--group', '', '--data', '1'], suite.env);
    expect(emptyGroup).toMatchObject({ code: 1, stdout: '' });
    expect(emptyGroup.stderr).toMatch(/^groupq: VALIDATION_FAILED: group: groups are 1-256 characters\n/);

    const big = await cli(['enqueue', queue, '--group', 'g', '--data', JSON.stringify('x'.repeat(100)), '--json'], suite.env);
    expect(big).toMatchObject({ code: 1, stdout: '' });
    expect(JSON.parse(big.stderr)).toEqual({
      error: { code: 'PAYLOAD_TOO_LARGE', message: "job data is larger than the queue's maxPayloadBytes (16 bytes)", details: { index: 0, maxPayloadBytes: 16 }, requestId: REQUEST_ID },
    });
    const bigHuman = await cli(['enqueue', queue, '--group', 'g', '--data', JSON.stringify('x'.repeat(100))], suite.env);
    expect(bigHuman.stderr).toBe("groupq: PAYLOAD_TOO_LARGE: job data is larger than the queue's maxPayloadBytes (16 bytes)\n  index=0 maxPayloadBytes=16\n");
    expect(await snapshotQueue(suite.redis, queue)).toEqual(before);
  });
});

describe('tables', () => {
  test('columns line up by display width: CJK and emoji take two columns', async () => {
    const queue = uniqueQueue('cli-wide');
    await pausedQueue(suite.worker, queue);
    // GROUP's widest cell is "用户:42": 7 columns (each ideograph 2), though 5 UTF-16 units.
    const groups: [string, string, number][] = [['1', 'plain', 5], ['2', '用户:42', 7], ['3', '🚀 dev', 6]];
    for (const [id, group] of groups) await enqueue(suite.worker, queue, { id, group });
    const lines = (await cli(['jobs', queue], suite.env)).stdout.split('\n');
    for (const [id, group, width] of groups) {
      const line = lines.find((l) => l.startsWith(`${id} `));
      expect(line, id).toBeDefined();
      expect(line!.startsWith(`${id}   ${group}${' '.repeat(7 - width)}  waiting`), line).toBe(true);
    }
  });
});

describe('jobs, job, retry, remove, promote', () => {
  test('jobs lists one state as a table; --group, --limit and --all page through; --json has the cursor', async () => {
    const queue = uniqueQueue('cli-jobs');
    await pausedQueue(suite.worker, queue);
    for (const [id, group] of [['j1', 'a'], ['j2', 'b'], ['j3', 'a']]) await enqueue(suite.worker, queue, { id, group });
    await enqueue(suite.worker, queue, { id: 'd1', group: 'c', delayMs: 3_600_000 });

    const all = await cli(['jobs', queue], suite.env);
    expect(all).toMatchObject({ code: 0, stderr: '' });
    const rows = rowsByFirstCell(all.stdout);
    expect(rows.get('ID')).toEqual(['ID', 'GROUP', 'STATE', 'ATTEMPTS', 'DETAIL']);
    expect([...rows.keys()].slice(1).sort()).toEqual(['j1', 'j2', 'j3']);
    expect(rows.get('j2')).toEqual(['j2', 'b', 'waiting', '0/3']);

    const groupA = rowsByFirstCell((await cli(['jobs', queue, '--group', 'a'], suite.env)).stdout);
    expect([...groupA.keys()].slice(1).sort()).toEqual(['j1', 'j3']);

    const firstPage = await cli(['jobs', queue, '--limit', '2'], suite.env);
    expect(firstPage.stdout.trim().split('\n')).toHaveLength(4);
    expect(firstPage.stdout).toMatch(/\(more jobs: pass --all, or --limit up to 1000\)\n$/);
    const pageJson = json<{ jobs: { id: string }[]; cursor: string | null }>(await cli(['jobs', queue, '--limit', '2', '--json'], suite.env));
    expect(pageJson.jobs).toHaveLength(2);
    expect(pageJson.cursor).toEqual(expect.any(String));

    const everything = json<{ jobs: { id: string; data: unknown }[]; cursor: null }>(
      await cli(['jobs', queue, '--limit', '2', '--all', '--json'], suite.env),
    );
    expect(everything.cursor).toBeNull();
    expect(everything.jobs.map((j) => j.id).sort()).toEqual(['j1', 'j2', 'j3']);
    const everyRow = rowsByFirstCell((await cli(['jobs', queue, '--limit', '1', '--all'], suite.env)).stdout);
    expect(everyRow.size).toBe(4);

    const delayed = rowsByFirstCell((await cli(['jobs', queue, '--state', 'delayed'], suite.env)).stdout).get('d1');
    expect(delayed?.slice(0, 4)).toEqual(['d1', 'c', 'delayed', '0/3']);
    expect(delayed?.[4]).toMatch(/^runs in (59|60)m$/);

    expect(await cli(['jobs', queue, '--state', 'failed'], suite.env)).toEqual({ code: 0, stdout: 'no failed jobs\n', stderr: '' });
    const badState = await cli(['jobs', queue, '--state', 'broken'], suite.env);
    expect(badState).toMatchObject({ code: 1, stdout: '' });
    expect(badState.stderr).toMatch(/^groupq: VALIDATION_FAILED: state: /);
  });

  test('a failed delivery shows in jobs --state failed with its error; retry delivers it again', async () => {
    const queue = uniqueQueue('cli-retry');
    await putQueue(suite.worker, queue, { endpoint: suite.endpoint.url, maxAttempts: 1, keepCompleted: 10 });
    suite.endpoint.handle((received) => (received.job.queue === queue ? { status: 500, body: 'boom\nat line 2' } : {}));
    const { stdout } = await cli(['enqueue', queue, '--group', 'g', '--id', 'f1', '--data', '{"n":1}'], suite.env);
    expect(stdout).toMatch(/^f1 (waiting|active)\n$/);
    await waitForState(suite.worker, queue, 'f1', 'failed');

    const failed = await cli(['jobs', queue, '--state', 'failed'], suite.env);
    expect(rowsByFirstCell(failed.stdout).get('f1')).toEqual(['f1', 'g', 'failed', '1/1', 'HTTP 500: boom at line 2']);
    const failedJson = json(await cli(['jobs', queue, '--state', 'failed', '--json'], suite.env));
    expect(failedJson.jobs[0]).toMatchObject({ id: 'f1', state: 'failed', attempts: 1, error: 'HTTP 500: boom\nat line 2' });

    const shown = await cli(['job', queue, 'f1'], suite.env);
    expect(shown.stdout).toContain('\n  "id": "f1",\n');
    expect(JSON.parse(shown.stdout)).toEqual(await getJob(queue, 'f1'));
    expect(json(await cli(['job', queue, 'f1', '--json'], suite.env))).toEqual(await getJob(queue, 'f1'));

    suite.endpoint.handle(() => ({ body: '{"ok":true}', headers: { 'content-type': 'application/json' } }));
    const retried = await cli(['retry', queue, 'f1'], suite.env);
    expect(retried.code).toBe(0);
    expect(retried.stdout).toMatch(/^retried f1 \((waiting|active|completed)\)\n$/);
    // --wait answers once the retried job has finished.
    const done = json(await cli(['job', queue, 'f1', '--wait', '20000', '--json'], suite.env));
    expect(done).toMatchObject({ state: 'completed', result: { ok: true } });
    expect((await cli(['job', queue, 'f1', '--wait', 'soon'], suite.env)).stderr).toMatch(/--wait must be a whole number/);
    expect(suite.endpoint.received.filter((r) => r.job.queue === queue && r.job.id === 'f1')).toHaveLength(2);
  });

  test('retry and remove take several ids; an unknown id is reported and the rest still happen', async () => {
    const queue = uniqueQueue('cli-remove');
    await pausedQueue(suite.worker, queue);
    for (const id of ['r1', 'r2', 'r3']) await enqueue(suite.worker, queue, { id, group: 'g' });

    const removed = await cli(['remove', queue, 'r1', 'nope', 'r2'], suite.env);
    expect(removed.code).toBe(1);
    expect(removed.stdout).toBe('removed r1\nremoved r2\n');
    expect(removed.stderr).toBe('groupq: nope: JOB_NOT_FOUND: job not found\n');
    for (const id of ['r1', 'r2']) expect((await suite.worker.api(`/v1/queues/${queue}/jobs/${id}`)).status).toBe(404);

    const removedJson = await cli(['remove', queue, 'r3', '--json'], suite.env);
    expect(removedJson.code).toBe(0);
    expect(json(removedJson)).toEqual([{ id: 'r3', removed: true }]);

    const retryJson = await cli(['retry', queue, 'r3', '--json'], suite.env);
    expect(retryJson).toMatchObject({ code: 1 });
    expect(json(retryJson)).toEqual([]);
    expect(JSON.parse(retryJson.stderr)).toEqual({ error: { code: 'JOB_NOT_FOUND', message: 'job not found', requestId: REQUEST_ID }, id: 'r3' });
  });

  test('promote runs a delayed job now; promoting a waiting one is INVALID_STATE', async () => {
    const queue = uniqueQueue('cli-promote');
    await pausedQueue(suite.worker, queue);
    await enqueue(suite.worker, queue, { id: 'p1', group: 'g', delayMs: 3_600_000 });
    await enqueue(suite.worker, queue, { id: 'p2', group: 'g', delayMs: 3_600_000 });

    expect(await cli(['promote', queue, 'p1'], suite.env)).toEqual({ code: 0, stdout: 'promoted p1 (waiting)\n', stderr: '' });
    expect((await getJob(queue, 'p1')).state).toBe('waiting');
    expect(json(await cli(['promote', queue, 'p2', '--json'], suite.env))).toMatchObject({ id: 'p2', state: 'waiting', group: 'g' });

    const again = await cli(['promote', queue, 'p1'], suite.env);
    expect(again).toMatchObject({ code: 1, stdout: '' });
    expect(again.stderr).toMatch(/^groupq: INVALID_STATE: /);
  });

  test('cancel takes several ids; a finished one is INVALID_STATE and the rest still happen', async () => {
    const queue = uniqueQueue('cli-cancel');
    await pausedQueue(suite.worker, queue);
    await enqueue(suite.worker, queue, { id: 'c1', group: 'g' });
    await enqueue(suite.worker, queue, { id: 'c2', group: 'g', delayMs: 3_600_000 });

    const cancelled = await cli(['cancel', queue, 'c1', 'c2'], suite.env);
    expect(cancelled).toEqual({ code: 0, stdout: 'cancelled c1\ncancelled c2\n', stderr: '' });
    expect((await getJob(queue, 'c2')).state).toBe('cancelled');
    const listed = await cli(['jobs', queue, '--state', 'cancelled', '--json'], suite.env);
    expect(json<{ jobs: { id: string }[] }>(listed).jobs.map((j) => j.id).sort()).toEqual(['c1', 'c2']);

    const again = await cli(['cancel', queue, 'c1', '--json'], suite.env);
    expect(again).toMatchObject({ code: 1, stdout: '[]\n' });
    expect(JSON.parse(again.stderr)).toMatchObject({ error: { code: 'INVALID_STATE' }, id: 'c1' });
  });
});

describe('retry-all and clean', () => {
  test('retry every failed job, then delete every completed one; each prints how many', async () => {
    const queue = uniqueQueue('cli-bulk');
    await putQueue(suite.worker, queue, { endpoint: suite.endpoint.url, maxAttempts: 1, keepCompleted: 10 });
    suite.endpoint.handle((received) => (received.job.queue === queue ? { status: 500, body: 'down' } : {}));
    for (const id of ['b1', 'b2', 'b3']) await enqueue(suite.worker, queue, { id, group: id });
    for (const id of ['b1', 'b2', 'b3']) await waitForState(suite.worker, queue, id, 'failed');

    suite.endpoint.handle(() => ({}));
    expect(await cli(['retry-all', queue], suite.env)).toEqual({ code: 0, stdout: 'retried 3 failed jobs\n', stderr: '' });
    for (const id of ['b1', 'b2', 'b3']) await waitForState(suite.worker, queue, id, 'completed');
    expect(json(await cli(['retry-all', queue, '--json'], suite.env))).toEqual({ count: 0 });

    expect(await cli(['clean', queue, '--state', 'completed'], suite.env)).toEqual({ code: 0, stdout: 'deleted 3 completed jobs\n', stderr: '' });
    expect((await suite.worker.api(`/v1/queues/${queue}/jobs/b2`)).status).toBe(404);
    expect(json(await cli(['clean', queue, '--state', 'failed', '--json'], suite.env))).toEqual({ count: 0 });

    const noState = await cli(['clean', queue], suite.env);
    expect(noState).toMatchObject({ code: 2, stdout: '' });
    expect(noState.stderr).toContain('missing --state');
    const badState = await cli(['clean', queue, '--state', 'waiting'], suite.env);
    expect(badState).toMatchObject({ code: 1, stdout: '' });
    expect(badState.stderr).toMatch(/^groupq: VALIDATION_FAILED: state: /);
  });
});

describe('pause and resume', () => {
  test('the queue, or one group with --group', async () => {
    const queue = uniqueQueue('cli-pause');
    await putQueue(suite.worker, queue, { endpoint: suite.endpoint.url, keepCompleted: 10 });

    expect(await cli(['pause', queue], suite.env)).toEqual({ code: 0, stdout: `queue ${queue} paused\n`, stderr: '' });
    expect((await expectJson(await suite.worker.api(`/v1/queues/${queue}`), 200)).paused).toBe(true);
    expect(json(await cli(['resume', queue, '--json'], suite.env))).toEqual({ name: queue, paused: false });
    expect((await expectJson(await suite.worker.api(`/v1/queues/${queue}`), 200)).paused).toBe(false);

    expect(await cli(['pause', queue, '--group', 'user:1'], suite.env)).toEqual({
      code: 0, stdout: `group user:1 in ${queue}: paused\n`, stderr: '',
    });
    // A job for the paused group waits: nothing is delivered until the group resumes.
    await enqueue(suite.worker, queue, { id: 'held', group: 'user:1' });
    expect((await getJob(queue, 'held')).state).toBe('waiting');
    expect(json(await cli(['resume', queue, '--group', 'user:1', '--json'], suite.env))).toMatchObject({ group: 'user:1' });
    await waitForState(suite.worker, queue, 'held', 'completed');
    expect(suite.endpoint.received.some((r) => r.job.queue === queue && r.job.id === 'held')).toBe(true);
  });
});

describe('group-limits', () => {
  test("sets a group's concurrency and rate limit, or no rate limit, then clears them", async () => {
    const queue = uniqueQueue('cli-limits');
    await pausedQueue(suite.worker, queue, { groupConcurrency: 2 });
    await enqueue(suite.worker, queue, { group: 'user:1' });
    const group = async () => expectJson(await suite.worker.api(`/v1/queues/${queue}/groups/user%3A1`), 200);

    const set = await cli(['group-limits', queue, 'user:1', '--concurrency', '3', '--rate-max', '10', '--rate-period-ms', '1000'], suite.env);
    expect(set).toEqual({ code: 0, stdout: `group user:1 in ${queue}: concurrency 3, at most 10 starts per 1000 ms\n`, stderr: '' });
    expect(await group()).toMatchObject({ limits: { concurrency: 3, rateLimit: { max: 10, periodMs: 1000 } }, concurrency: 3 });

    const none = await cli(['group-limits', queue, 'user:1', '--no-rate-limit', '--json'], suite.env);
    expect(json(none)).toEqual({ group: 'user:1', limits: { rateLimit: null } });
    expect(await group()).toMatchObject({ limits: { rateLimit: null }, concurrency: 2 });

    expect(await cli(['group-limits', queue, 'user:1', '--clear'], suite.env)).toEqual({
      code: 0, stdout: `group user:1 in ${queue}: limits cleared (the queue's apply)\n`, stderr: '',
    });
    expect(json(await cli(['group-limits', queue, 'user:1', '--clear', '--json'], suite.env))).toEqual({ group: 'user:1', limits: null });
    expect(await group()).toMatchObject({ limits: null, concurrency: 2 });
  });

  test('limits the Worker refuses: exit 1 with the field, nothing written', async () => {
    const queue = uniqueQueue('cli-limits-bad');
    await pausedQueue(suite.worker, queue);
    const before = await settledSnapshot(suite.redis, queue);
    const result = await cli(['group-limits', queue, 'g', '--rate-max', '10', '--rate-period-ms', '999'], suite.env);
    expect(result).toMatchObject({ code: 1, stdout: '' });
    expect(result.stderr).toMatch(/^groupq: VALIDATION_FAILED: rateLimit\.periodMs: /);
    expect(await snapshotQueue(suite.redis, queue)).toEqual(before);
  });
});

describe('API errors, connection and token', () => {
  test('an unknown queue: exit 1, one line on stderr (JSON with --json), nothing on stdout', async () => {
    const human = await cli(['jobs', 'no-such-queue'], suite.env);
    expect(human).toEqual({ code: 1, stdout: '', stderr: 'groupq: QUEUE_NOT_FOUND: queue not found\n' });
    const machine = await cli(['pause', 'no-such-queue', '--json'], suite.env);
    expect(machine).toMatchObject({ code: 1, stdout: '' });
    expect(JSON.parse(machine.stderr)).toEqual({ error: { code: 'QUEUE_NOT_FOUND', message: 'queue not found', requestId: REQUEST_ID } });
  });

  test('--url and --token win over GROUPQ_URL and GROUPQ_TOKEN; the token is never printed', async () => {
    const wrongToken = 'wrong-token-do-not-print-1234';
    const flagsWin = await cli(['queues', '--json', '--url', suite.worker.url, '--token', ADMIN_TOKEN], {
      GROUPQ_URL: 'http://127.0.0.1:9',
      GROUPQ_TOKEN: wrongToken,
    });
    expect(flagsWin.code).toBe(0);
    expect(Array.isArray(json(flagsWin))).toBe(true);

    const badFlag = await cli(['queues', '--token', wrongToken], suite.env);
    expect(badFlag.code).toBe(1);
    expect(badFlag.stderr).toMatch(/^groupq: UNAUTHORIZED: .+ \(check GROUPQ_TOKEN or --token\)\n  reason="unrecognised"\n$/);
    const badEnv = await cli(['queues', '--json'], { ...suite.env, GROUPQ_TOKEN: wrongToken });
    expect(badEnv.code).toBe(1);
    expect(JSON.parse(badEnv.stderr).error.code).toBe('UNAUTHORIZED');
    expect(JSON.parse(badEnv.stderr).error.requestId).toEqual(REQUEST_ID);
    for (const result of [flagsWin, badFlag, badEnv]) {
      expect(result.stdout + result.stderr).not.toContain(wrongToken);
      expect(result.stdout + result.stderr).not.toContain(ADMIN_TOKEN);
    }
  });

  test('no Worker at the URL: NETWORK_ERROR, exit 1', async () => {
    // Port 9 (discard) on loopback has no listener; the client retries reads, then gives up.
    const result = await cli(['queues'], { GROUPQ_URL: 'http://127.0.0.1:9', GROUPQ_TOKEN: ADMIN_TOKEN });
    expect(result).toMatchObject({ code: 1, stdout: '' });
    expect(result.stderr).toMatch(/^groupq: NETWORK_ERROR: GET http:\/\/127\.0\.0\.1:9\/v1\/queues got no answer: .+ \(check GROUPQ_URL or --url, and that the Worker runs\)\n$/);
  });
});

describe('partitions and move', () => {
  test("a table of the queue's partitions, each with its database and counts; move needs a pool", async () => {
    const queue = uniqueQueue('cli-partitions');
    await putQueue(suite.worker, queue, { endpoint: suite.endpoint.url, partitions: 3 });
    await suite.worker.api(`/v1/queues/${queue}/pause`, { method: 'POST' });
    const groups = ['a', 'b', 'c', 'd', 'e', 'f'];
    for (const group of groups) await enqueue(suite.worker, queue, { group, data: 1 });

    const human = await cli(['partitions', queue], suite.env);
    expect(human).toMatchObject({ code: 0, stderr: '' });
    const rows = rowsByFirstCell(human.stdout);
    expect(rows.get('PARTITION')).toEqual(['PARTITION', 'DATABASE', 'WAITING', 'DELAYED', 'ACTIVE', 'COMPLETED', 'FAILED', 'CANCELLED', 'EXPIRED', 'GROUPS']);
    const list = json<{ partition: number; database: number; counts: { waiting: number } }[]>(await cli(['partitions', queue, '--json'], suite.env));
    expect(list.map((p) => [p.partition, p.database])).toEqual([[0, 0], [1, 0], [2, 0]]);
    expect(list.reduce((sum, p) => sum + p.counts.waiting, 0)).toBe(groups.length);
    for (const p of list) expect(rows.get(String(p.partition))?.[2]).toBe(String(p.counts.waiting));

    const refused = await cli(['move', queue, '1', '--database', '0'], suite.env);
    expect(refused).toMatchObject({ code: 1, stdout: '' });
    expect(refused.stderr).toMatch(/^groupq: VALIDATION_FAILED: database: a move needs a pool of databases/);
    expect(await cli(['move', queue, 'x', '--database', '1'], suite.env)).toMatchObject({ code: 2 });
  });
});
