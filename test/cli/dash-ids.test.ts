// Ids led by '-' on the command line, against the real Worker, in-process through
// main(argv, io) as the other CLI files run it. groupq makes no such id (test/protocol/ids.test.ts),
// but a producer may give one: `groupq job orders -lxi…` reads `-l` as a flag and says where
// the id goes; after `--` it is an argument, for every command that takes ids, and flags given
// before `--` still count.
import { describe, expect, test } from 'vitest';
import { enqueue, expectJson, pausedQueue, uniqueQueue } from '../http/support';
import { cli, json, useCliSuite } from './support';

const suite = useCliSuite();

const stateOf = async (queue: string, id: string) =>
  (await expectJson<{ state: string }>(await suite.worker.api(`/v1/queues/${queue}/jobs/${encodeURIComponent(id)}`), 200)).state;

describe("an id led by '-'", () => {
  test('enqueue --id=-… gives it; job reads it after "--", and without "--" says to put it there', async () => {
    const queue = uniqueQueue('cli-dash');
    await pausedQueue(suite.worker, queue);
    const id = '-lxi4TqW0aPzR4kTc';

    const given = await cli(['enqueue', queue, '--group', 'user:42', `--id=${id}`, '--data', '{"n":1}'], suite.env);
    expect(given).toEqual({ code: 0, stdout: `${id} waiting\n`, stderr: '' });

    const bare = await cli(['job', queue, id], suite.env);
    expect(bare).toMatchObject({ code: 2, stdout: '' });
    expect(bare.stderr).toMatch(/^groupq: unknown option '-l' \(an argument led by "-" goes after "--": groupq job \[flags\] -- <queue> <id>\)\n/);

    const ended = await cli(['job', queue, '--', id], suite.env);
    expect(ended).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(ended.stdout)).toMatchObject({ id, group: 'user:42', state: 'waiting', data: { n: 1 } });

    // Flags before "--" are flags; the queue may follow it too.
    const machine = await cli(['--json', 'job', '--', queue, id], suite.env);
    expect(machine.code).toBe(0);
    expect(json(machine)).toMatchObject({ id, state: 'waiting' });

    // After "--", "--json" is an id like any other: not found, and not answered as JSON.
    const notFlag = await cli(['job', queue, '--', '--json'], suite.env);
    expect(notFlag).toMatchObject({ code: 1, stdout: '' });
    expect(notFlag.stderr).toMatch(/^groupq: JOB_NOT_FOUND/);
  });

  test('cancel, promote and remove take such ids after "--", several at once', async () => {
    const queue = uniqueQueue('cli-dash');
    await pausedQueue(suite.worker, queue);
    const [a, b, later] = ['-a1', '--b2', '-later'];
    for (const id of [a, b]) await enqueue(suite.worker, queue, { group: 'g', id, data: null });
    await enqueue(suite.worker, queue, { group: 'g', id: later, data: null, delayMs: 600_000 });

    const promoted = await cli(['promote', queue, '--', later], suite.env);
    expect(promoted).toMatchObject({ code: 0, stderr: '' });
    expect(await stateOf(queue, later)).toBe('waiting');

    const cancelled = await cli(['cancel', queue, '--', a, b], suite.env);
    expect(cancelled).toMatchObject({ code: 0, stderr: '' });
    expect([await stateOf(queue, a), await stateOf(queue, b)]).toEqual(['cancelled', 'cancelled']);

    const removed = await cli(['remove', queue, '--json', '--', a, b, later], suite.env);
    expect(removed).toMatchObject({ code: 0, stderr: '' });
    for (const id of [a, b, later]) expect((await suite.worker.api(`/v1/queues/${queue}/jobs/${encodeURIComponent(id)}`)).status).toBe(404);
  });

  test('the help says where such an id goes', async () => {
    expect((await cli(['--help'], {})).stdout).toContain('"--" ends the flags');
    expect((await cli(['job', '--help'], {})).stdout).toContain('"--" ends the flags');
    expect((await cli(['queues', '--help'], {})).stdout).not.toContain('"--" ends the flags'); // it takes no argument
  });
});
