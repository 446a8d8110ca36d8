// The Node server's Redis client over TCP (src/server/redis-tcp.ts) against real redis-servers:
// it answers every call the engine makes exactly as @upstash/redis does over REST (so the engine,
// its NOSCRIPT fallback and its error mapping run on it unchanged), logs in and selects its
// database, survives a Redis that dies and comes back (calls waiting then fail, later calls
// succeed, subscriptions resume), and close() leaves nothing that keeps a process alive.
import { execFile, spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it, onTestFinished, vi } from 'vitest';
import { ensureProgram } from '../../scripts/debian-package.mjs';
import { ensureRedisServer, freePort, startRedis, type RedisServer } from '../../scripts/redis-server.mjs';
import { createRespClient } from '../../scripts/resp.mjs';
import { createEngine } from '../../src/core/engine';
import { asQueueError, redisMessageOf } from '../../src/core/store/redis';
import type { ScriptRunner } from '../../src/core/store/scripts';
import { scripts } from '../../src/lua/scripts.generated';
import { createTcpRedis, parseRedisUrl, type TcpRedis } from '../../src/server/redis-tcp';
import { type RespReply, RespError, createReplyParser, encodeCommand } from '../../src/server/resp';
import { createQueue, testClock, testEngine } from '../helpers/engine';
import { restRedis, stack, testKeys, uniqueName } from '../helpers/stack';

const run = promisify(execFile);

/** A client on the shared test stack's redis-server, closed when the test ends. */
function stackTcp(): TcpRedis {
  const tcp = createTcpRedis(`redis://127.0.0.1:${stack().redisPort}`);
  onTestFinished(() => tcp.close());
  return tcp;
}

/** A redis-server of the test's own on a fixed port (so it can restart there), stopped when the test ends. */
async function privateRedis(): Promise<{ port: number; server: () => RedisServer; restart(): Promise<void>; kill(): Promise<void> }> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'groupq-redis-tcp-'));
  const port = await freePort();
  let server = await startRedis({ port, dir, appendonly: false });
  onTestFinished(async () => {
    await server.stop();
    await rm(dir, { recursive: true, force: true });
  });
  return {
    port,
    server: () => server,
    restart: async () => {
      server = await startRedis({ port, dir, appendonly: false });
    },
    kill: async () => {
      server.process.kill('SIGKILL');
      await server.exited;
    },
  };
}

const children = mkdtemp(path.join(os.tmpdir(), 'groupq-redis-tcp-child-'));
afterAll(async () => rm(await children, { recursive: true, force: true }));

/**
 * Runs `source` (TypeScript that imports redis-tcp.ts as `createTcpRedis`) in a Node process of
 * its own and returns what it printed. A handle left open keeps it running past the test's timeout.
 */
async function runChild(name: string, source: string, args: string[], env: NodeJS.ProcessEnv = {}): Promise<string> {
  const entry = path.join(await children, `${name}.ts`);
  await writeFile(entry, `import { createTcpRedis } from ${JSON.stringify(path.resolve('src/server/redis-tcp.ts'))};\n${source}`);
  const { stdout } = await run(process.execPath, ['scripts/run-ts.mjs', entry, ...args], { env: { ...process.env, ...env } });
  return stdout.trim();
}

/** What a failed call rejected with, for assertions on its message and on how the engine judges it. */
async function failureOf(promise: Promise<unknown>): Promise<Error> {
  const error = await promise.then(
    () => null,
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(Error);
  return error as Error;
}

describe('RESP codec', () => {
  it('encodes a command as bulk strings of UTF-8 bytes', () => {
    expect(encodeCommand(['HGET', 'k', 'é']).toString('utf8')).toBe('*3\r\n$4\r\nHGET\r\n$1\r\nk\r\n$2\r\né\r\n');
  });

  it('parses replies split anywhere: nested arrays, nil, errors, empty and multi-byte bulk strings', () => {
    const wire = Buffer.from(
      '+OK\r\n-ERR wrong\r\n:42\r\n$-1\r\n*-1\r\n*0\r\n$0\r\n\r\n$6\r\nhé\r\nx\r\n' +
        '*3\r\n:1\r\n*2\r\n$1\r\na\r\n*1\r\n-NESTED oops\r\n$-1\r\n',
      'utf8',
    );
    const expected: RespReply[] = ['OK', new RespError('ERR wrong'), 42, null, null, [], '', 'hé\r\nx', [1, ['a', [new RespError('NESTED oops')]], null]];
    for (const size of [wire.length, 7, 1]) {
      const replies: RespReply[] = [];
      const push = createReplyParser((reply) => replies.push(reply));
      for (let at = 0; at < wire.length; at += size) push(wire.subarray(at, at + size));
      expect(replies, `chunks of ${size}`).toEqual(expected);
    }
  });

  it('refuses bytes that are not RESP', () => {
    expect(() => createReplyParser(() => undefined)(Buffer.from('HTTP/1.1 400\r\n'))).toThrow(/RESP protocol error/);
  });
});

describe('REDIS_URL', () => {
  it('reads host, port, TLS, login and database', () => {
    expect(parseRedisUrl('redis://cache.internal')).toEqual({ host: 'cache.internal', port: 6379, tls: false, username: '', password: '', db: 0 });
    expect(parseRedisUrl('rediss://app:p%40ss@[::1]:6380/3')).toEqual({ host: '::1', port: 6380, tls: true, username: 'app', password: 'p@ss', db: 3 });
    expect(parseRedisUrl('redis://:secret@10.0.0.5:7000')).toMatchObject({ username: '', password: 'secret', port: 7000 });
    expect(() => parseRedisUrl('https://eu1.upstash.io')).toThrow(/redis:\/\/ or rediss:\/\//);
    expect(() => parseRedisUrl('redis://h/x')).toThrow(/database number/);
  });
});

describe('the same replies as @upstash/redis over REST', () => {
  const { key, admin } = testKeys('redis-tcp');
  const rest = restRedis();

  /** Runs `call` through TCP and through REST, each on a key of its own, and expects the same reply. */
  async function same(call: (redis: ScriptRunner, key: string) => Promise<unknown>): Promise<unknown> {
    const tcp = stackTcp();
    const viaTcp = await call(tcp, `${key()}:tcp`);
    const viaRest = await call(rest, `${key()}:rest`);
    expect(viaTcp).toStrictEqual(viaRest);
    return viaTcp;
  }

  /** The error `call` rejects with through TCP and through REST: Redis' words alike, judged alike. */
  async function sameError(call: (redis: ScriptRunner, key: string) => Promise<unknown>): Promise<string> {
    const tcp = stackTcp();
    const viaTcp = await failureOf(call(tcp, `${key()}:tcp`));
    const viaRest = await failureOf(call(rest, `${key()}:rest`));
    expect(viaTcp.message).toBe(redisMessageOf(viaTcp)); // Redis' words, nothing before or after
    expect(redisMessageOf(viaTcp)).toBe(redisMessageOf(viaRest));
    expect(asQueueError(viaTcp).code).toBe(asQueueError(viaRest).code);
    return viaTcp.message;
  }

  it('script replies: nested tables, false and nil, integers, numeric strings, status replies', async () => {
    const evalOf = (text: string) => (redis: ScriptRunner, k: string) => redis.eval(text, [k], ['a1', '42']);
    expect(await same(evalOf("return {1, 'two', {3, {false, ARGV[2]}}, redis.status_reply('FINE'), 2.9, true, {}}"))).toEqual([
      1, 'two', [3, [null, '42']], 'FINE', 2, 1, [],
    ]);
    expect(await same(evalOf('return false'))).toBeNull();
    expect(await same(evalOf('return -7'))).toBe(-7);
    expect(await same(evalOf('return ARGV[2]'))).toBe('42');
    expect(await same(evalOf("return redis.call('HGET', KEYS[1], 'missing')"))).toBeNull();
    expect(await same(evalOf("return redis.call('SET', KEYS[1], ARGV[1])"))).toBe('OK');
    expect(await same(evalOf("return {1, redis.error_reply('NESTED oops')}"))).toEqual([1, 'NESTED oops']);
    // EVALSHA of a script EVAL loaded, with its arguments as @upstash/redis sends numbers.
    const sha = String(await admin.call(['SCRIPT', 'LOAD', 'return {KEYS[1] ~= nil, ARGV[1]}']));
    expect(await same((redis, k) => redis.evalsha(sha, [k], [1.5]))).toEqual([1, '1.5']);
  });

  it("errors carry Redis' own words: NOSCRIPT, a script's error with its line, an error reply, a wrong type", async () => {
    expect(await sameError((redis, k) => redis.evalsha('0'.repeat(40), [k], []))).toMatch(/^NOSCRIPT /);
    expect(await sameError((redis, k) => redis.eval("local x = 1\nerror('boom')", [k], []))).toMatch(/^ERR user_script:2: boom /);
    expect(await sameError((redis, k) => redis.eval("return redis.error_reply('BUSYGROUP taken')", [k], []))).toBe('BUSYGROUP taken');
    const wrongType = await sameError(async (redis, k) => {
      await redis.zadd(k, { score: 1, member: 'm' });
      return redis.eval("return redis.call('HGET', KEYS[1], 'f')", [k], []);
    });
    expect(wrongType).toMatch(/^WRONGTYPE /);
  });

  it('zadd, zrange (by rank, by score, limits, scores), zrem and hget as the engine calls them', async () => {
    const replies = await same(async (redis, k) => {
      const added = [
        await redis.zadd(k, { score: 1, member: 'a' }),
        await redis.zadd(k, { score: 2, member: 'b' }, { score: 2.5, member: 'c' }),
        await redis.zadd(k, { score: 9, member: 'a' }), // an update adds nothing
        await redis.zadd(k, { lt: true }, { score: 5, member: 'a' }), // lowers a's score only
        await redis.zadd(k, { lt: true }, { score: 7, member: 'a' }), // not lower: unchanged
      ];
      const ranges = [
        await redis.zrange(k, 0, -1),
        await redis.zrange(k, 0, 0, { withScores: true }),
        await redis.zrange(k, '(2', '+inf', { byScore: true, offset: 0, count: 1, withScores: true }),
        await redis.zrange(k, '-inf', 2.5, { byScore: true, offset: 0, count: 10 }),
        await redis.zrange(`${k}:none`, 0, 0, { withScores: true }),
      ];
      const removed = [await redis.zrem(k, 'b', 'zz'), await redis.zrem(k, 'zz')];
      await redis.eval("return redis.call('HSET', KEYS[1], 'n', '42')", [`${k}:h`], []);
      const fields = [await redis.hget(`${k}:h`, 'n'), await redis.hget(`${k}:h`, 'missing'), await redis.hget(`${k}:none`, 'n')];
      return { added, ranges, removed, fields };
    });
    expect(replies).toEqual({
      added: [1, 2, 0, 0, 0],
      ranges: [['b', 'c', 'a'], ['b', '2'], ['c', '2.5'], ['b', 'c'], []],
      removed: [1, 0],
      fields: ['42', null, null],
    });
  });
});

describe('the engine over TCP', () => {
  it("runs a queue's round trip: enqueue, tick, reserve, complete; REST sees the same state", async () => {
    const clock = testClock();
    const engine = createEngine({ redis: stackTcp(), now: clock.now, allowHttpLoopback: true, keyLocking: false });
    const q = await createQueue(engine, { keepCompleted: 10 });
    onTestFinished(() => engine.deleteQueue(q));
    await engine.enqueue(q, { id: 'a', group: 'g', data: { n: 1 } });
    await engine.enqueue(q, { id: 'b', group: 'g', data: { n: 2 } });
    await engine.tick(q);
    const { jobs } = await engine.reserve(q, 6);
    expect(jobs.map((job) => [job.id, job.data])).toEqual([['a', { n: 1 }]]); // one lease per group
    const done = await engine.complete(q, { id: 'a', lease: jobs[0]!.lease.token }, 6);
    expect(done.next.map((job) => job.id)).toEqual(['b']);
    expect(await testEngine(clock).getJob(q, 'a')).toMatchObject({ state: 'completed', attempts: 1 });
    expect((await engine.getQueue(q)).counts).toMatchObject({ active: 1, completed: 1 });
  });

  it('falls back to EVAL after SCRIPT FLUSH, which loads the script again', async () => {
    const redis = await privateRedis();
    const admin = createRespClient({ port: redis.port });
    onTestFinished(() => admin.close());
    const tcp = createTcpRedis(`redis://127.0.0.1:${redis.port}`);
    onTestFinished(() => tcp.close());
    const engine = createEngine({ redis: tcp, now: testClock().now, allowHttpLoopback: true, keyLocking: false });
    const q = await createQueue(engine);
    await engine.enqueue(q, { id: 'a', group: 'g' });
    await admin.call(['SCRIPT', 'FLUSH']);
    expect(await admin.call(['SCRIPT', 'EXISTS', scripts.enqueue.plainSha1])).toEqual([0]);
    expect(await engine.enqueue(q, { id: 'b', group: 'g' })).toMatchObject({ id: 'b', state: 'waiting' });
    expect(await admin.call(['SCRIPT', 'EXISTS', scripts.enqueue.plainSha1])).toEqual([1]);
  });
});

describe('connections', () => {
  it('a killed redis-server fails the calls waiting on it; while down calls fail at once; once back the next call succeeds', async () => {
    const redis = await privateRedis();
    const tcp = createTcpRedis(`redis://127.0.0.1:${redis.port}`);
    onTestFinished(() => tcp.close());
    expect(await tcp.hget('h', 'f')).toBeNull(); // connected
    // The loop never answers; failureOf takes each failure as it comes.
    const waiting = [tcp.eval('while true do end', [], []), tcp.hget('h', 'f')].map(failureOf);
    await redis.kill();
    for (const failure of waiting) {
      const error = await failure;
      expect(error.message).toMatch(new RegExp(`^redis 127\\.0\\.0\\.1:${redis.port}: `));
      expect(asQueueError(error).code).toBe('REDIS_UNAVAILABLE');
    }
    expect((await failureOf(tcp.hget('h', 'f'))).message).toMatch(/ECONNREFUSED/);
    await redis.restart();
    expect(await tcp.hget('h', 'f')).toBeNull();
  });

  it('pipelines: concurrent calls get their own replies, a reply of many chunks arrives whole', async () => {
    const tcp = stackTcp();
    const calls = Array.from({ length: 300 }, (_, i) => tcp.eval('return ARGV[1]', [], [`n${i}`]));
    const big = tcp.eval("return string.rep('é', 300000)", [], []);
    expect(await Promise.all(calls)).toEqual(Array.from({ length: 300 }, (_, i) => `n${i}`));
    expect(await big).toBe('é'.repeat(300_000));
  });

  it('speaks TLS (rediss://): verifies the certificate, then works as over TCP', async () => {
    const dir = await children;
    const [cert, key] = [path.join(dir, 'cert.pem'), path.join(dir, 'key.pem')];
    const openssl = ensureProgram({ binary: 'openssl', pkg: 'openssl', hint: 'openssl not found: install it (Debian/Ubuntu: sudo apt-get install -y openssl) and retry' });
    await run(openssl, ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert, '-days', '1', '-subj', '/CN=groupq-test', '-addext', 'subjectAltName=IP:127.0.0.1']);
    const [port, tlsPort] = [await freePort(), await freePort()];
    const server = spawn(ensureRedisServer(), [
      '--port', String(port), '--tls-port', String(tlsPort), '--bind', '127.0.0.1', '--tls-cert-file', cert, '--tls-key-file', key,
      '--tls-auth-clients', 'no', '--save', '', '--appendonly', 'no', '--dir', dir,
    ], { stdio: 'ignore' });
    const exited = new Promise((resolve) => server.once('exit', resolve));
    onTestFinished(async () => {
      server.kill('SIGKILL');
      await exited;
    });
    const probe = createRespClient({ port });
    onTestFinished(() => probe.close());
    await vi.waitFor(() => probe.call(['PING']), { timeout: 15_000, interval: 50 });
    const url = `rediss://127.0.0.1:${tlsPort}`;
    // A certificate nobody vouches for is refused: this process does not trust it.
    const untrusted = createTcpRedis(url);
    onTestFinished(() => untrusted.close());
    const refused = await failureOf(untrusted.hget('h', 'f'));
    expect(refused.message).toMatch(/certificate/);
    expect(asQueueError(refused).code).toBe('REDIS_UNAVAILABLE');
    // A process that trusts it (NODE_EXTRA_CA_CERTS) runs commands and pub/sub over TLS.
    const source = `const tcp = createTcpRedis(process.argv[2]!);
const received: string[] = [];
await tcp.subscribe('tls', (message) => received.push(message));
const replies = [await tcp.zadd('k', { score: 1, member: 'm' }), await tcp.zrange('k', 0, -1, { withScores: true }), await tcp.publish('tls', 'sealed')];
while (received.length === 0) await new Promise((resolve) => setTimeout(resolve, 10));
await tcp.close();
console.log(JSON.stringify({ replies, received }));`;
    expect(JSON.parse(await runChild('tls', source, [url], { NODE_EXTRA_CA_CERTS: cert }))).toEqual({ replies: [1, ['m', '1'], 1], received: ['sealed'] });
  });

  it('a host that accepts but never completes the handshake fails the call after the connect timeout', async () => {
    const held: net.Socket[] = [];
    const silent = net.createServer((socket) => held.push(socket)); // TCP connects; TLS never starts
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    onTestFinished(async () => {
      for (const socket of held) socket.destroy();
      await new Promise((resolve) => silent.close(resolve));
    });
    const { port } = silent.address() as net.AddressInfo;
    const tcp = createTcpRedis(`rediss://127.0.0.1:${port}`, { connectTimeoutMs: 300 });
    onTestFinished(() => tcp.close());
    const error = await failureOf(tcp.hget('h', 'f'));
    expect(error.message).toMatch(/connect timed out after 300 ms/);
    expect(asQueueError(error).code).toBe('REDIS_UNAVAILABLE');
  });

  it('logs in with the password or user of the URL and selects its database; a wrong or missing login fails the call', async () => {
    const redis = await privateRedis();
    const admin = createRespClient({ port: redis.port });
    onTestFinished(() => admin.close());
    await admin.call(['CONFIG', 'SET', 'requirepass', 's3cret']); // admin's connection stays logged in
    await admin.call(['ACL', 'SETUSER', 'groupq', 'on', '>p@ss:word', '~*', '&*', '+@all']);
    const clients = {
      password: createTcpRedis(`redis://:s3cret@127.0.0.1:${redis.port}/2`),
      user: createTcpRedis(`redis://groupq:${encodeURIComponent('p@ss:word')}@127.0.0.1:${redis.port}`),
      wrong: createTcpRedis(`redis://:nope@127.0.0.1:${redis.port}`),
      none: createTcpRedis(`redis://127.0.0.1:${redis.port}`),
    };
    onTestFinished(() => Promise.all(Object.values(clients).map((each) => each.close())).then(() => undefined));
    expect(await clients.password.zadd('due', { score: 1, member: 'in-db-2' })).toBe(1);
    expect(await clients.user.zadd('due', { score: 1, member: 'in-db-0' })).toBe(1);
    await admin.call(['SELECT', '2']);
    expect((await admin.call(['ZRANGE', 'due', 0, -1])) as Buffer[]).toEqual([Buffer.from('in-db-2')]);
    const wrong = await failureOf(clients.wrong.hget('h', 'f'));
    expect(wrong.message).toMatch(/AUTH refused: WRONGPASS/);
    expect(asQueueError(wrong).code).toBe('REDIS_UNAVAILABLE');
    expect((await failureOf(clients.none.hget('h', 'f'))).message).toMatch(/^NOAUTH /);
    // The subscriber connection logs in too.
    const received: string[] = [];
    await clients.password.subscribe('ch', (message) => received.push(message));
    expect(await clients.user.publish('ch', 'hello')).toBe(1);
    await vi.waitFor(() => expect(received).toEqual(['hello']));
  });
});

describe('pub/sub', () => {
  it('delivers each published message, in order, to every handler of the channel', async () => {
    const tcp = stackTcp();
    const channel = uniqueName('redis-tcp-ch');
    const first: string[] = [];
    const second: string[] = [];
    await tcp.subscribe(channel, (message) => first.push(message));
    await tcp.subscribe(channel, (message) => second.push(message));
    expect(await tcp.publish(channel, 'one')).toBe(1); // one subscribed connection
    await tcp.publish(channel, '{"n":2,"s":"é✓"}');
    await vi.waitFor(() => expect(second).toHaveLength(2));
    expect(first).toEqual(['one', '{"n":2,"s":"é✓"}']);
    expect(second).toEqual(first);
  });

  it('subscribes again after the redis-server restarts', async () => {
    const redis = await privateRedis();
    const tcp = createTcpRedis(`redis://127.0.0.1:${redis.port}`);
    onTestFinished(() => tcp.close());
    const received: string[] = [];
    await tcp.subscribe('events', (message) => received.push(message));
    await tcp.publish('events', 'before');
    await vi.waitFor(() => expect(received).toEqual(['before']));
    await redis.kill();
    await redis.restart();
    // Messages published before the subscription is back are lost: publish until one arrives.
    await vi.waitFor(
      async () => {
        await tcp.publish('events', 'after');
        expect(received).toContain('after');
      },
      { timeout: 20_000, interval: 100 },
    );
  });
});

describe('close()', () => {
  it('fails the calls waiting and refuses new ones', async () => {
    const redis = await privateRedis();
    const tcp = createTcpRedis(`redis://127.0.0.1:${redis.port}`);
    await tcp.subscribe('ch', () => undefined);
    const waiting = failureOf(tcp.eval('while true do end', [], []));
    await tcp.close();
    expect((await waiting).message).toMatch(/client closed/);
    expect((await failureOf(tcp.hget('h', 'f'))).message).toMatch(/closed/);
    await failureOf(tcp.subscribe('ch', () => undefined));
    await redis.kill(); // the script still loops: stop() could not SHUTDOWN it
    await redis.restart();
  });

  it('lets the process exit: nothing it opened is left running', async () => {
    const source = `const tcp = createTcpRedis(process.argv[2]!);
await tcp.subscribe('groupq-close-exits', () => undefined);
await tcp.hget('groupq-close-exits', 'f');
await tcp.close();
console.log('closed');`;
    expect(await runChild('close-exits', source, [`redis://127.0.0.1:${stack().redisPort}`])).toBe('closed');
  });
});
