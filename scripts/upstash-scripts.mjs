// Upstash's rules for Lua scripts, emulated in front of a plain redis-server: the REST bridge's
// default mode, so every test and `npm run dev` run scripts as Upstash does.
//
// Upstash runs a script under a database-wide lock unless the script's first line is a shebang
// with the flag `allow-key-locking` (`#!lua flags=allow-key-locking`, or
// `#!lua flags=no-writes,allow-key-locking`); with it, Upstash locks only the keys in KEYS and
// refuses any key the script touches that is not in KEYS. redis-server refuses the flag
// ("ERR Unexpected flag in script shebang"), so for a flagged script the bridge sends redis-server
// a rewritten script:
//  - the shebang without `allow-key-locking` (`#!lua` when no flag is left; other flags stay);
//  - a key check in front of the script's second line (upstash-key-check.lua, on that one line,
//    so the script's lines keep their numbers): every redis.call and redis.pcall checks the
//    command's key arguments against KEYS and fails, before running, with Upstash's error.
//    (Errors that redis.call raises now say `on @user_script:2`, the check's line, whatever line
//    called it; errors of the script's own code keep their line.)
//  - and the bridge maps the SHA-1 the client computed (of the script it sent, flag included) to
//    the rewritten script's SHA-1 for EVALSHA(_RO), SCRIPT LOAD and SCRIPT EXISTS. A SHA-1 the
//    bridge never saw, or whose rewritten script redis-server lost (SCRIPT FLUSH, a restart),
//    gets redis-server's own NOSCRIPT, so clients fall back to EVAL as they do against Upstash.
// Scripts without the flag pass through untouched: Upstash runs them, unchecked, under its
// global lock. (Upstash also runs flagged scripts inside MULTI/EXEC under the global lock; the
// bridge checks their keys there too, as the flag's rules do not change.)
//
// Which arguments are keys: the check reads Redis' key specs, fetched by the bridge once with
// COMMAND (outside any script) and embedded in the check. Not COMMAND GETKEYS from inside the
// script: that is one more command per redis.call, which INFO commandstats would count, and
// groupq counts the commands that Upstash bills with INFO commandstats (bench/lib/redis-stats.ts,
// test/engine/metrics.test.ts, test/delivery/script-flush.test.ts). With the specs embedded, a
// flagged script runs exactly the commands it calls.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { RespError } from './resp.mjs';

/** @typedef {import('./resp.mjs').RespClient} RespClient */
/** @typedef {import('./resp.mjs').RespReply} RespReply */
/** A command as the bridge sends it to redis-server, and what to do to its reply. */
/** @typedef {{ args: string[], reply: (reply: RespReply) => RespReply }} Translated */

export const KEY_LOCKING_FLAG = 'allow-key-locking';
/**
 * How the error for an undeclared key starts: Upstash's words as scripts probing Upstash report
 * them ("Dynamic keys are not allowed ..."); after it the check names the command and the key.
 */
export const UNDECLARED_KEY_ERROR = "ERR Dynamic keys are not allowed in Lua scripts when 'allow-key-locking' flag is set";

const SPECS_PLACEHOLDER = '__GQ_KEY_SPECS__';
const KEY_CHECK_SOURCE = readFileSync(new URL('./upstash-key-check.lua', import.meta.url), 'utf8');

/** @param {string} text */
const sha1 = (text) => createHash('sha1').update(text, 'utf8').digest('hex');

/** @param {unknown} reply @returns {string} */
const text = (reply) => (reply === null || reply === undefined ? '' : String(reply));

/**
 * A flat [key, value, ...] reply as an object.
 * @param {unknown} reply
 * @returns {Record<string, unknown>}
 */
function fields(reply) {
  const out = /** @type {Record<string, unknown>} */ ({});
  const items = Array.isArray(reply) ? reply : [];
  for (let i = 0; i + 1 < items.length; i += 2) out[text(items[i])] = items[i + 1];
  return out;
}

/**
 * One key spec as the check's token (see upstash-key-check.lua), or null when it is Redis'
 * "unknown" kind.
 * @param {Record<string, unknown>} spec
 */
function specToken(spec) {
  const begin = fields(spec.begin_search);
  const find = fields(spec.find_keys);
  const at = fields(begin.spec);
  const range = fields(find.spec);
  let from;
  if (text(begin.type) === 'index') from = `i${Number(at.index)}`;
  else if (text(begin.type) === 'keyword') from = `k${Number(at.startfrom)}=${text(at.keyword).toUpperCase()}`;
  else return null;
  if (text(find.type) === 'range') return `${from}/r${Number(range.lastkey)}.${Number(range.keystep)}.${Number(range.limit)}`;
  if (text(find.type) === 'keynum') return `${from}/n${Number(range.keynumidx)}.${Number(range.firstkey)}.${Number(range.keystep)}`;
  return null;
}

/**
 * The key specs of every command in a COMMAND reply, as the check's string: `;<name> <tokens>;`.
 * Commands without keys are left out (the check lets them run), except the ones that act on the
 * whole keyspace (KEYS, SCAN, FLUSHDB, ...): Upstash refuses those under the flag.
 * @param {RespReply} reply
 */
export function encodeKeySpecs(reply) {
  /** @type {string[]} */
  const entries = [];
  /** @param {unknown} entry */
  const visit = (entry) => {
    const parts = Array.isArray(entry) ? entry : [];
    const name = text(parts[0]).toLowerCase();
    const categories = (Array.isArray(parts[6]) ? parts[6] : []).map(text);
    const subcommands = Array.isArray(parts[9]) ? parts[9] : [];
    if (subcommands.length > 0) {
      entries.push(`${name} *`);
      subcommands.forEach(visit);
      return;
    }
    const specs = (Array.isArray(parts[8]) ? parts[8] : [])
      .map(fields)
      .filter((spec) => !(Array.isArray(spec.flags) ? spec.flags : []).map(text).includes('not_key'));
    const tokens = specs.map(specToken);
    // SORT's "unknown" specs are its STORE key and BY/GET patterns: the check finds those itself.
    const sortExtras = (name === 'sort' || name === 'sort_ro') && tokens.includes(null);
    const refused =
      (!sortExtras && tokens.includes(null)) ||
      (specs.length === 0 && categories.includes('@keyspace') && !name.endsWith('|help'));
    if (refused) entries.push(`${name} !`);
    else if (specs.length > 0) entries.push([name, ...tokens.filter(Boolean), ...(sortExtras ? ['s'] : [])].join(' '));
  };
  (Array.isArray(reply) ? reply : []).forEach(visit);
  // Embedded in a Lua string on one line: no quote, backslash, line break or comment may appear,
  // and names and tokens must not hold the separators.
  const bad = entries.find((entry) => !/^[a-z0-9_|-]+( [A-Za-z0-9_.=\/!*-]+)+$/.test(entry) || entry.includes('--'));
  if (bad !== undefined) throw new Error(`COMMAND returned a command the key check cannot embed: ${bad}`);
  return `;${entries.join(';')};`;
}

/**
 * The key check, on one line, for redis-server's key specs.
 * @param {string} keySpecs from encodeKeySpecs
 */
export function keyCheckPrologue(keySpecs) {
  const line = KEY_CHECK_SOURCE.split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('--'))
    .join(' ');
  // A comment left on the line would swallow the script's own first line after it.
  if (line.includes('--')) throw new Error('upstash-key-check.lua: comments must be on lines of their own');
  return line.replace(SPECS_PLACEHOLDER, keySpecs);
}

/**
 * Splits off a shebang that carries `allow-key-locking` (parsed as redis-server parses it).
 * @param {string} source
 * @returns {{ shebang: string, rest: string } | null} the shebang without the flag, and the
 *   source from the newline that ended it; null when the script does not carry the flag
 */
export function stripKeyLockingFlag(source) {
  if (!source.startsWith('#!')) return null;
  const end = source.indexOf('\n');
  if (end === -1) return null; // redis-server refuses it: "Invalid script shebang"
  const line = source.slice(0, end);
  if (/["']/.test(line)) return null; // quoted options: left for redis-server to judge
  const parts = line.split(/[ \t\r\v\f]+/).filter(Boolean);
  if (parts[0] !== '#!lua') return null;
  let flagged = false;
  const kept = parts.slice(1).flatMap((part) => {
    if (!part.startsWith('flags=')) return [part];
    const flags = part.slice('flags='.length).split(',');
    if (!flags.includes(KEY_LOCKING_FLAG)) return [part];
    flagged = true;
    const others = flags.filter((flag) => flag !== KEY_LOCKING_FLAG);
    return others.length > 0 ? [`flags=${others.join(',')}`] : [];
  });
  if (!flagged) return null;
  return { shebang: ['#!lua', ...kept].join(' '), rest: source.slice(end) };
}

/** @param {RespReply} reply */
const same = (reply) => reply;

/**
 * The Upstash rules for one connection to redis-server.
 * @param {{ redis: RespClient, maxScripts?: number }} options `maxScripts`: flagged scripts
 *   remembered (oldest forgotten first; a forgotten one costs its client a NOSCRIPT and an EVAL)
 */
export function createUpstashScripts({ redis, maxScripts = 1000 }) {
  /** Client SHA-1 -> the rewritten script redis-server runs, and its SHA-1. */
  /** @type {Map<string, { sha: string, source: string }>} */
  const scripts = new Map();
  /** @type {Promise<string> | null} */
  let prologue = null;

  function keyCheck() {
    if (!prologue) {
      const pending = redis.call(['COMMAND']).then((reply) => keyCheckPrologue(encodeKeySpecs(reply)));
      // A Redis that was down is asked again by the next flagged script.
      pending.catch(() => {
        if (prologue === pending) prologue = null;
      });
      prologue = pending;
    }
    return prologue;
  }

  /**
   * The rewritten script for a flagged source, or null for a script without the flag.
   * @param {string} source
   */
  async function rewrite(source) {
    const stripped = stripKeyLockingFlag(source);
    if (!stripped) return null;
    const clientSha = sha1(source);
    const known = scripts.get(clientSha);
    if (known) return { clientSha, ...known };
    const rewritten = `${stripped.shebang}\n${await keyCheck()} ${stripped.rest.slice(1)}`;
    const script = { sha: sha1(rewritten), source: rewritten };
    scripts.set(clientSha, script);
    if (scripts.size > maxScripts) scripts.delete(/** @type {string} */ (scripts.keys().next().value));
    return { clientSha, ...script };
  }

  /**
   * Errors name the script by the SHA-1 its client knows.
   * @param {{ clientSha: string, sha: string }} script
   */
  const withClientSha = (script) => (/** @type {RespReply} */ reply) =>
    reply instanceof RespError ? new RespError(reply.message.replaceAll(script.sha, script.clientSha)) : reply;

  /**
   * What to send redis-server for one command of a client, and how to answer.
   * @param {string[]} args
   * @returns {Translated | Promise<Translated>}
   */
  function translate(args) {
    const name = (args[0] ?? '').toLowerCase();
    const sub = (args[1] ?? '').toLowerCase();
    if ((name === 'eval' || name === 'eval_ro') && args.length > 1) {
      return rewrite(/** @type {string} */ (args[1])).then((script) =>
        script ? { args: [name, script.source, ...args.slice(2)], reply: withClientSha(script) } : { args, reply: same },
      );
    }
    if ((name === 'evalsha' || name === 'evalsha_ro') && args.length > 1) {
      const clientSha = sub;
      const script = scripts.get(clientSha);
      if (!script) return { args, reply: same };
      return { args: [name, script.sha, ...args.slice(2)], reply: withClientSha({ clientSha, sha: script.sha }) };
    }
    if (name === 'script' && sub === 'load' && args.length === 3) {
      return rewrite(/** @type {string} */ (args[2])).then((script) => {
        if (!script) return { args, reply: same };
        const answer = withClientSha(script);
        return {
          args: ['script', 'load', script.source],
          reply: (reply) => (Buffer.isBuffer(reply) ? Buffer.from(script.clientSha) : answer(reply)),
        };
      });
    }
    if (name === 'script' && sub === 'exists') {
      const shas = args.slice(2).map((sha) => scripts.get(sha.toLowerCase())?.sha ?? sha);
      return { args: ['script', 'exists', ...shas], reply: same };
    }
    return { args, reply: same };
  }

  return {
    translate,
    /** Reads the key specs ahead of the first flagged script; a Redis not up yet is no error. */
    warmUp() {
      keyCheck().catch(() => {});
    },
  };
}

/** Plain mode: every command passes through untouched. */
export const passThrough = {
  /** @param {string[]} args @returns {Translated} */
  translate: (args) => ({ args, reply: same }),
  warmUp() {},
};
