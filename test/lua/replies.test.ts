// Every script's reply is checked by its schema (src/core/store/replies.ts) before the engine reads
// it: a reply of another shape is an INTERNAL error naming the script, never a silent
// `undefined` further on. The replies here come from real Lua, through the bridge and the
// production client, from stand-ins that carry a real script's name but answer wrongly.
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { QueueError } from '../../src/protocol/errors';
import { callScript, runScript } from '../../src/core/store/scripts';
import { type LuaScript, type ScriptName } from '../../src/lua/scripts.generated';
import { restRedis, uniqueName } from '../helpers/stack';

const ctx = { redis: restRedis() };
const sha1 = (text: string) => createHash('sha1').update(text).digest('hex');

/** A keyless script named `name` whose body is `body` (unique: scripts are cached by SHA-1). */
function standIn<N extends ScriptName>(name: N, body: string): LuaScript<N> {
  const text = `\n${body}\n-- ${uniqueName('replies')}`; // the first line left empty for the shebang
  return { name, keys: [], keyPerItem: null, flags: [], text, sha1: sha1(`#!lua flags=allow-key-locking${text}`), plainSha1: sha1(text) };
}

async function internalError(promise: Promise<unknown>): Promise<QueueError> {
  const error = await promise.catch((e: unknown) => e);
  expect(error).toBeInstanceOf(QueueError);
  expect((error as QueueError).code).toBe('INTERNAL');
  return error as QueueError;
}

describe('script replies', () => {
  it('reach the engine as Lua made them: integers cut, strings kept, false as null, a nil ends the array', async () => {
    const script = standIn('queue-timer', `return { 1, 2.9, '42', false, 'x', nil, 'lost' }`);
    expect(await runScript(ctx.redis, script, [], [])).toEqual([1, 2, '42', null, 'x']);
  });

  it('come decoded when they have their shape', async () => {
    expect(await callScript(ctx, standIn('queue-timer', 'return { 1, 1700000000000 }'), {}, [])).toBe(1_700_000_000_000);
    expect(await callScript(ctx, standIn('queue-timer', 'return { 1, -1 }'), {}, [])).toBeNull();
  });

  it('of another shape are INTERNAL, naming the script', async () => {
    // A number sent as a string stays a string: not the integer the schema wants.
    const error = await internalError(callScript(ctx, standIn('queue-timer', `return { 1, '1700000000000' }`), {}, []));
    expect(error.message).toBe('queue-timer: unexpected reply');
    // A nil in the middle cuts the reply short: the job view is missing.
    const cut = await internalError(callScript(ctx, standIn('get-job', `return { 1, nil }`), {}, ['id']));
    expect(cut.message).toBe('get-job: unexpected reply');
    // An element the script does not answer (a stale state name) is refused too.
    const state = `return { 1, { 'id', '{}', '1', 'running', -1, -1, 3 } }`;
    await internalError(callScript(ctx, standIn('get-job', state), {}, ['id']));
  });

  it('of a script with modes are checked by the mode called', async () => {
    const names = standIn('registry', `return { 1, { 'a', 'b' } }`);
    expect(await callScript(ctx, names, {}, ['list'])).toEqual(['a', 'b']);
    const error = await internalError(callScript(ctx, names, {}, ['count']));
    expect(error.message).toBe('registry: unexpected reply');
  });

  it('that refuse keep their error: a negative status is never judged by the schema', async () => {
    const refusal = standIn('get-job', `return { -2 }`);
    await expect(callScript(ctx, refusal, {}, ['id'])).rejects.toMatchObject({ name: 'QueueError', code: 'JOB_NOT_FOUND' });
  });
});
