// `repeats list|put|delete`, `metrics` and `health` against the real Worker (Miniflare, private
// Redis stack), in-process through main(argv, io). A repeat put by the CLI is the one the API
// lists, and gone once deleted; metrics count the jobs a real endpoint completed and failed;
// health says ok without an admin token. (health down: health-down.test.ts.)
import { describe, expect, test } from 'vitest';
import { enqueue, expectJson, pausedQueue, putQueue, uniqueQueue, waitForState } from '../http/support';
import { cli, json, rowsByFirstCell, useCliSuite } from './support';

const suite = useCliSuite();

const listRepeats = async (queue: string) => (await expectJson(await suite.worker.api(`/v1/queues/${queue}/repeats`), 200)).repeats;

describe('repeats', () => {
  test('put, list and delete round trip: every and cron, data, limit, start and end', async () => {
    const queue = uniqueQueue('cli-repeats');
    await pausedQueue(suite.worker, queue);
    expect(await cli(['repeats', 'list', queue], suite.env)).toEqual({ code: 0, stdout: 'no repeats\n', stderr: '' });

    const every = await cli(['repeats', 'put', queue, 'heartbeat', '--every-ms', '90000', '--group', 'beats', '--data', '{"n":1}', '--limit', '5'], suite.env);
    expect(every).toMatchObject({ code: 0, stderr: '' });
    expect(every.stdout).toMatch(/^repeat heartbeat of .+: next run in \d+(s|m|ms) \(\d{4}-\d\d-\d\dT.+Z\)\n$/);

    const startAt = Date.parse('2030-01-31T00:00:00Z');
    const cronFlags = ['--cron', '0 9 * * 1-5', '--tz', 'Europe/Berlin', '--group', 'reports', '--start-at', '2030-01-31T00:00:00Z', '--end-at', String(startAt + 86_400_000 * 30)];
    const cron = await cli(['repeats', 'put', queue, 'report', ...cronFlags, '--json'], suite.env);
    expect(cron).toMatchObject({ code: 0, stderr: '' });
    const { key, nextRunAt } = json<{ key: string; nextRunAt: number }>(cron);
    expect(key).toBe('report');
    // The first weekday 09:00 in Berlin (08:00 UTC in winter) on or after the start: Thursday 31 January 2030.
    expect(nextRunAt).toBe(Date.parse('2030-01-31T08:00:00Z'));

    const byKey = new Map((await listRepeats(queue)).map((repeat: { key: string }) => [repeat.key, repeat]));
    expect(byKey.get('heartbeat')).toMatchObject({ group: 'beats', every: 90_000, data: { n: 1 }, limit: 5, count: 0 });
    expect(byKey.get('report')).toMatchObject({ group: 'reports', pattern: '0 9 * * 1-5', tz: 'Europe/Berlin', startAt, endAt: startAt + 86_400_000 * 30, data: null });

    const listed = await cli(['repeats', 'list', queue], suite.env);
    expect(listed).toMatchObject({ code: 0, stderr: '' });
    const rows = rowsByFirstCell(listed.stdout);
    expect(rows.get('KEY')).toEqual(['KEY', 'GROUP', 'SCHEDULE', 'NEXT RUN', 'RUNS']);
    expect(rows.get('heartbeat')?.slice(0, 3)).toEqual(['heartbeat', 'beats', 'every 90s']);
    expect(rows.get('heartbeat')?.[4]).toBe('0/5');
    expect(rows.get('report')?.slice(0, 3)).toEqual(['report', 'reports', 'cron 0 9 * * 1-5 (Europe/Berlin)']);
    expect(rows.get('report')?.[3]).toMatch(/^in \d+d$/);
    expect(json<unknown[]>(await cli(['repeats', 'list', queue, '--json'], suite.env))).toEqual(await listRepeats(queue));

    // put again replaces.
    expect((await cli(['repeats', 'put', queue, 'heartbeat', '--every-ms', '60000', '--group', 'beats'], suite.env)).code).toBe(0);
    expect((await listRepeats(queue)).find((repeat: { key: string }) => repeat.key === 'heartbeat')).toMatchObject({ every: 60_000, data: null });

    expect(await cli(['repeats', 'delete', queue, 'heartbeat'], suite.env)).toEqual({
      code: 0, stdout: `deleted repeat heartbeat of ${queue} (runs already enqueued stay)\n`, stderr: '',
    });
    expect(json(await cli(['repeats', 'delete', queue, 'report', '--json'], suite.env))).toEqual({ key: 'report', deleted: true });
    expect(await listRepeats(queue)).toEqual([]);

    const gone = await cli(['repeats', 'delete', queue, 'heartbeat'], suite.env);
    expect(gone).toMatchObject({ code: 1, stdout: '' });
    expect(gone.stderr).toMatch(/^groupq: REPEAT_NOT_FOUND: /);
  });

  test('what the Worker refuses (an interval under a second, a bad pattern) is VALIDATION_FAILED, nothing written', async () => {
    const queue = uniqueQueue('cli-repeats-bad');
    await pausedQueue(suite.worker, queue);
    const short = await cli(['repeats', 'put', queue, 'fast', '--every-ms', '10', '--group', 'g'], suite.env);
    expect(short).toMatchObject({ code: 1, stdout: '' });
    expect(short.stderr).toMatch(/^groupq: VALIDATION_FAILED: every: /);
    const badCron = await cli(['repeats', 'put', queue, 'odd', '--cron', 'every day at 9', '--group', 'g'], suite.env);
    expect(badCron).toMatchObject({ code: 1, stdout: '' });
    expect(badCron.stderr).toMatch(/^groupq: VALIDATION_FAILED: /);
    expect(await listRepeats(queue)).toEqual([]);
  });
});

describe('metrics', () => {
  test("the hour's totals and the last minutes count the jobs that completed and failed", async () => {
    const queue = uniqueQueue('cli-metrics');
    await putQueue(suite.worker, queue, { endpoint: suite.endpoint.url, maxAttempts: 1, keepCompleted: 10 });
    suite.endpoint.handle((received) => (received.job.queue === queue && received.job.group === 'bad' ? { status: 500, body: 'no' } : {}));
    for (const id of ['m1', 'm2', 'm3']) await enqueue(suite.worker, queue, { id, group: id });
    await enqueue(suite.worker, queue, { id: 'm4', group: 'bad' });
    for (const id of ['m1', 'm2', 'm3']) await waitForState(suite.worker, queue, id, 'completed');
    await waitForState(suite.worker, queue, 'm4', 'failed');

    const human = await cli(['metrics', queue], suite.env);
    expect(human).toMatchObject({ code: 0, stderr: '' });
    const rows = rowsByFirstCell(human.stdout);
    expect(rows.get('PERIOD')).toEqual(['PERIOD', 'COMPLETED', 'FAILED', 'RETRIED']);
    expect(rows.get('last hour')).toEqual(['last hour', '3', '1', '0']);
    expect(rows.get('last 10 min')).toEqual(['last 10 min', '3', '1', '0']);
    const minutes = human.stdout.split('\n\n')[1]!.trim().split('\n');
    expect(minutes[0]).toMatch(/^MINUTE\s+COMPLETED\s+FAILED\s+RETRIED$/);
    expect(minutes).toHaveLength(11);
    expect(minutes.at(-1)).toMatch(/^\d\d:\d\d \(now\)\s+\d+\s+\d+\s+\d+$/);
    // Each minute's row, summed, is the total (the jobs ran within the last 10 minutes).
    const summed = minutes.slice(1).map((line) => line.trim().split(/\s{2,}/).slice(1).map(Number)).reduce((a, b) => a.map((n, i) => n + b[i]!));
    expect(summed).toEqual([3, 1, 0]);

    const five = rowsByFirstCell((await cli(['metrics', queue, '--minutes', '60'], suite.env)).stdout);
    expect(five.has('last 60 min')).toBe(false);

    const document = json<{ minutes: { at: number; completed: number; failed: number; retried: number }[] }>(await cli(['metrics', queue, '--json'], suite.env));
    expect(document.minutes).toHaveLength(60);
    expect(document.minutes.reduce((sum, minute) => sum + minute.completed, 0)).toBe(3);
    expect(await cli(['metrics', 'no-such-queue'], suite.env)).toEqual({ code: 1, stdout: '', stderr: 'groupq: QUEUE_NOT_FOUND: queue not found\n' });
  });
});

describe('health', () => {
  test('ok with its database, exit 0; no admin token needed', async () => {
    expect(await cli(['health'], suite.env)).toEqual({ code: 0, stdout: 'ok (redis ok)\n', stderr: '' });
    expect(await cli(['health', '--json'], { GROUPQ_URL: suite.worker.url })).toEqual({ code: 0, stdout: '{"ok":true,"redis":"ok"}\n', stderr: '' });
  });

  test('no Worker at the URL: NETWORK_ERROR, exit 1', async () => {
    const result = await cli(['health'], { GROUPQ_URL: 'http://127.0.0.1:9' });
    expect(result).toMatchObject({ code: 1, stdout: '' });
    expect(result.stderr).toMatch(/^groupq: NETWORK_ERROR: GET http:\/\/127\.0\.0\.1:9\/health got no answer: /);
  });
});
