// The generated bundle is what Workers run: it must match the .lua sources, and each
// precomputed SHA-1 must be the one Redis computes, or EVALSHA would always miss. Every script
// carries Upstash's allow-key-locking flag (without it Upstash runs it under its global lock).
import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { LuaStatus } from '../../src/core/store/refusals';
import { sourceOf } from '../../src/core/store/scripts';
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

  // Each check, on a copy of src/lua changed in one place: the build names what disagrees.
  describe('refuses sources that disagree', () => {
    const build = (file: string, from: string, to: string): string => {
      const dir = mkdtempSync(join(tmpdir(), 'groupq-lua-'));
      try {
        cpSync('src/lua', dir, { recursive: true });
        const source = readFileSync(join(dir, file), 'utf8');
        expect(source).toContain(from);
        writeFileSync(join(dir, file), source.replace(from, to));
        execFileSync('node', ['scripts/build-lua.mjs', '--dir', dir], { stdio: 'pipe' });
        return 'built';
      } catch (error) {
        return String((error as { stderr?: Buffer }).stderr);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    };

    it('an include that calls functions of one it does not include', () => {
      expect(build('includes/flow.lua', '-- @include meta\n', '')).toContain(
        'includes/flow.lua: uses metaGet of includes/meta.lua without `-- @include meta`',
      );
    });

    it('a script that calls functions of an include it does not include', () => {
      expect(build('get-job.lua', '-- @include view\n', '\n')).toContain('get-job.lua: uses loadJob of includes/view.lua without `-- @include view`');
    });

    it('an include cycle', () => {
      expect(build('includes/job.lua', '\n\n', '\n-- @include finish\n\n')).toMatch(/include cycle: job -> finish -> job/);
    });

    it('a key bound to a name its header gives another key', () => {
      expect(build('get-job.lua', 'local K = { jobs = KEYS[2], active = KEYS[3] }', 'local K = { jobs = KEYS[3], active = KEYS[2] }')).toContain(
        'get-job.lua: jobs = KEYS[3], which the header names active',
      );
      expect(build('delete-repeat.lua', 'local metaKey, repeatsKey,', 'local repeatsKey, metaKey,')).toContain(
        'delete-repeat.lua: repeatsKey = KEYS[1], which the header names meta',
      );
    });

    it('a key past the header', () => {
      expect(build('get-job.lua', "redis.call('HGET', KEYS[4]", "redis.call('HGET', KEYS[5]")).toContain('get-job.lua: KEYS[5], but the header lists 4 keys');
      expect(build('get-job.lua', "redis.call('HGET', KEYS[4]", "redis.call('HGET', KEYS[3 + 1]")).toContain(
        'get-job.lua: KEYS[3 + 1] with no per-item key (KEYS[n+i]) in the header',
      );
    });

    it('an include that reads KEYS', () => {
      expect(build('includes/view.lua', '\nlocal function ', '\nlocal first = KEYS[1]\nlocal function ')).toContain(
        'includes/view.lua: an include gets its keys from the script, not KEYS',
      );
    });
  });

  it('names each refusal status as src/protocol/errors.ts does', () => {
    const lua = readFileSync('src/lua/includes/errors.lua', 'utf8');
    const named = Object.fromEntries([...lua.matchAll(/^local (\w+) = (-\d+)/gm)].map(([, name, status]) => [name, Number(status)]));
    expect(named).toEqual(LuaStatus);
  });

  // redis-server itself refuses the flag: the flagged source goes through the bridge, which
  // answers as Upstash would, and the plain one (GROUPQ_SCRIPT_KEY_LOCKING=false) straight to Redis.
  it.each(Object.values(scripts))('$name: SCRIPT LOAD returns the precomputed SHA-1s', async (script) => {
    expect(await restRedis().scriptLoad(sourceOf(script, true))).toBe(script.sha1);
    expect(String(await admin.call(['SCRIPT', 'LOAD', sourceOf(script, false)]))).toBe(script.plainSha1);
  });

  // One copy of each script, built into either form when it is sent: they differ in the first
  // line only, so Redis numbers their lines alike.
  it.each(Object.values(scripts))('$name: both forms differ in the shebang line only', (script) => {
    const [flagged, plain] = [sourceOf(script, true).split('\n'), sourceOf(script, false).split('\n')];
    expect(flagged[0]).toBe(readFileSync(`src/lua/${script.name}.lua`, 'utf8').split('\n')[0]);
    expect(plain[0]).toBe(script.flags.length > 0 ? `#!lua flags=${script.flags.join(',')}` : '');
    expect(plain.slice(1)).toEqual(flagged.slice(1));
    expect(plain.length).toBeGreaterThan(1);
  });
});
