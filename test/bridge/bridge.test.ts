// The local Upstash REST bridge, driven by the production @upstash/redis client exactly as the
// engine uses it: every reply must come back as it would from Upstash.
import { createHash, randomBytes } from 'node:crypto';
import { Redis } from '@upstash/redis';
import { describe, expect, it } from 'vitest';
import { freePort } from '../../scripts/redis-server.mjs';
import { startBridge } from '../../scripts/rest-bridge.mjs';
import { restRedis, stack, testKeys } from '../helpers/stack';

const redis = restRedis();
const { key } = testKeys('test:bridge');

describe('values', () => {
  it('round-trips ASCII, non-ASCII UTF-8 and empty strings', async () => {
    const text = 'żółć — 日本語 — 🚀';
    expect(await redis.set(key(), text)).toBe('OK');
    expect(await redis.get(key())).toBe(text);
    await redis.set(`${key()}:empty`, '');
    expect(await redis.get(`${key()}:empty`)).toBe('');
  });

  it('returns a bulk string "OK" and base64-looking strings unchanged', async () => {
    await redis.set(key(), 'OK');
    expect(await redis.get(key())).toBe('OK');
    await redis.set(`${key()}:b64`, 'T0s=');
    expect(await redis.get(`${key()}:b64`)).toBe('T0s=');
  });

  it('keeps numeric-looking strings as strings and integer replies as numbers', async () => {
    await redis.set(key(), '42');
    expect(await redis.get(key())).toBe('42');
    expect(await redis.incr(key())).toBe(43);
    expect(await redis.incrby(key(), -50)).toBe(-7);
  });

  it('returns null for a missing key or field', async () => {
    expect(await redis.get(`${key()}:missing`)).toBeNull();
    expect(await redis.hget(`${key()}:missing`, 'field')).toBeNull();
  });

  it('returns status replies other than OK as their text', async () => {
    await redis.set(key(), 'v');
    expect(await redis.ping()).toBe('PONG');
    expect(await redis.type(key())).toBe('string');
  });

  it('returns HGETALL as a flat array of fields and values', async () => {
    await redis.hset(key(), { a: '1', b: 'ü' });
    const flat = (await redis.hgetall(key())) as unknown;
    expect(flat).toEqual(['a', '1', 'b', 'ü']);
  });

  it('round-trips a 3 MB value', async () => {
    const big = randomBytes(1_500_000).toString('hex');
    await redis.set(key(), big);
    expect(await redis.get(key())).toBe(big);
  });
});

describe('Lua', () => {
  it('returns nested arrays with numbers, strings, statuses and nulls', async () => {
    const reply = await redis.eval(
      `return {1, 'two', {3, false, {'five', 'OK'}}, redis.status_reply('OK'), redis.status_reply('PONG'), ARGV[1]}`,
      [],
      ['ünïcode'],
    );
    expect(reply).toEqual([1, 'two', [3, null, ['five', 'OK']], 'OK', 'PONG', 'ünïcode']);
  });

  it('passes KEYS and ARGV through eval', async () => {
    const reply = await redis.eval(`redis.call('SET', KEYS[1], ARGV[1]); return redis.call('GET', KEYS[1])`, [key()], ['v1']);
    expect(reply).toBe('v1');
    expect(await redis.get(key())).toBe('v1');
  });

  it('scriptLoad returns the SHA-1 of the script and evalsha runs it', async () => {
    const script = `return {KEYS[1], ARGV[1], '${key()}'}`;
    const sha = await redis.scriptLoad(script);
    expect(sha).toBe(createHash('sha1').update(script).digest('hex'));
    expect(await redis.evalsha(sha, [key()], ['arg'])).toEqual([key(), 'arg', key()]);
  });

  it('rejects evalsha of an unknown script with NOSCRIPT', async () => {
    const sha = createHash('sha1').update(`never loaded ${key()}`).digest('hex');
    await expect(redis.evalsha(sha, [], [])).rejects.toThrow(/NOSCRIPT/);
  });

  it('lets createScript().exec fall back from EVALSHA to EVAL on NOSCRIPT', async () => {
    const script = redis.createScript<string>(`-- ${key()}\nreturn ARGV[1]`);
    expect(await script.exec([], ['fallback'])).toBe('fallback');
    // The EVAL cached the script: EVALSHA now works directly.
    expect(await script.evalsha([], ['cached'])).toBe('cached');
  });

  it('surfaces error replies from scripts with their message', async () => {
    await expect(redis.eval(`return redis.error_reply('GQ_CONFLICT stale lease')`, [], [])).rejects.toThrow(
      /GQ_CONFLICT stale lease/,
    );
  });
});

describe('errors', () => {
  it('rejects a command against the wrong type with the Redis message', async () => {
    await redis.set(key(), 'v');
    await expect(redis.lpush(key(), 'x')).rejects.toThrow(/WRONGTYPE Operation against a key holding the wrong kind of value/);
  });

  it('rejects an unknown command with the Redis message', async () => {
    await expect(redis.exec(['GQNOSUCHCOMMAND', key()])).rejects.toThrow(/ERR unknown command 'GQNOSUCHCOMMAND'/);
  });

  it('rejects with the Redis message when auto-pipelining is off (POST /)', async () => {
    const { restUrl, restToken } = stack();
    const direct = new Redis({ url: restUrl, token: restToken, automaticDeserialization: false, retry: false, enableAutoPipelining: false });
    await direct.set(key(), 'v');
    expect(await direct.get(key())).toBe('v');
    await expect(direct.incr(key())).rejects.toThrow(/ERR value is not an integer or out of range/);
  });

  it('rejects every command with Unauthorized for a wrong token', async () => {
    const { restUrl } = stack();
    const wrong = new Redis({ url: restUrl, token: 'not-the-token', automaticDeserialization: false, retry: false });
    await expect(wrong.get(key())).rejects.toThrow(/Unauthorized/);
  });

  it('fails with the bridge error when Redis is unreachable', async () => {
    const bridge = await startBridge({ port: 0, redisPort: await freePort(), token: 'down' });
    try {
      const down = new Redis({ url: bridge.url, token: 'down', automaticDeserialization: false, retry: false });
      await expect(down.get(key())).rejects.toThrow(/ECONNREFUSED/);
    } finally {
      await bridge.close();
    }
  });
});

describe('pipeline', () => {
  it('returns each result in order and runs the commands after a failing one', async () => {
    const results = await redis
      .pipeline()
      .set(key(), 'text')
      .incr(key())
      .get(key())
      .exec({ keepErrors: true });
    expect(results).toEqual([
      { result: 'OK', error: undefined },
      { result: undefined, error: 'ERR value is not an integer or out of range' },
      { result: 'text', error: undefined },
    ]);
  });

  it('rejects exec() naming the failing command', async () => {
    await redis.set(key(), 'text');
    await expect(redis.pipeline().get(key()).incr(key()).exec()).rejects.toThrow(
      'Command 2 [ incr ] failed: ERR value is not an integer or out of range',
    );
  });

  it('keeps replies apart across many concurrent pipelines', async () => {
    const runs = Array.from({ length: 50 }, (_, i) =>
      redis
        .pipeline()
        .set(`${key()}:${i}`, `value-${i}`)
        .get(`${key()}:${i}`)
        .eval(`return {ARGV[1], ARGV[1]}`, [], [String(i)])
        .exec(),
    );
    const results = await Promise.all(runs);
    results.forEach((result, i) => expect(result).toEqual(['OK', `value-${i}`, [String(i), String(i)]]));
  });
});

describe('multi-exec', () => {
  it('runs the commands as one transaction and returns each result', async () => {
    expect(await redis.multi().set(key(), '1').incr(key()).get(key()).exec()).toEqual(['OK', 2, '2']);
  });

  it('reports a runtime error in place and still applies the other commands', async () => {
    const results = await redis.multi().set(key(), 'x').incr(key()).set(`${key()}:after`, 'y').exec({ keepErrors: true });
    expect(results.map((r) => r.error)).toEqual([undefined, 'ERR value is not an integer or out of range', undefined]);
    expect(await redis.get(`${key()}:after`)).toBe('y');
  });

  it('is isolated from concurrent requests', async () => {
    await redis.set(key(), '0');
    const transactions = Array.from({ length: 40 }, () => redis.multi().incr(key()).get(key()).incr(key()).get(key()).exec());
    const singles = Array.from({ length: 40 }, () => redis.incr(key()));
    const [txResults] = await Promise.all([Promise.all(transactions), Promise.all(singles)]);
    for (const [first, firstRead, second, secondRead] of txResults as [number, string, number, string][]) {
      // No other INCR may land between the transaction's commands.
      expect(firstRead).toBe(String(first));
      expect(second).toBe(first + 1);
      expect(secondRead).toBe(String(second));
    }
    expect(await redis.get(key())).toBe(String(40 * 2 + 40));
  });
});
