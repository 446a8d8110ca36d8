// The bundle holds each script once, without comments, but keeps every source line on its own
// line, so the line Redis names in a script error (`user_script:LINE`) leads back to the file
// and line under src/lua. The errors here are Redis' own, from bundled scripts run on records a
// test corrupted on purpose: once through the bridge as Upstash runs scripts, once on a plain Redis.
import { readFileSync, readdirSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { startBridge } from '../../scripts/rest-bridge.mjs';
import { createEngine } from '../../src/core/engine';
import { queueKeys } from '../../src/core/store/keys';
import { createRedis } from '../../src/core/store/redis';
import { sourceLineOf, sourceOf } from '../../src/core/store/scripts';
import { luaIncludes, scripts } from '../../src/lua/scripts.generated';
import { QueueError } from '../../src/protocol/errors';
import { createQueue, testEngine } from '../helpers/engine';
import { adminClient, stack } from '../helpers/stack';

const sourceLine = (where: string) => {
  const [, file, line] = /^src\/lua\/(.+):(\d+)$/.exec(where) ?? [];
  return readFileSync(`src/lua/${file}`, 'utf8').split('\n')[Number(line) - 1];
};
const squeezed = (line: string) => line.replace(/\s+/g, '');

describe('the bundle', () => {
  it('holds each include once, and no comment or indentation', () => {
    const files = readdirSync('src/lua/includes').filter((f) => f.endsWith('.lua'));
    expect(Object.keys(luaIncludes).sort()).toEqual(files.map((f) => f.replace(/\.lua$/, '')).sort());
    for (const text of [...Object.values(scripts).map((s) => s.text), ...Object.values(luaIncludes)]) {
      for (const line of text.split('\n')) {
        expect(line).not.toMatch(/^(\s|--)/);
        expect(line).not.toMatch(/\s$/);
      }
    }
  });

  // Minifying takes out comments and spaces only: what is left of a line is the start of the
  // source line it maps to, spaces aside.
  it.each(Object.values(scripts))('$name: each line Redis runs is the code of the source line it maps to', (script) => {
    const lines = sourceOf(script, true).split('\n');
    lines.forEach((line, index) => {
      const where = sourceLineOf(script, index + 1);
      expect(where, `line ${index + 1}`).toMatch(/^src\/lua\/(includes\/)?[\w-]+\.lua:\d+$/);
      expect(squeezed(sourceLine(where!) ?? '').startsWith(squeezed(line)), `${where}: ${line}`).toBe(true);
    });
    expect(sourceLineOf(script, 1)).toBe(`src/lua/${script.name}.lua:1`);
    expect(sourceLineOf(script, lines.length + 1)).toBeNull();
  });
});

describe('a script error', () => {
  const admin = adminClient();
  afterAll(() => admin.close());

  /** The INTERNAL error `promise` fails with, and the source line its cause names. */
  async function located(promise: Promise<unknown>) {
    const error = await promise.then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(QueueError);
    expect((error as QueueError).code).toBe('INTERNAL');
    expect((error as QueueError).message).toBe('internal error');
    const cause = String((error as { cause?: unknown }).cause);
    const [, where, redisLine] = /^Error: get-job \((src\/lua\/[^)]+)\): .*user_script:(\d+)\b/.exec(cause) ?? [];
    expect(where, cause).toBeDefined();
    expect(sourceLineOf(scripts.getJob, Number(redisLine))).toBe(where);
    return { cause, where: where!, line: sourceLine(where!) ?? '' };
  }

  it("in the script's own code names its file and line (through the bridge, as Upstash runs it)", async () => {
    const engine = testEngine();
    const queue = await createQueue(engine);
    // A job record is '<state JSON>\n<data>': without a newline, decoding it fails in Lua.
    await admin.call(['HSET', queueKeys(queue).jobs, 'broken', '{}']);
    const { cause, where, line } = await located(engine.getJob(queue, 'broken'));
    expect(cause).toMatch(/attempt to perform arithmetic on .*nl/);
    expect(where).toMatch(/^src\/lua\/includes\/job\.lua:\d+$/);
    expect(line).toMatch(/nl - 1/);
    expect(cause).not.toContain('broken');
    await engine.deleteQueue(queue);
  });

  it('in a redis.call names the line of that call (a plain Redis, the script without the flag)', async () => {
    const plain = await startBridge({ port: 0, redisPort: stack().redisPort, token: 'plain', mode: 'plain' });
    try {
      const engine = createEngine({ redis: createRedis({ url: plain.url, token: 'plain' }), keyLocking: false, allowHttpLoopback: true });
      const queue = await createQueue(engine);
      await admin.call(['SET', queueKeys(queue).jobs, 'not a hash']);
      const { cause, line } = await located(engine.getJob(queue, 'some-id'));
      expect(cause).toMatch(/^Error: get-job \(src\/lua\/.*\): WRONGTYPE/);
      expect(line).toMatch(/redis\.call\('HGET'/);
      await admin.call(['DEL', queueKeys(queue).jobs]);
      await engine.deleteQueue(queue);
    } finally {
      await plain.close();
    }
  });
});
