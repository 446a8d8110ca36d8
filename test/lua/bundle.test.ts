// The generated bundle is what Workers run: it must match the .lua sources, and each
// precomputed SHA-1 must be the one Redis computes, or EVALSHA would always miss.
import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { scripts } from '../../src/lua/scripts.generated';
import { adminClient } from '../helpers/stack';

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
      expect(source.startsWith(`--[[ ${file.replace(/\.lua$/, '')}: `), file).toBe(true);
      for (const section of ['KEYS[1]', 'Returns']) expect(source, `${file} header`).toContain(section);
    }
  });

  it.each(Object.values(scripts))('$name: SCRIPT LOAD returns the precomputed SHA-1', async (script) => {
    const sha = await admin.call(['SCRIPT', 'LOAD', script.source]);
    expect(String(sha)).toBe(script.sha1);
  });
});
