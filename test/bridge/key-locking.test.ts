// The bridge runs scripts by Upstash's rules (its default mode): a script whose shebang carries
// `allow-key-locking` is accepted (redis-server alone refuses the flag) and may touch only the
// keys in KEYS; a script without the flag runs unchecked. Driven by the production client and
// raw fetch, against the real redis-server of the test stack.
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { bridgeModeFromEnv } from '../../scripts/rest-bridge.mjs';
import { stripKeyLockingFlag, UNDECLARED_KEY_ERROR } from '../../scripts/upstash-scripts.mjs';
import { QueueError } from '../../src/protocol/errors';
import { runScript, sourceOf } from '../../src/core/store/scripts';
import { scripts } from '../../src/lua/scripts.generated';
import { restRedis, stack, testKeys } from '../helpers/stack';

const redis = restRedis();
const { key, admin } = testKeys('test:key-locking');

const FLAG = '#!lua flags=allow-key-locking\n';
const READ_ONLY = '#!lua flags=no-writes,allow-key-locking\n';
const sha1 = (text: string) => createHash('sha1').update(text).digest('hex');
/** A script no other test sends (scripts are cached by their SHA-1 on the shared Redis). */
const unique = (body: string) => `${body}\n-- ${key()}`;
const undeclared = (command: string, touched: string) =>
  `${UNDECLARED_KEY_ERROR}: ${command} touches '${touched}', which is not in KEYS`;

describe('the flag', () => {
  it('is accepted, and a script touching only its KEYS runs', async () => {
    const script = `${FLAG}redis.call('SET', KEYS[1], ARGV[1]); redis.call('HSET', KEYS[2], 'f', ARGV[1]); return {redis.call('GET', KEYS[1]), redis.call('HGET', KEYS[2], 'f')}`;
    expect(await redis.eval(unique(script), [key(), `${key()}:h`], ['v'])).toEqual(['v', 'v']);
    expect(String(await admin.call(['GET', key()]))).toBe('v');
  });

  it('refuses an undeclared key with Upstash error, naming the script by the client SHA-1, and writes nothing', async () => {
    const other = `${key()}:other`;
    const script = unique(`${FLAG}redis.call('SET', KEYS[1] .. ':other', 'x'); return 1`);
    const error = (await redis.eval(script, [key()], []).catch((e: unknown) => e)) as Error;
    expect(error.message).toContain(`${undeclared('SET', other)} script: ${sha1(script)}, on @user_script:2.`);
    expect(await admin.call(['EXISTS', other])).toBe(0);
  });

  it('is INTERNAL for the engine (a script error, not Redis being down)', async () => {
    const source = unique(`${FLAG}redis.call('INCR', ARGV[1]); return {0}`);
    const text = source.slice(FLAG.length - 1); // the first line left empty for the shebang
    const script = { name: 'undeclared', keys: [], keyPerItem: null, flags: [], text, sha1: sha1(source), plainSha1: sha1(text) };
    const error = await runScript(redis, script, [key()], [`${key()}:counter`]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(QueueError);
    expect((error as QueueError).code).toBe('INTERNAL');
    expect(String((error as { cause?: unknown }).cause)).toContain(UNDECLARED_KEY_ERROR);
    expect(await admin.call(['EXISTS', `${key()}:counter`])).toBe(0);
  });

  it('finds the keys of multi-key commands, keyword keys and subcommands', async () => {
    const [a, b, c] = [`${key()}:a`, `${key()}:b`, `${key()}:c`];
    const run = (call: string, keys: string[]) => redis.eval(unique(`${FLAG}return ${call}`), keys, [a, b, c]);
    expect(await run(`redis.call('MSET', KEYS[1], '1', KEYS[2], '2')`, [a, b])).toBe('OK');
    await expect(run(`redis.call('MSET', KEYS[1], '1', ARGV[3], '3')`, [a, b])).rejects.toThrow(undeclared('MSET', c));
    await expect(run(`redis.call('ZUNIONSTORE', KEYS[1], 2, KEYS[2], ARGV[3])`, [a, b])).rejects.toThrow(undeclared('ZUNIONSTORE', c));
    await expect(run(`redis.call('EXISTS', KEYS[1], ARGV[3])`, [a])).rejects.toThrow(undeclared('EXISTS', c));
    await expect(run(`redis.call('XREAD', 'COUNT', 1, 'STREAMS', KEYS[1], ARGV[3], '0', '0')`, [a])).rejects.toThrow(undeclared('XREAD', c));
    expect(await run(`redis.call('OBJECT', 'ENCODING', KEYS[1])`, [a])).toBe('int');
    await expect(run(`redis.call('object', 'encoding', ARGV[3])`, [a])).rejects.toThrow(undeclared('OBJECT|ENCODING', c));
    await expect(run(`redis.call('SORT', KEYS[1], 'STORE', ARGV[3])`, [a])).rejects.toThrow(undeclared('SORT', c));
    // ARGV that are not keys (values, fields, members) are not checked.
    expect(await run(`redis.call('HSET', KEYS[3], ARGV[1], ARGV[2])`, [a, b, c])).toBe(1);
    expect(await admin.call(['EXISTS', c])).toBe(1);
  });

  it('judges by the KEYS the call declared, not by what the script writes into KEYS', async () => {
    const script = unique(`${FLAG}KEYS[2] = ARGV[1]; return redis.call('SET', KEYS[2], 'x')`);
    await expect(redis.eval(script, [key()], [`${key()}:smuggled`])).rejects.toThrow(undeclared('SET', `${key()}:smuggled`));
    expect(await admin.call(['EXISTS', `${key()}:smuggled`])).toBe(0);
  });

  it('refuses commands that need the whole keyspace', async () => {
    for (const call of [`redis.call('KEYS', '*')`, `redis.call('SCAN', 0)`, `redis.call('DBSIZE')`]) {
      await expect(redis.eval(unique(`${FLAG}return ${call}`), [key()], [])).rejects.toThrow(
        /ERR Commands whose keys cannot be declared in KEYS are not allowed in Lua scripts when 'allow-key-locking' flag is set: (KEYS|SCAN|DBSIZE)/,
      );
    }
  });

  it('makes redis.pcall return the refusal as an error reply instead of raising it', async () => {
    const script = unique(`${FLAG}local reply = redis.pcall('GET', ARGV[1]); return {reply.err, redis.call('SET', KEYS[1], 'after')}`);
    expect(await redis.eval(script, [key()], [`${key()}:other`])).toEqual([undeclared('GET', `${key()}:other`), 'OK']);
  });

  it('keeps the line numbers of the script in its errors', async () => {
    const script = unique(`${FLAG}local a = 1\nlocal b = 2\nreturn undefined_global.x`);
    await expect(redis.eval(script, [], [])).rejects.toThrow(/user_script:4: Script attempted to access nonexistent global variable 'undefined_global'/);
    await expect(redis.eval(unique(`${FLAG}\n\nreturn )`), [], [])).rejects.toThrow(/Error compiling script .*user_script:4:/);
  });

  it('with no-writes: reads run, writes are refused (EVAL and EVAL_RO)', async () => {
    await admin.call(['SET', key(), 'stored']);
    expect(await redis.eval(unique(`${READ_ONLY}return redis.call('GET', KEYS[1])`), [key()], [])).toBe('stored');
    expect(await redis.evalRo(unique(`${READ_ONLY}return redis.call('GET', KEYS[1])`), [key()], [])).toBe('stored');
    await expect(redis.eval(unique(`${READ_ONLY}return redis.call('SET', KEYS[1], 'x')`), [key()], [])).rejects.toThrow(
      /ERR Write commands are not allowed from read-only scripts/,
    );
    await expect(redis.eval(unique(`${READ_ONLY}return redis.call('GET', ARGV[1])`), [key()], ['elsewhere'])).rejects.toThrow(
      undeclared('GET', 'elsewhere'),
    );
    expect(String(await admin.call(['GET', key()]))).toBe('stored');
  });

  it('without the flag a script runs unchecked (under Upstash global lock)', async () => {
    const script = unique(`redis.call('SET', ARGV[1], 'x'); return redis.call('GET', ARGV[1])`);
    expect(await redis.eval(script, [], [`${key()}:free`])).toBe('x');
  });
});

describe("groupq's own scripts", () => {
  it.each(Object.values(scripts))('$name compiles with the key check in front of it', async (script) => {
    // The check adds locals and makes `redis` an upvalue: no script may hit Lua's limits.
    const source = sourceOf(script, true);
    expect(await redis.scriptLoad(source)).toBe(sha1(source));
  });
});

describe('the shebang the bridge sends to redis-server', () => {
  it('drops only allow-key-locking, keeping #!lua and the other flags', () => {
    const strip = (source: string) => {
      const stripped = stripKeyLockingFlag(source);
      return stripped && stripped.shebang + stripped.rest;
    };
    expect(strip('#!lua flags=allow-key-locking\nreturn 1')).toBe('#!lua\nreturn 1');
    expect(strip('#!lua flags=no-writes,allow-key-locking\nreturn 1')).toBe('#!lua flags=no-writes\nreturn 1');
    expect(strip('#!lua flags=allow-key-locking,no-writes\r\nreturn 1')).toBe('#!lua flags=no-writes\nreturn 1');
    expect(strip('#!lua   flags=allow-key-locking  \nreturn 1')).toBe('#!lua\nreturn 1');
    for (const untouched of ['#!lua flags=no-writes\nreturn 1', 'return 1', '\n#!lua flags=allow-key-locking\nreturn 1', '#!lua flags=allow-key-locking']) {
      expect(stripKeyLockingFlag(untouched)).toBeNull();
    }
  });
});

describe('GROUPQ_BRIDGE_MODE', () => {
  it('is upstash by default, plain on request, and nothing else', () => {
    expect(bridgeModeFromEnv({})).toBe('upstash');
    expect(bridgeModeFromEnv({ GROUPQ_BRIDGE_MODE: '' })).toBe('upstash');
    expect(bridgeModeFromEnv({ GROUPQ_BRIDGE_MODE: 'plain' })).toBe('plain');
    expect(() => bridgeModeFromEnv({ GROUPQ_BRIDGE_MODE: 'Plain' })).toThrow(/GROUPQ_BRIDGE_MODE must be upstash or plain, got "Plain"/);
  });

  it('the test stack bridge runs in the default mode', async () => {
    // What every other suite relies on: a flagged script is accepted there.
    const res = await fetch(stack().restUrl, {
      method: 'POST',
      headers: { authorization: `Bearer ${stack().restToken}` },
      body: JSON.stringify(['EVAL', unique(`${FLAG}return 'accepted'`), '0']),
    });
    expect(await res.json()).toEqual({ result: 'accepted' });
  });
});
