// Flagged scripts keep the SHA-1 their client computed (of the script with its flag): SCRIPT LOAD
// answers it, EVALSHA and SCRIPT EXISTS take it, and a script redis-server no longer holds is
// NOSCRIPT, so clients fall back to EVAL as they do against Upstash. Also: the pipeline and
// multi-exec routes, the commands counted by INFO commandstats, and the bridge's plain mode.
import { createHash } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { commandStats, diffCounts } from '../../bench/lib/redis-stats';
import { freePort, startRedis } from '../../scripts/redis-server.mjs';
import { createRespClient, type RespClient } from '../../scripts/resp.mjs';
import { startBridge } from '../../scripts/rest-bridge.mjs';
import { UNDECLARED_KEY_ERROR } from '../../scripts/upstash-scripts.mjs';
import { createRedis } from '../../src/core/store/redis';
import { runScript } from '../../src/core/store/scripts';
import { restRedis, stack, testKeys } from '../helpers/stack';

const redis = restRedis();
const { key, admin } = testKeys('test:key-locking-sha');

const FLAG = '#!lua flags=allow-key-locking\n';
const NOSCRIPT = 'NOSCRIPT No matching script. Please use EVAL.';
const sha1 = (text: string) => createHash('sha1').update(text).digest('hex');
/** A flagged script no other test sends. */
const flagged = (body: string) => `${FLAG}${body}\n-- ${key()}`;

async function post(route: string, body: unknown, { url = stack().restUrl, token = stack().restToken } = {}) {
  const res = await fetch(`${url}${route}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, json: (await res.json()) as unknown };
}

describe('SHA-1s as the client computes them', () => {
  it('SCRIPT LOAD answers the SHA-1 of the script sent; EVALSHA and SCRIPT EXISTS take it', async () => {
    const script = flagged(`return {KEYS[1], ARGV[1]}`);
    const sha = await redis.scriptLoad(script);
    expect(sha).toBe(sha1(script));
    expect(await redis.evalsha(sha, [key()], ['a'])).toEqual([key(), 'a']);
    expect(await redis.evalsha(sha.toUpperCase(), [key()], ['b'])).toEqual([key(), 'b']);
    expect(await redis.scriptExists(sha, sha1(`${script} never loaded`))).toEqual([1, 0]);
    // redis-server holds the rewritten script, under another SHA-1.
    expect(await admin.call(['SCRIPT', 'EXISTS', sha])).toEqual([0]);
  });

  it('EVALSHA of a flagged script the bridge never saw is NOSCRIPT', async () => {
    expect(await post('/', ['EVALSHA', sha1(flagged('return 1')), '0'])).toEqual({ status: 400, json: { error: NOSCRIPT } });
  });

  it("@upstash/redis' createScript falls back to EVAL, then runs by EVALSHA", async () => {
    const script = redis.createScript<string>(flagged(`return redis.call('SET', KEYS[1], ARGV[1])`));
    expect(await script.exec([key()], ['first'])).toBe('OK');
    expect(await script.evalsha([key()], ['second'])).toBe('OK');
    expect(String(await admin.call(['GET', key()]))).toBe('second');
  });
});

describe('pipeline and multi-exec', () => {
  it('/pipeline translates every command and answers each in place', async () => {
    const script = flagged(`return redis.call('SET', KEYS[1], ARGV[1])`);
    const bad = flagged(`return redis.call('SET', ARGV[1], 'x')`);
    const res = await post('/pipeline', [
      ['SCRIPT', 'LOAD', script],
      ['EVALSHA', sha1(script), '1', key(), 'v'],
      ['EVAL', bad, '1', key(), `${key()}:other`],
      ['SCRIPT', 'EXISTS', sha1(script), sha1(bad)],
      ['GET', key()],
    ]);
    expect(res).toEqual({
      status: 200,
      json: [
        { result: sha1(script) },
        { result: 'OK' },
        { error: expect.stringContaining(`${UNDECLARED_KEY_ERROR}: SET touches '${key()}:other'`) },
        { result: [1, 1] },
        { result: 'v' },
      ],
    });
    expect(await admin.call(['EXISTS', `${key()}:other`])).toBe(0);
  });

  it('/multi-exec translates every command of the transaction', async () => {
    const script = flagged(`return redis.call('INCR', KEYS[1])`);
    const bad = flagged(`return redis.call('INCR', ARGV[1])`);
    const res = await post('/multi-exec', [
      ['EVAL', script, '1', key()],
      ['EVAL', bad, '1', key(), `${key()}:other`],
      ['EVALSHA', sha1(script), '1', key()],
      ['GET', key()],
    ]);
    expect(res.json).toEqual([
      { result: 1 },
      { error: expect.stringContaining(`${UNDECLARED_KEY_ERROR}: INCR touches '${key()}:other'`) },
      { result: 2 },
      { result: '2' },
    ]);
    expect(await redis.multi().eval(script, [key()], []).get(key()).exec()).toEqual([3, '3']);
  });
});

describe('a Redis of its own', () => {
  let dir: string;
  let server: Awaited<ReturnType<typeof startRedis>>;
  let bridge: Awaited<ReturnType<typeof startBridge>>;
  let raw: RespClient;
  const token = 'own-redis';
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'groupq-key-locking-'));
    server = await startRedis({ port: await freePort(), dir, appendonly: false });
    bridge = await startBridge({ port: 0, redisPort: server.port, token });
    raw = createRespClient({ port: server.port });
  });
  afterAll(async () => {
    raw?.close();
    await bridge?.close();
    await server?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('after SCRIPT FLUSH EVALSHA is NOSCRIPT, and the engine falls back to EVAL', async () => {
    const own = createRedis({ url: bridge.url, token });
    const text = `\nreturn {0, redis.call('INCR', KEYS[1])}`; // the first line left empty for the shebang
    const script = { name: 'counter', keys: [], keyPerItem: null, flags: [], text, sha1: sha1(`${FLAG.trimEnd()}${text}`), plainSha1: sha1(text) };
    expect(await runScript(own, script, ['n'], [])).toEqual([0, 1]);
    expect(await own.evalsha(script.sha1, ['n'], [])).toEqual([0, 2]);
    await raw.call(['SCRIPT', 'FLUSH']);
    expect(await post('/', ['EVALSHA', script.sha1, '1', 'n'], { url: bridge.url, token })).toEqual({
      status: 400,
      json: { error: NOSCRIPT },
    });
    expect(await runScript(own, script, ['n'], [])).toEqual([0, 3]);
    expect(await own.evalsha(script.sha1, ['n'], [])).toEqual([0, 4]);
  });

  it('the key check runs no command of its own: INFO commandstats counts what the script calls', async () => {
    const own = createRedis({ url: bridge.url, token });
    const source = `${FLAG}redis.call('SET', KEYS[1], '1'); redis.call('INCR', KEYS[1]); redis.call('ZADD', ARGV[1], 1, 'm'); return redis.call('GET', KEYS[1])`;
    const sha = await own.scriptLoad(source);
    const before = await commandStats(raw);
    expect(await own.evalsha(sha, ['s', 'z'], ['z'])).toBe('2');
    await expect(own.evalsha(sha, ['s'], ['z'])).rejects.toThrow(UNDECLARED_KEY_ERROR);
    const counts = diffCounts(before, await commandStats(raw));
    // The second call ran SET and INCR, then was refused at ZADD before it reached Redis.
    expect(counts).toEqual({ evalsha: 2, set: 2, incr: 2, zadd: 1, get: 1 });
  });
});

describe('plain mode', () => {
  it('passes scripts through untouched: redis-server refuses the flag, runs the rest unchecked', async () => {
    const plain = await startBridge({ port: 0, redisPort: stack().redisPort, token: 'plain', mode: 'plain' });
    try {
      expect(plain.mode).toBe('plain');
      const options = { url: plain.url, token: 'plain' };
      const script = flagged('return 1');
      for (const command of [['EVAL', script, '0'], ['SCRIPT', 'LOAD', script]]) {
        expect(await post('/', command, options)).toEqual({
          status: 400,
          json: { error: expect.stringMatching(/^ERR Unexpected flag in script shebang: allow-key-locking/) },
        });
      }
      const unflagged = `redis.call('SET', ARGV[1], 'x'); return redis.call('GET', ARGV[1])\n-- ${key()}`;
      expect(await post('/', ['EVAL', unflagged, '0', `${key()}:plain`], options)).toEqual({ status: 200, json: { result: 'x' } });
      expect(await post('/', ['SCRIPT', 'LOAD', unflagged], options)).toEqual({ status: 200, json: { result: sha1(unflagged) } });
    } finally {
      await plain.close();
    }
  });
});
