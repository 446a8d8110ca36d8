// The raw RESP client and the redis-server lifecycle the local stack relies on, including a
// Redis restart under a running bridge.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Redis } from '@upstash/redis';
import { describe, expect, it } from 'vitest';
import { createRespClient, RespError, Status } from '../../scripts/resp.mjs';
import { freePort, startRedis } from '../../scripts/redis-server.mjs';
import { startBridge } from '../../scripts/rest-bridge.mjs';
import { testKeys } from '../helpers/stack';

const { key, admin: client } = testKeys('test:resp');

describe('RESP client', () => {
  it('tells a status OK from a bulk string "OK"', async () => {
    const status = await client.call(['SET', key(), 'OK']);
    expect(status).toBeInstanceOf(Status);
    expect(String(status)).toBe('OK');
    expect(await client.call(['GET', key()])).toEqual(Buffer.from('OK'));
  });

  it('returns integers as numbers, nil as null and nested arrays as arrays', async () => {
    expect(await client.call(['INCRBY', key(), 5])).toBe(5);
    expect(await client.call(['GET', `${key()}:missing`])).toBeNull();
    expect(await client.call(['EVAL', `return {1, {'a', false}, 'b'}`, 0])).toEqual([1, [Buffer.from('a'), null], Buffer.from('b')]);
  });

  it('sends and returns binary data unchanged', async () => {
    const bytes = Buffer.from([0, 13, 10, 255, 36, 42]);
    await client.call(['SET', key(), bytes]);
    expect(await client.call(['GET', key()])).toEqual(bytes);
  });

  it('rejects call() with a RespError and returns errors in place in a pipeline', async () => {
    await client.call(['SET', key(), 'text']);
    await expect(client.call(['INCR', key()])).rejects.toBeInstanceOf(RespError);
    await expect(client.call(['INCR', key()])).rejects.toThrow('ERR value is not an integer or out of range');
    const [first, second, third] = await client.pipeline([['GET', key()], ['INCR', key()], ['STRLEN', key()]]);
    expect(first).toEqual(Buffer.from('text'));
    expect(second).toBeInstanceOf(RespError);
    expect(third).toBe(4);
  });

  it('matches many pipelined replies to their commands, including large ones', async () => {
    const big = Buffer.alloc(2_000_000, 'x');
    const commands = Array.from({ length: 500 }, (_, i) => (i === 250 ? ['SET', `${key()}:big`, big] : ['ECHO', `m${i}`]));
    const replies = await client.pipeline([...commands, ['GET', `${key()}:big`]]);
    replies.slice(0, 500).forEach((reply, i) => expect(reply).toEqual(i === 250 ? new Status('OK') : Buffer.from(`m${i}`)));
    expect(Buffer.isBuffer(replies[500]) && replies[500].equals(big)).toBe(true);
  });

  it('assembles a large array reply that arrives in many chunks', async () => {
    const reply = await client.call(['EVAL', `local t = {} for i = 1, 100000 do t[i] = 'v' .. i end return t`, 0]);
    expect(Array.isArray(reply) && reply.length).toBe(100_000);
    expect((reply as Buffer[])[99_999]).toEqual(Buffer.from('v100000'));
  });
});

describe('redis-server lifecycle', () => {
  it('rejects pending commands on connection loss, then reconnects after a restart with its data', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'groupq-test-restart-'));
    const port = await freePort();
    let redis = await startRedis({ port, dir });
    const raw = createRespClient({ port });
    const bridge = await startBridge({ port: 0, redisPort: port, token: 'restart' });
    const rest = new Redis({ url: bridge.url, token: 'restart', automaticDeserialization: false, retry: false });
    try {
      await rest.set('persisted', 'before restart');
      const blocked = raw.call(['BLPOP', 'never-pushed', 0]).then(
        () => new Error('BLPOP returned'),
        (err: unknown) => err,
      );
      await redis.stop();
      expect(await blocked).toBeInstanceOf(Error);
      expect(String(await blocked)).toMatch(new RegExp(`redis 127\\.0\\.0\\.1:${port}: connection (lost|error)`));
      expect(await redis.exited).toEqual({ code: 0, signal: null });
      await expect(rest.get('persisted')).rejects.toThrow(/ECONNREFUSED/);

      redis = await startRedis({ port, dir });
      // The append-only file brought the data back; both clients reconnect on their next call.
      expect(await rest.get('persisted')).toBe('before restart');
      expect(await raw.call(['GET', 'persisted'])).toEqual(Buffer.from('before restart'));
    } finally {
      raw.close();
      await bridge.close();
      await redis.stop();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('refuses to report ready when another server holds the port', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'groupq-test-busy-'));
    const first = await startRedis({ port: await freePort(), dir: path.join(dir, 'a') });
    try {
      await expect(startRedis({ port: first.port, dir: path.join(dir, 'b') })).rejects.toThrow(
        new RegExp(`redis-server on port ${first.port} exited during startup`),
      );
    } finally {
      await first.stop();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('stops with a clean exit', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'groupq-test-stop-'));
    const redis = await startRedis({ port: await freePort(), dir, appendonly: false });
    await redis.stop();
    expect(await redis.exited).toEqual({ code: 0, signal: null });
    await redis.stop(); // idempotent
    await rm(dir, { recursive: true, force: true });
  });
});
