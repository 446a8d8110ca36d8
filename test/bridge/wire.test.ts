// The bridge's exact wire format (what Upstash answers), checked with raw fetch.
import { describe, expect, it } from 'vitest';
import { freePort } from '../../scripts/redis-server.mjs';
import { startBridge } from '../../scripts/rest-bridge.mjs';
import { stack, testKeys } from '../helpers/stack';

const { key, admin } = testKeys('test:wire');

const b64 = (text: string | Buffer) => Buffer.from(text).toString('base64');

async function post(
  path: string,
  body: unknown,
  { base64 = false, token = stack().restToken, url = stack().restUrl }: { base64?: boolean; token?: string | null; url?: string } = {},
) {
  const headers: Record<string, string> = { 'Content-Type': 'application/json' };
  if (token !== null) headers.Authorization = `Bearer ${token}`;
  if (base64) headers['Upstash-Encoding'] = 'base64';
  const res = await fetch(`${url}${path}`, {
    method: 'POST',
    headers,
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: res.status, type: res.headers.get('content-type'), json: (await res.json()) as unknown };
}

describe('POST /', () => {
  it('answers plain UTF-8 strings without the encoding header', async () => {
    expect(await post('/', ['SET', key(), 'héllo'])).toMatchObject({ status: 200, json: { result: 'OK' } });
    expect(await post('/', ['GET', key()])).toEqual({ status: 200, type: 'application/json', json: { result: 'héllo' } });
  });

  it('base64-encodes strings with Upstash-Encoding: base64, but not a top-level OK status', async () => {
    expect((await post('/', ['SET', key(), 'héllo'], { base64: true })).json).toEqual({ result: 'OK' });
    expect((await post('/', ['GET', key()], { base64: true })).json).toEqual({ result: b64('héllo') });
    expect((await post('/', ['PING'], { base64: true })).json).toEqual({ result: b64('PONG') });
  });

  it('base64-encodes every string inside nested arrays, leaving numbers and nulls alone', async () => {
    const script = `return {1, 'a', {false, 'b', {redis.status_reply('OK')}}}`;
    expect((await post('/', ['EVAL', script, '0'], { base64: true })).json).toEqual({
      result: [1, b64('a'), [null, b64('b'), [b64('OK')]]],
    });
    expect((await post('/', ['EVAL', script, '0'])).json).toEqual({ result: [1, 'a', [null, 'b', ['OK']]] });
  });

  it('returns binary values byte for byte in base64', async () => {
    const bytes = Buffer.from([0xff, 0x00, 0xfe, 0x80, 0x0a]);
    await admin.call(['SET', key(), bytes]);
    expect((await post('/', ['GET', key()], { base64: true })).json).toEqual({ result: bytes.toString('base64') });
  });

  it('accepts numbers and booleans as arguments', async () => {
    await post('/', ['SET', key(), 42]);
    expect((await post('/', ['INCRBY', key(), 8])).json).toEqual({ result: 50 });
    await post('/', ['SET', `${key()}:flag`, true]);
    expect((await post('/', ['GET', `${key()}:flag`])).json).toEqual({ result: 'true' });
  });

  it('answers a Redis error with 400 and {"error"}', async () => {
    const res = await post('/', ['GQNOSUCHCOMMAND', key()], { base64: true });
    expect(res.status).toBe(400);
    expect(res.json).toEqual({ error: expect.stringMatching(/^ERR unknown command 'GQNOSUCHCOMMAND'/) });
  });

  it('refuses commands that would change the shared connection', async () => {
    for (const command of [['MULTI'], ['SELECT', '1'], ['BLPOP', key(), '0'], ['SUBSCRIBE', key()]]) {
      const res = await post('/', command);
      expect(res.status).toBe(400);
      expect(res.json).toEqual({ error: expect.stringMatching(/^ERR Command is not available/) });
    }
    // The connection is still in its normal state.
    expect((await post('/', ['SET', key(), 'v'])).json).toEqual({ result: 'OK' });
  });
});

describe('POST /pipeline', () => {
  it('answers one {result} or {error} per command, in order', async () => {
    const res = await post('/pipeline', [['SET', key(), '1'], ['INCR', key()], ['LPUSH', key(), 'x'], ['GET', key()]], { base64: true });
    expect(res).toEqual({
      status: 200,
      type: 'application/json',
      json: [
        { result: 'OK' },
        { result: 2 },
        { error: 'WRONGTYPE Operation against a key holding the wrong kind of value' },
        { result: b64('2') },
      ],
    });
  });
});

describe('POST /multi-exec', () => {
  it('answers one {result} or {error} per command', async () => {
    const res = await post('/multi-exec', [['SET', key(), 'x'], ['INCR', key()], ['GET', key()]]);
    expect(res.json).toEqual([{ result: 'OK' }, { error: 'ERR value is not an integer or out of range' }, { result: 'x' }]);
  });

  it('discards the whole transaction when a command cannot be queued', async () => {
    const res = await post('/multi-exec', [['SET', key(), '1'], ['GQNOSUCHCOMMAND']]);
    expect(res.status).toBe(400);
    expect(res.json).toEqual({ error: expect.stringMatching(/^EXECABORT .*unknown command 'GQNOSUCHCOMMAND'/) });
    expect((await post('/', ['EXISTS', key()])).json).toEqual({ result: 0 });
  });
});

describe('requests the bridge refuses', () => {
  it('answers 401 {"error":"Unauthorized"} for a missing or wrong token', async () => {
    for (const token of [null, 'wrong', '']) {
      expect(await post('/', ['PING'], { token })).toEqual({
        status: 401,
        type: 'application/json',
        json: { error: 'Unauthorized' },
      });
    }
  });

  it('answers 400 for a body that is not JSON or not a command', async () => {
    const bad: [string, unknown][] = [
      ['/', '{not json'],
      ['/', {}],
      ['/', []],
      ['/', [['GET', key()]]],
      ['/', ['GET', { nested: true }]],
      ['/pipeline', ['GET', key()]],
      ['/pipeline', []],
      ['/multi-exec', [[]]],
    ];
    for (const [path, body] of bad) {
      const res = await post(path, body);
      expect({ path, body, status: res.status }).toEqual({ path, body, status: 400 });
      expect(res.json).toEqual({ error: expect.any(String) });
    }
  });

  it('answers 404 for an unknown path', async () => {
    expect((await post('/nope', ['PING'])).status).toBe(404);
  });

  it('answers 500 {"error"} when Redis is unreachable', async () => {
    const bridge = await startBridge({ port: 0, redisPort: await freePort(), token: 'down' });
    try {
      for (const [path, body] of [['/', ['PING']], ['/pipeline', [['PING']]], ['/multi-exec', [['PING']]]] as const) {
        const res = await post(path, body, { url: bridge.url, token: 'down' });
        expect(res.status).toBe(500);
        // Not dressed as a Redis error reply ("ERR ..."): clients tell script bugs apart by those.
        expect(res.json).toEqual({ error: expect.stringMatching(/^redis 127\.0\.0\.1:\d+: connection error \(.*ECONNREFUSED/) });
      }
    } finally {
      await bridge.close();
    }
  });
});
