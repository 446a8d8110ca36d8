// The generated bundle is what Workers run: it must match the .lua sources, and each
// precomputed SHA-1 must be the one Redis computes, or EVALSHA would always miss. Every script
// carries Upstash's allow-key-locking flag (without it Upstash runs it under its global lock).
import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { LuaStatus } from '../../src/core/store/refusals';
import { scripts } from '../../src/lua/scripts.generated';
import { adminClient, restRedis } from '../helpers/stack';

describe('the Lua bundle', () => {
  const admin = adminClient();
  afterAll(() => admin.close());

  it('is up to date with src/lua (regenerating changes nothing)', () => {
    expect(() => execFileSync('node', ['scripts/build-lua.mjs', '--check'], { stdio: 'pipe' })).not.toThrow();
  });

  it('has one entry per script file, each with a header', () => {
    const files = readdirSync('src/lua').filter((f) => f.endsWith('.lua'));
    expect(Object.values(scripts).map((s) => `${s.name}.lua`).sort()).toEqual(files.sort());
    for (const file of files) {
      const source = readFileSync(`src/lua/${file}`, 'utf8');
      expect(source, file).toMatch(/^#!lua flags=(no-writes,)?allow-key-locking\n/);
      expect(source.split('\n')[1]!.startsWith(`--[[ ${file.replace(/\.lua$/, '')}: `), file).toBe(true);
      for (const section of ['KEYS[1]', 'Returns']) expect(source, `${file} header`).toContain(section);
    }
  });

  it('names each refusal status as src/protocol/errors.ts does', () => {
    const lua = readFileSync('src/lua/includes/errors.lua', 'utf8');
    const named = Object.fromEntries([...lua.matchAll(/^local (\w+) = (-\d+)/gm)].map(([, name, status]) => [name, Number(status)]));
    expect(named).toEqual(LuaStatus);
  });

  // redis-server itself refuses the flag: the flagged source goes through the bridge, which
  // answers as Upstash would, and the plain one (GROUPQ_SCRIPT_KEY_LOCKING=false) straight to Redis.
  it.each(Object.values(scripts))('$name: SCRIPT LOAD returns the precomputed SHA-1s', async (script) => {
    expect(await restRedis().scriptLoad(script.source)).toBe(script.sha1);
    expect(String(await admin.call(['SCRIPT', 'LOAD', script.plainSource]))).toBe(script.plainSha1);
  });
});
