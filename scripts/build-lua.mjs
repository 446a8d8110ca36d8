#!/usr/bin/env node
// Bundles src/lua/*.lua into src/lua/scripts.generated.ts for Workers (no filesystem there).
// `-- @include name` names src/lua/includes/name.lua, so shared helpers have one source.
//
// The bundle holds each script and each include once, comments out, indentation and every
// space Lua does not need out, but every source line on its own line (an include line becomes
// `@name`). When a script is sent, sourceOf (src/core/store/scripts.ts) expands its includes in
// place, each once, where first named, and writes the shebang on the empty first line: with
// Upstash's `allow-key-locking` flag, or without it for a plain Redis (which refuses the flag),
// so Redis numbers the lines of both forms alike. Both SHA-1s are precomputed here from the
// same expansion (the client calls EVALSHA first and falls back to EVAL on NOSCRIPT;
// test/lua/bundle.test.ts has Redis compute them). Since line n of a file in the bundle is line
// n of the file, the expansion itself maps the line of a script error (`user_script:LINE`) back
// to its file and line under src/lua (sourceLineOf); no line map is stored. Minifying is
// checked here too: it must leave every line count and every Lua token as it was.
//
// What the build refuses:
//  - an include's functions called by a script or include that does not include it, directly
//    or through the includes it includes: each file declares what it uses, and since an
//    include's own `-- @include` lines come first, what it uses is defined above it (Lua binds
//    a name to a local only below the `local`; above it, the name is a global, which Redis
//    refuses when that line runs). An include cycle too.
//  - a script whose body and header disagree on its keys. The KEYS a script takes are read from
//    its header (`KEYS[i]  name  ...`; `KEYS[n+i]  name` for one key per item), so their order
//    is written once: src/core/store/scripts.ts builds the KEYS array from these names. The body
//    binds each key to a name (`jobs = KEYS[2]` in a table, `local metaKey = KEYS[1]`): that
//    name must be the header's name at that position in camelCase, optionally with `Key` after
//    it. A bare `KEYS[n]` must be within the header's fixed keys, a computed `KEYS[x + i]` needs
//    a per-item key in the header, and includes get their keys from the script (no `KEYS[`).
//  - a refusal returned as a bare negative number, not by the name includes/errors.lua gives
//    its status, or a status named above `-- @include errors`.
// Each key name is emitted as a literal type, so src/core/store/replies.ts cannot leave a script
// without a reply schema. `--check` fails when the generated file is stale (CI runs it).
// test/lua/bundle.test.ts breaks a copy of the sources in each of these ways.
import { createHash } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeOrCheck } from './generated-file.mjs';
import { codeOf, minify, tokensOf } from './lua-text.mjs';

// `--dir <path>` reads (and writes) another copy of src/lua: the tests break one on purpose.
const dirAt = process.argv.indexOf('--dir');
const luaDir = dirAt > 0 ? process.argv[dirAt + 1] : join(dirname(fileURLToPath(import.meta.url)), '..', 'src', 'lua');
const outFile = join(luaDir, 'scripts.generated.ts');
const FLAG = 'allow-key-locking';
const INCLUDE = /^-- @include (\S+)\s*$/;

const read = (file) => readFileSync(join(luaDir, file), 'utf8');
const fail = (message) => {
  throw new Error(message);
};
// Disagreements found by the checks, all reported at once before anything is written.
const problems = [];

// ---- includes ----

const includeNames = readdirSync(join(luaDir, 'includes'))
  .filter((f) => f.endsWith('.lua'))
  .map((f) => f.replace(/\.lua$/, ''));

/** Names a file declares local anywhere (its own, shadowing any include's). */
function localsOf(code) {
  const names = new Set();
  const add = (list) => list.split(',').forEach((name) => name.trim() && names.add(name.trim()));
  for (const [, name] of code.matchAll(/\blocal\s+function\s+(\w+)/g)) names.add(name);
  for (const [, list] of code.matchAll(/\blocal\s+(?!function\b)(\w+(?:\s*,\s*\w+)*)/g)) add(list);
  for (const [, list] of code.matchAll(/\bfunction\b[\s\w.:]*\(([^)]*)\)/g)) add(list.replace('...', ''));
  for (const [, list] of code.matchAll(/\bfor\s+(\w+(?:\s*,\s*\w+)*)\s+(?:=|in)\b/g)) add(list);
  return names;
}

const includes = new Map(
  includeNames.map((name) => {
    const file = `includes/${name}.lua`;
    const source = read(file);
    const code = codeOf(source, file);
    const defines = new Set();
    for (const [, fn] of code.matchAll(/^local\s+function\s+(\w+)/gm)) defines.add(fn);
    for (const [, list] of code.matchAll(/^local\s+(?!function\b)(\w+(?:\s*,\s*\w+)*)/gm)) list.split(',').forEach((n) => defines.add(n.trim()));
    return [name, { file, source, uses: [...source.matchAll(new RegExp(INCLUDE, 'gm'))].map((m) => m[1]), defines }];
  }),
);

const definedBy = new Map();
for (const [name, { defines }] of includes) {
  for (const fn of defines) {
    if (definedBy.has(fn)) fail(`includes/${name}.lua and includes/${definedBy.get(fn)}.lua both define ${fn}`);
    definedBy.set(fn, name);
  }
}

/** The includes `uses` brings in, directly or through theirs. */
function closureOf(uses, into = new Set()) {
  for (const name of uses) {
    if (into.has(name)) continue;
    if (!includes.has(name)) fail(`no include named ${name}`);
    into.add(name);
    closureOf(includes.get(name).uses, into);
  }
  return into;
}

/** Every name of an include that `file` reads must come from an include it includes. */
function checkDependencies(file, source, own) {
  const code = codeOf(source, file);
  const mine = localsOf(code);
  const reachable = closureOf([...source.matchAll(new RegExp(INCLUDE, 'gm'))].map((m) => m[1]));
  for (const [, name] of code.matchAll(/(?<![.:\w])([A-Za-z_]\w*)(?!\s*=[^=])/g)) {
    const from = definedBy.get(name);
    if (!from || from === own || mine.has(name) || reachable.has(from)) continue;
    problems.push(`${file}: uses ${name} of includes/${from}.lua without \`-- @include ${from}\` (here or in what it includes)`);
    reachable.add(from);
  }
}

for (const [name, { file, source }] of includes) {
  if (/\bKEYS\s*\[/.test(codeOf(source, file))) fail(`${file}: an include gets its keys from the script, not KEYS`);
  checkDependencies(file, source, name);
}

/** Fails on an include cycle: a file above the include that uses it cannot call it. */
function checkCycles(name, stack = []) {
  if (stack.includes(name)) fail(`include cycle: ${[...stack.slice(stack.indexOf(name)), name].join(' -> ')}`);
  for (const used of includes.get(name).uses) checkCycles(used, [...stack, name]);
}
for (const name of includes.keys()) checkCycles(name);

// ---- keys ----

/** KEYS names from the header, in order, and the name of the per-item key if any. */
function keysOf(source, file) {
  const fixed = [];
  let each = null;
  for (const [, position, plus, name] of source.matchAll(/^KEYS\[(\d+)(\+i)?\]\s+(\S+)/gm)) {
    if (plus) each = name;
    else if (Number(position) === fixed.length + 1) fixed.push(name);
    else fail(`${file}: KEYS[${position}] out of order`);
  }
  return { fixed, each };
}

const camel = (name) => name.replace(/\.lua$/, '').replace(/[-:](\w)/g, (_, c) => c.toUpperCase());

/** Top-level comma split (commas inside brackets stay). */
function splitList(text) {
  const parts = [''];
  let depth = 0;
  for (const c of text) {
    if ('([{'.includes(c)) depth++;
    if (')]}'.includes(c)) depth--;
    if (c === ',' && depth === 0) parts.push('');
    else parts[parts.length - 1] += c;
  }
  return parts.map((part) => part.trim());
}

/** The body's use of KEYS against the header's names (see the top of this file). */
function checkKeys(source, file, { fixed, each }) {
  const named = (name, n) => {
    const header = fixed[n - 1];
    if (header && name !== camel(header) && name !== `${camel(header)}Key`) problems.push(`${file}: ${name} = KEYS[${n}], which the header names ${header}`);
  };
  // `local a, b = KEYS[1], x` pairs by position; then every `name = KEYS[n]` left (table fields, one local).
  const code = codeOf(source, file).replace(/\blocal\s+(\w+(?:\s*,\s*\w+)+)\s*=\s*([^\n]+)/g, (statement, names, values) => {
    const list = splitList(values);
    splitList(names).forEach((name, i) => {
      const key = /^KEYS\[(\d+)\]$/.exec(list[i] ?? '');
      if (key) named(name, Number(key[1]));
    });
    return statement.replace(/\w+\s*=/, '=');
  });
  for (const [, name, n] of code.matchAll(/(\w+)\s*=\s*KEYS\[(\d+)\]/g)) named(name, Number(n));
  for (const [, index] of code.matchAll(/\bKEYS\[([^\]]*)\]/g)) {
    if (/^\d+$/.test(index)) {
      if (Number(index) > fixed.length) problems.push(`${file}: KEYS[${index}], but the header lists ${fixed.length} keys`);
    } else if (!each) {
      problems.push(`${file}: KEYS[${index}] with no per-item key (KEYS[n+i]) in the header`);
    }
  }
}

// ---- statuses ----

const STATUSES = [...read('includes/errors.lua').matchAll(/^local (\w+) = -\d+/gm)].map((m) => m[1]);

/**
 * Refusals by name only, and each name declared before its first use: Lua compiles a name it
 * has not seen as a global, which Redis refuses only when that line runs.
 */
function checkStatuses(code, file) {
  if (/\{\s*-\d/.test(code)) fail(`${file}: return a status by its name (includes/errors.lua), not a bare number`);
  const included = code.search(/^local QUEUE_NOT_FOUND\s*=/m);
  const before = included < 0 ? code : code.slice(0, included);
  const early = STATUSES.find((name) => new RegExp(`\\b${name}\\b`).test(before));
  if (early) fail(`${file}: ${early} used before \`-- @include errors\``);
}

// ---- the bundle ----

const sha1 = (text) => createHash('sha1').update(text).digest('hex');

/** The shebang sourceOf writes on the empty first line (src/core/store/scripts.ts). */
const shebangOf = (flags) => (flags.length > 0 ? `#!lua flags=${flags.join(',')}` : '');

/**
 * A file as the bundle holds it: minified line for line (so its line n is the file's line n), an
 * include line as `@name`, the shebang line empty, trailing empty lines cut.
 */
function compact(file, source) {
  const lines = source.trimEnd().split('\n');
  const marks = lines.map((line) => INCLUDE.exec(line)?.[1]);
  const blanked = lines.map((line, i) => (marks[i] || (i === 0 && line.startsWith('#!')) ? '' : line));
  const code = minify(blanked.join('\n'), file).split('\n');
  if (code.length !== lines.length) fail(`${file}: minifying changed the line count`);
  if (tokensOf(blanked.join('\n'), file).join(' ') !== tokensOf(code.join('\n'), file).join(' ')) fail(`${file}: minifying changed its tokens`);
  if (code.some((line) => line.startsWith('@'))) fail(`${file}: a line starts with @, which the bundle reads as an include`);
  return code.map((line, i) => (marks[i] ? `@${marks[i]}` : line)).join('\n').replace(/\n+$/, '');
}

const compacted = new Map([...includes].map(([name, { file, source }]) => [name, compact(file, source)]));

/** The text Redis runs, as expand in src/core/store/scripts.ts builds it: each include once, where first named. */
function expand(text, seen = new Set()) {
  return text
    .split('\n')
    .map((line) => {
      if (!line.startsWith('@')) return line;
      const name = line.slice(1);
      if (seen.has(name)) return '';
      seen.add(name);
      return expand(compacted.get(name), seen);
    })
    .join('\n');
}

let expandedBytes = 0;
const entries = readdirSync(luaDir)
  .filter((f) => f.endsWith('.lua'))
  .sort()
  .map((file) => {
    const source = read(file);
    checkDependencies(file, source, null);
    const keys = keysOf(source, file);
    checkKeys(source, file, keys);
    const shebang = /^#!lua flags=(\S+)\n/.exec(source);
    if (!shebang || !shebang[1].split(',').includes(FLAG)) fail(`${file}: the first line must be '#!lua flags=...${FLAG}'`);
    const flags = shebang[1].split(',').filter((flag) => flag !== FLAG);
    const text = compact(file, source);
    const body = expand(text);
    checkStatuses(body, file);
    expandedBytes += body.length;
    return [
      `  ${camel(file)}: {`,
      `    name: ${JSON.stringify(file.replace(/\.lua$/, ''))} as const,`,
      `    keys: ${JSON.stringify(keys.fixed)},`,
      `    keyPerItem: ${JSON.stringify(keys.each)},`,
      `    flags: ${JSON.stringify(flags)},`,
      `    sha1: '${sha1(shebangOf([...flags, FLAG]) + body)}',`,
      `    plainSha1: '${sha1(shebangOf(flags) + body)}',`,
      `    text: ${JSON.stringify(text)},`,
      `  },`,
    ].join('\n');
  });

if (problems.length > 0) fail(`the Lua sources disagree:\n  ${problems.join('\n  ')}`);

const output = `// Generated by scripts/build-lua.mjs from src/lua/*.lua. Do not edit: run \`npm run build:lua\`.
export interface LuaScript<Name extends string = string> {
  /** The file's name: src/core/store/replies.ts holds the reply schema of each script by this name. */
  readonly name: Name;
  /** KEYS names, in order, as the script's header lists them. */
  readonly keys: readonly string[];
  /** The name of the key given once per item after the fixed ones (a group zset), or null. */
  readonly keyPerItem: string | null;
  /** The shebang's flags other than Upstash's allow-key-locking (e.g. no-writes). */
  readonly flags: readonly string[];
  /** SHA-1 of the body with the shebang and allow-key-locking (sourceOf in src/core/store/scripts.ts). */
  readonly sha1: string;
  /** SHA-1 of the body without that flag, for a Redis that refuses it. */
  readonly plainSha1: string;
  /**
   * The script as the bundle holds it (its first line empty, \`@name\` for an include): sourceOf in
   * src/core/store/scripts.ts writes the shebang and expands the includes from luaIncludes.
   */
  readonly text: string;
}

/** Each include as the bundle holds it, once for all scripts. */
export const luaIncludes: Readonly<Record<string, string>> = {
${[...compacted].map(([name, text]) => `  ${JSON.stringify(name)}: ${JSON.stringify(text)},`).join('\n')}
};

export const scripts = {
${entries.join('\n')}
} satisfies Record<string, LuaScript>;

/** Every script's name, as a literal: a \`Record<ScriptName, ...>\` must name them all. */
export type ScriptName = (typeof scripts)[keyof typeof scripts]['name'];
`;

writeOrCheck(outFile, output, {
  what: 'lua bundle',
  rebuild: 'npm run build:lua',
  summary: `${entries.length} scripts, ${compacted.size} includes, ${output.length} bytes (${expandedBytes} expanded)`,
});
