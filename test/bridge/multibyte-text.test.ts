// Multi-byte and 4-byte characters go through every path that stores, cuts or returns text,
// through the real bridge: job data and groups, results, errors, the history's cut error (at a
// byte count, in Lua) and a delivery's truncated result (at a byte count, in the Worker), each
// coming back whole, with no U+FFFD: every cut lands on a character's start.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { deliver } from '../../src/core/push/delivery';
import { createSigners } from '../../src/core/push/signing';
import { MAX_RESULT_BYTES } from '../../src/protocol/constants';
import { textHead, wholeUtf8 } from '../../src/protocol/encoding';
import { setupQueue } from '../helpers/engine';
import { restRedis } from '../helpers/stack';

/** Two, three and four bytes in UTF-8 (the emoji is a surrogate pair in UTF-16). */
const MIXED = 'é漢😀';
const SECRET = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
const bytesOf = (text: string) => Buffer.byteLength(text, 'utf8');

const servers: http.Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

/** A real HTTP server answering every request with `answer`; `heard` keeps each request's headers. */
async function serve(answer: (res: http.ServerResponse) => void) {
  const heard: http.IncomingHttpHeaders[] = [];
  const server = http.createServer((req, res) => {
    heard.push(req.headers);
    req.resume();
    req.on('end', () => answer(res));
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, heard };
}

describe('multi-byte replies', () => {
  it('a script reply carries multi-byte strings exactly, nested too', async () => {
    const text = `${MIXED}\u0000\n"\\${'😀'.repeat(1000)}`;
    const reply = await restRedis().eval('return {ARGV[1], {ARGV[1], 1}}', [], [text]);
    expect(reply).toEqual([text, [text, 1]]);
  });
});

describe('text through the engine', () => {
  it('data, group, result and error come back exactly', async () => {
    const { engine, q } = await setupQueue({ keepCompleted: 10, keepFailed: 10, maxAttempts: 1 });
    const data = { s: MIXED, list: ['😀', { k: '漢字' }], n: 1 };
    const group = `g-${MIXED}`;
    await engine.enqueue(q, { id: 'a', group, data });
    await engine.enqueue(q, { id: 'b', group: 'other', data: MIXED });
    const { jobs } = await engine.reserve(q, 2);
    expect(jobs.map((job) => [job.id, job.group, job.data])).toEqual([
      ['a', group, data],
      ['b', 'other', MIXED],
    ]);
    const [a, b] = jobs;
    const error = `${MIXED} went wrong`;
    await engine.settle(
      q,
      [
        { kind: 'complete', id: a!.id, lease: a!.lease.token, result: { r: MIXED } },
        { kind: 'fail', id: b!.id, lease: b!.lease.token, error },
      ],
      0,
    );
    expect(await engine.getJob(q, 'a')).toMatchObject({ state: 'completed', group, data, result: { r: MIXED } });
    expect(await engine.getJob(q, 'b')).toMatchObject({ state: 'failed', error, history: [{ error }] });
  });

  it("the history's error is cut at a character's start, the job's error kept whole", async () => {
    const { engine, q } = await setupQueue({ keepFailed: 10, maxAttempts: 1 });
    // 1 + 4n bytes: a cut at 500 bytes falls inside an emoji.
    const error = `x${'😀'.repeat(200)}`;
    await engine.enqueue(q, { id: 'j', group: 'g' });
    const [job] = (await engine.reserve(q, 1)).jobs;
    await engine.settle(q, [{ kind: 'fail', id: 'j', lease: job!.lease.token, error }], 0);
    const failed = await engine.getJob(q, 'j');
    expect(failed.error).toBe(error);
    const cut = failed.history![0]!.error!;
    expect(cut).toBe(`x${'😀'.repeat(124)}`);
    expect(bytesOf(cut)).toBe(497);
  });

  it("a truncated result keeps whole characters: the endpoint's first 64 KiB, less the split one", async () => {
    const body = `ab${'😀'.repeat(20_000)}`; // 2 + 4n bytes: the 64 KiB cut falls inside an emoji
    const endpoint = await serve((res) => res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' }).end(body));
    const { engine, q } = await setupQueue({ keepCompleted: 10 });
    await engine.enqueue(q, { id: 'j', group: 'g', data: MIXED });
    const [job] = (await engine.reserve(q, 1)).jobs;
    const options = { signers: createSigners([SECRET]), publicUrl: 'http://127.0.0.1:9', now: Date.now, allowHttpLoopback: true };
    const settlement = await deliver(job!, { endpoint: `${endpoint.url}/jobs` }, options);
    expect(settlement).toMatchObject({ kind: 'complete', resultTruncated: true });
    await engine.settle(q, [settlement!], 0);
    const done = await engine.getJob(q, 'j');
    const kept = (MAX_RESULT_BYTES - 2) / 4;
    expect(done.result).toBe(`ab${'😀'.repeat(Math.floor(kept))}`);
    expect(done.resultTruncated).toBe(true);
    expect(String(done.result).includes('\uFFFD')).toBe(false);
  });
});

describe('cutting text', () => {
  it('textHead never splits a surrogate pair', () => {
    expect(textHead('a😀b', 2)).toBe('a');
    expect(textHead('a😀b', 3)).toBe('a😀');
    expect(textHead('abc', 5)).toBe('abc');
  });

  it('wholeUtf8 drops only a last character the cut left incomplete', () => {
    const bytes = Buffer.from(`a${MIXED}`);
    const heads = Array.from({ length: bytes.length + 1 }, (_, n) => Buffer.from(wholeUtf8(bytes.subarray(0, n))).toString());
    expect(heads).toEqual(['', 'a', 'a', 'aé', 'aé', 'aé', 'aé漢', 'aé漢', 'aé漢', 'aé漢', `a${MIXED}`]);
  });
});
