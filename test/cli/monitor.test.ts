// `groupq monitor` against the real Worker: --once frames (counts, groups with the active one
// first, throughput from real deliveries' metrics), --json lines, a terminal stand-in redrawn in
// place for several frames until an AbortSignal stops it (exit 0, cursor shown again), plain
// scrolling frames elsewhere, and a refresh that fails after the first frame.
import { describe, expect, test } from 'vitest';
import { main } from '../../src/cli';
import { enqueue, pausedQueue, putQueue, uniqueQueue, waitForState } from '../http/support';
import { Collector, cli, json, rowsByFirstCell, useCliSuite } from './support';

const suite = useCliSuite();

const ESC = '\x1b[';
// eslint-disable-next-line no-control-regex
const stripAnsi = (text: string) => text.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '');
const count = (text: string, part: string) => text.split(part).length - 1;

/** Starts a monitor that runs until the returned `stop()`; its exit code comes from `done`. */
function startMonitor(argv: string[], stdout: Collector) {
  const controller = new AbortController();
  const stderr = new Collector();
  const done = main(['monitor', ...argv], { stdout, stderr, env: suite.env, signal: controller.signal });
  return { stderr, done, stop: () => controller.abort() };
}

describe('monitor --once', () => {
  test('counts, groups (active first) and throughput of real deliveries, as a frame or one JSON line', async () => {
    const queue = uniqueQueue('cli-monitor');
    await putQueue(suite.worker, queue, {
      endpoint: suite.endpoint.url,
      maxAttempts: 2,
      backoff: { type: 'fixed', delayMs: 0, jitter: false },
      keepCompleted: 10,
      timeoutMs: 60_000,
    });
    suite.endpoint.handle(({ job }) => {
      if (job.queue !== queue) return {};
      if (job.group === 'slow') return { hang: true };
      return job.data === 'fail' ? { status: 500, body: 'no' } : {};
    });
    for (const id of ['ok1', 'ok2', 'ok3']) await enqueue(suite.worker, queue, { id, group: 'fast', data: id });
    await enqueue(suite.worker, queue, { id: 'bad', group: 'bad', data: 'fail' });
    for (const id of ['ok1', 'ok2', 'ok3']) await waitForState(suite.worker, queue, id, 'completed');
    await waitForState(suite.worker, queue, 'bad', 'failed');
    // One job held by a slow endpoint keeps its group active; another waits behind it.
    await enqueue(suite.worker, queue, { id: 's1', group: 'slow' });
    await waitForState(suite.worker, queue, 's1', 'active');
    await enqueue(suite.worker, queue, { id: 's2', group: 'slow' });

    // Counters are written once per drain batch, after the jobs' states: wait for them.
    let snapshot: any;
    for (let i = 0; i < 100; i++) {
      snapshot = json(await cli(['monitor', queue, '--once', '--json'], suite.env));
      if (snapshot.throughput.lastFiveMinutes.completed === 3 && snapshot.throughput.lastFiveMinutes.failed === 1) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(snapshot).toMatchObject({
      queue,
      paused: false,
      counts: { waiting: 1, delayed: 0, active: 1, completed: 3, failed: 1, cancelled: 0, expired: 0, groups: 1 },
      groups: [{ group: 'slow', waiting: 1, active: 1, state: 'active', concurrency: 1 }],
      throughput: { lastFiveMinutes: { completed: 3, failed: 1, retried: 1 } },
    });
    expect(Object.keys(snapshot).sort()).toEqual(['at', 'counts', 'groups', 'paused', 'queue', 'throughput']);
    const { thisMinute } = snapshot.throughput;
    for (const key of ['completed', 'failed', 'retried']) {
      expect(thisMinute[key]).toBeLessThanOrEqual(snapshot.throughput.lastFiveMinutes[key]);
    }

    const frame = await cli(['monitor', queue, '--once'], suite.env);
    expect(frame).toMatchObject({ code: 0, stderr: '' });
    expect(frame.stdout).not.toContain('\x1b');
    expect(frame.stdout).toMatch(new RegExp(`^groupq monitor  ${queue}  running  \\d\\d:\\d\\d:\\d\\d\\n`));
    const rows = rowsByFirstCell(frame.stdout);
    expect(rows.get('WAITING')).toEqual(['WAITING', 'DELAYED', 'ACTIVE', 'COMPLETED', 'FAILED', 'CANCELLED', 'EXPIRED', 'GROUPS']);
    expect(rows.get('1')).toEqual(['1', '0', '1', '3', '1', '0', '0', '1']);
    expect(rows.get('THROUGHPUT')).toEqual(['THROUGHPUT', 'THIS MINUTE', 'LAST 5 MIN']);
    expect(rows.get('completed')?.[2]).toBe('3');
    expect(rows.get('failed')?.[2]).toBe('1');
    expect(rows.get('retried')?.[2]).toBe('1');
    expect(frame.stdout).toMatch(/\nFINISHED PER MINUTE, LAST HOUR \(busiest: [1-4]\)\n\|[ ▁▂▃▄▅▆▇█]{60}\|\n/);
    expect(frame.stdout).toContain('\nGROUPS (1 with jobs, active first)\n');
    expect(rows.get('slow')).toEqual(['slow', 'active', '1', '1/1']);
  });

  test('a queue whose only jobs are delayed says so, rather than that it holds no job', async () => {
    const queue = uniqueQueue('cli-monitor-delayed');
    await pausedQueue(suite.worker, queue);
    await enqueue(suite.worker, queue, { group: 'later', delayMs: 60_000 });
    const frame = await cli(['monitor', queue, '--once'], suite.env);
    expect(frame.stdout).toContain('\nno group holds a waiting or active job (1 delayed: each joins its group when due)\n');
  });

  test('an unknown queue fails the first frame: exit 1', async () => {
    expect(await cli(['monitor', 'no-such-queue', '--once'], suite.env)).toEqual({
      code: 1,
      stdout: '',
      stderr: 'groupq: QUEUE_NOT_FOUND: queue not found\n',
    });
    // Live too: nothing to show, so it does not start.
    const live = await cli(['monitor', 'no-such-queue', '--json'], suite.env);
    expect(live).toMatchObject({ code: 1, stdout: '' });
    expect(JSON.parse(live.stderr).error.code).toBe('QUEUE_NOT_FOUND');
  });
});

describe('monitor, live', () => {
  test('on a terminal it redraws in place each refresh, until stopped; the cursor comes back', async () => {
    const queue = uniqueQueue('cli-monitor-tty');
    await pausedQueue(suite.worker, queue);
    await enqueue(suite.worker, queue, { group: 'early' });
    const stdout = new Collector({ isTTY: true, columns: 60 });
    const monitor = startMonitor([queue, '--interval', '100'], stdout);

    await stdout.until((text) => count(text, `${ESC}H`) >= 1);
    // A change between frames shows in a later frame.
    await enqueue(suite.worker, queue, { group: 'late' });
    await stdout.until((text) => text.includes('late'));
    monitor.stop();
    expect(await monitor.done).toBe(0);
    expect(monitor.stderr.text).toBe('');

    const text = stdout.text;
    // The first frame hides the cursor and clears the screen once; every frame starts at home.
    expect(text.startsWith(`${ESC}?25l${ESC}H${ESC}2J`)).toBe(true);
    expect(count(text, `${ESC}2J`)).toBe(1);
    const frames = text.split(`${ESC}H`).slice(1);
    expect(frames.length).toBeGreaterThanOrEqual(2);
    for (const frame of frames) {
      // Each line overwrites the old one to its end; what the last frame left below is cleared.
      expect(frame).toMatch(new RegExp(`\\x1b\\[J(\\x1b\\[\\?25h)?$`));
      const lines = frame.replace(/\x1b\[J(\x1b\[\?25h)?$/, '').split('\n').slice(0, -1);
      for (const line of lines) expect(line.endsWith(`${ESC}K`)).toBe(true);
      // Cut to the terminal's width, so no line wraps and shifts the next frame.
      for (const line of lines) expect([...stripAnsi(line)].length).toBeLessThanOrEqual(60);
    }
    // The header is longer than 60 columns: it is cut, not wrapped.
    const header = stripAnsi(frames[0]!).split('\n')[0]!;
    expect(header.startsWith(`groupq monitor  ${queue}  PAUSED  `)).toBe(true);
    expect([...header]).toHaveLength(60);
    expect(header.endsWith('…')).toBe(true);
    expect(stripAnsi(frames[0]!)).not.toContain('late');
    const last = stripAnsi(frames.at(-1)!);
    expect(rowsByFirstCell(last).get('late')).toEqual(['late', expect.any(String), '1', '0/1']);
    expect(text.endsWith(`${ESC}?25h`)).toBe(true);

    // Stopped means stopped: nothing is written afterwards.
    const length = stdout.text.length;
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(stdout.text.length).toBe(length);
  });

  test('a terminal shorter than the frame gets the frame cut to its height, so it never scrolls', async () => {
    const queue = uniqueQueue('cli-monitor-short');
    await pausedQueue(suite.worker, queue);
    const stdout = new Collector({ isTTY: true, columns: 80, rows: 8 });
    const monitor = startMonitor([queue, '--interval', '100'], stdout);
    await stdout.until((text) => count(text, `${ESC}H`) >= 2);
    monitor.stop();
    expect(await monitor.done).toBe(0);
    for (const frame of stdout.text.split(`${ESC}H`).slice(1)) {
      // rows - 1 lines: the cursor's line after the last one stays on screen too.
      expect(count(frame, '\n')).toBe(7);
      expect(stripAnsi(frame)).toMatch(/^groupq monitor /);
    }
  });

  test('with --json each refresh is one JSON line', async () => {
    const queue = uniqueQueue('cli-monitor-json');
    await pausedQueue(suite.worker, queue);
    const stdout = new Collector({ isTTY: true });
    const monitor = startMonitor([queue, '--json', '--interval', '100'], stdout);
    await stdout.until((text) => count(text, '\n') >= 3);
    monitor.stop();
    expect(await monitor.done).toBe(0);
    expect(stdout.text).not.toContain('\x1b');
    const lines = stdout.text.trimEnd().split('\n').map((line) => JSON.parse(line));
    for (const line of lines) expect(line).toMatchObject({ queue, paused: true, counts: { waiting: 0 }, groups: [] });
    expect(lines[1].at).toBeGreaterThanOrEqual(lines[0].at);
  });

  test('not on a terminal, frames follow one another; a failed refresh keeps the last frame and says why', async () => {
    const queue = uniqueQueue('cli-monitor-plain');
    await pausedQueue(suite.worker, queue);
    const stdout = new Collector();
    const monitor = startMonitor([queue, '--interval', '100'], stdout);
    await stdout.until((text) => count(text, 'groupq monitor') >= 2);

    expect((await suite.worker.api(`/v1/queues/${queue}`, { method: 'DELETE' })).status).toBe(204);
    await stdout.until((text) => text.includes('! refresh failed'));
    monitor.stop();
    expect(await monitor.done).toBe(0);

    expect(stdout.text).not.toContain('\x1b');
    expect(stdout.text).toMatch(/\n! refresh failed at \d\d:\d\d:\d\d: QUEUE_NOT_FOUND: queue not found \(showing the last good frame\)\n/);
    // Frames are separated by a blank line.
    expect(stdout.text).toMatch(/\n\ngroupq monitor /);
  });
});
