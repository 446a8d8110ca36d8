// `groupq events` and the monitor on the event stream, against the real Worker: a job's events
// printed as JSON lines and as text lines until its final event (exit 0), the queue's events as
// they happen until stopped (exit 0), usage errors; the monitor live on the stream (a frame on a
// change, idle frames LIVE_REFRESH_INTERVALS intervals apart) and polling every interval through
// a real proxy that takes the stream route away, as a Worker older than the streams.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { main } from '../../src/cli';
import { LIVE_REFRESH_INTERVALS } from '../../src/cli/monitor';
import { enqueue, pausedQueue, putQueue, uniqueQueue } from '../http/support';
import { Collector, cli, useCliSuite } from './support';

const suite = useCliSuite();

/** Runs `groupq <argv>` until the returned `stop()`; its exit code comes from `done`. */
function start(argv: string[], stdout = new Collector(), env = suite.env) {
  const controller = new AbortController();
  const stderr = new Collector();
  const done = main(argv, { stdout, stderr, env, signal: controller.signal });
  return { stdout, stderr, done, stop: () => controller.abort() };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const TIME = '\\d\\d:\\d\\d:\\d\\d\\.\\d\\d\\d';

describe('groupq events', () => {
  test('--job prints the job\'s events until its final event: JSON lines, then text lines', async () => {
    const queue = uniqueQueue('cli-events-job');
    await pausedQueue(suite.worker, queue, { endpoint: suite.endpoint.url, keepCompleted: 10 });
    suite.endpoint.handle(({ job }) => (job.queue === queue ? { headers: { 'content-type': 'application/json' }, body: '{"sent":true}' } : {}));
    await enqueue(suite.worker, queue, { id: 'j1', group: 'g', data: 1 });
    const run = start(['events', queue, '--job', 'j1', '--json']);
    await run.stdout.until((text) => text.includes('"added"'));
    expect((await suite.worker.api(`/v1/queues/${queue}/resume`, { method: 'POST' })).status).toBe(200);
    // It ends by itself after the final event.
    expect(await run.done).toBe(0);
    expect(run.stderr.text).toBe('');
    const lines = run.stdout.text.trimEnd().split('\n').map((line) => JSON.parse(line));
    expect(lines.map((line) => line.event)).toEqual(['added', 'active', 'completed']);
    for (const line of lines) {
      expect(line).toMatchObject({ eventId: expect.stringMatching(/^\d+-\d+$/), data: { id: 'j1', queue, group: 'g' } });
    }
    expect(lines[2].data).toMatchObject({ state: 'completed', attempt: 1, result: { sent: true } });

    // The job has ended: its end alone, as a line of text.
    const text = await cli(['events', queue, '--job', 'j1'], suite.env);
    expect(text).toMatchObject({ code: 0, stderr: '' });
    expect(text.stdout).toMatch(new RegExp(`^${TIME}  completed  j1  g  attempt 1 result \\{"sent":true\\}\\n$`));
  });

  test("the queue's events as they happen, one line each, until stopped (exit 0)", async () => {
    const queue = uniqueQueue('cli-events-queue');
    await putQueue(suite.worker, queue, { endpoint: suite.endpoint.url, keepCompleted: 10 });
    suite.endpoint.handle(() => ({}));
    const run = start(['events', queue, '--group', 'mine']);
    // The stream opens in the background: jobs go in until one shows.
    for (let n = 0; !run.stdout.text.includes('completed') && n < 50; n++) {
      await enqueue(suite.worker, queue, { id: `other${n}`, group: 'other' });
      await enqueue(suite.worker, queue, { id: `mine${n}`, group: 'mine' });
      await sleep(200);
    }
    await run.stdout.until((text) => /  completed  mine\d+  mine  attempt 1\n/.test(text));
    run.stop();
    expect(await run.done).toBe(0);
    expect(run.stderr.text).toBe('');
    const lines = run.stdout.text.trimEnd().split('\n');
    for (const line of lines) expect(line).toMatch(new RegExp(`^${TIME}  (added    |active   |completed)  mine\\d+  mine  `));
    const first = lines.find((line) => line.includes('  added  '));
    expect(first).toMatch(new RegExp(`^${TIME}  added      mine\\d+  mine  waiting$`));
    expect(lines.some((line) => / {2}active {3} {2}mine\d+ {2}mine {2}attempt 1$/.test(line))).toBe(true);
  });

  test('usage and refusals: --group with --job is exit 2; an unknown job or queue exit 1', async () => {
    const both = await cli(['events', 'orders', '--group', 'g', '--job', 'j'], suite.env);
    expect(both).toMatchObject({ code: 2, stdout: '' });
    expect(both.stderr).toMatch(/^groupq: --group and --job do not go together/);
    const queue = uniqueQueue('cli-events-none');
    await pausedQueue(suite.worker, queue);
    expect(await cli(['events', queue, '--job', 'nope'], suite.env)).toMatchObject({ code: 1, stdout: '', stderr: 'groupq: JOB_NOT_FOUND: job not found\n' });
    const missing = await cli(['events', 'no-such-queue', '--json'], suite.env);
    expect(missing).toMatchObject({ code: 1, stdout: '' });
    expect(JSON.parse(missing.stderr).error.code).toBe('QUEUE_NOT_FOUND');
    expect((await cli(['events', '--help'], {})).stdout).toContain('--job <id>');
  });
});

/** A real proxy in front of the Worker that sends the stream routes where no route is (`/v0/`). */
async function startProxyWithoutStreams(target: string) {
  const server = http.createServer((req, res) => {
    const path = req.url!.split('?')[0]!.endsWith('/events') ? req.url!.replace('/v1/', '/v0/') : req.url!;
    const upstream = http.request(`${target}${path}`, { method: req.method, headers: { ...req.headers, host: new URL(target).host } }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on('error', () => res.socket?.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  };
}

const frames = (text: string) => text.split('groupq monitor  ').length - 1;

describe('groupq monitor on the stream', () => {
  let proxy: Awaited<ReturnType<typeof startProxyWithoutStreams>>;
  beforeAll(async () => {
    proxy = await startProxyWithoutStreams(suite.worker.url);
  });
  afterAll(() => proxy?.close());

  test('live: a frame soon after a change, and idle frames ten intervals apart', async () => {
    const queue = uniqueQueue('cli-monitor-live');
    await pausedQueue(suite.worker, queue);
    const run = start(['monitor', queue, '--interval', '200']);
    await run.stdout.until((text) => text.includes('(live, Ctrl-C quits)'));
    const idle = frames(run.stdout.text);
    await sleep(1200);
    // Polling would have drawn 6 frames by now; live, no event came, so none did.
    expect(frames(run.stdout.text)).toBe(idle);
    const addedAt = Date.now();
    await enqueue(suite.worker, queue, { id: 'late', group: 'late' });
    await run.stdout.until((text) => text.includes('late'));
    expect(Date.now() - addedAt).toBeLessThan(200 * LIVE_REFRESH_INTERVALS);
    run.stop();
    expect(await run.done).toBe(0);
    expect(run.stderr.text).toBe('');
  });

  test('a Worker without the stream route: a frame every interval, as before', async () => {
    const queue = uniqueQueue('cli-monitor-poll');
    await pausedQueue(suite.worker, queue);
    const run = start(['monitor', queue, '--interval', '100'], new Collector(), { ...suite.env, GROUPQ_URL: proxy.url });
    await run.stdout.until((text) => frames(text) >= 6);
    run.stop();
    expect(await run.done).toBe(0);
    expect(run.stdout.text).not.toContain('(live');
    expect(run.stdout.text).toContain('(every 100ms, Ctrl-C quits)');
  });

  test('`job --wait` through a Worker without the stream route polls, and answers the finished job', async () => {
    const queue = uniqueQueue('cli-wait-poll');
    await pausedQueue(suite.worker, queue, { endpoint: suite.endpoint.url, keepCompleted: 10 });
    suite.endpoint.handle(() => ({}));
    await enqueue(suite.worker, queue, { id: 'w', group: 'g' });
    const waiting = cli(['job', queue, 'w', '--wait', '20000', '--json'], { ...suite.env, GROUPQ_URL: proxy.url });
    await sleep(300);
    expect((await suite.worker.api(`/v1/queues/${queue}/resume`, { method: 'POST' })).status).toBe(200);
    const waited = await waiting;
    expect(waited).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(waited.stdout)).toMatchObject({ id: 'w', state: 'completed' });
  });
});
