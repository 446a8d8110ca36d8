// Event capabilities (src/core/events/capability.ts) with the real Web Crypto: what mint writes,
// check reads back for that job alone and until it expires; every other string, and a capability
// of another job, queue or admin token, is 401 with reason `capability`. The key derivation is
// checked against node:crypto's HKDF and HMAC, a second implementation of the same RFCs.
import { createHmac, hkdfSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  CAPABILITY_MAX_LENGTH,
  CAPABILITY_MAX_TTL_MS,
  CAPABILITY_TTL_MS,
  type CapabilitySee,
  capabilityKey,
  checkCapability,
  mintCapability,
} from '../../src/core/events/capability';
import { fromBase64Url, toBase64Url } from '../../src/protocol/encoding';
import { QueueError } from '../../src/protocol/errors';

const ADMIN = 'admin-token-of-the-capability-tests';
const OTHER_ADMIN = 'another-admin-token-after-a-rotation';
const NOW = 1_800_000_000_000;
const QUEUE = 'emails';
const ID = 'job-1';

async function mint(over: { queue?: string; id?: string; see?: CapabilitySee; expiresAt?: number; admin?: string } = {}) {
  return mintCapability({
    key: await capabilityKey(over.admin ?? ADMIN),
    queue: over.queue ?? QUEUE,
    id: over.id ?? ID,
    see: over.see ?? 'state',
    expiresAt: over.expiresAt ?? NOW + CAPABILITY_TTL_MS,
  });
}

async function check(token: string, over: { queue?: string; id?: string; now?: number } = {}) {
  return checkCapability({ key: await capabilityKey(ADMIN), token, queue: over.queue ?? QUEUE, id: over.id ?? ID, now: over.now ?? NOW });
}

/** The error a check of `token` throws; fails the test when the check passes or throws anything else. */
async function refusal(token: string, over: { queue?: string; id?: string; now?: number } = {}): Promise<QueueError> {
  const error: unknown = await check(token, over).then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(QueueError);
  expect(error).toMatchObject({ code: 'UNAUTHORIZED', status: 401, details: { reason: 'capability' } });
  return error as QueueError;
}

const NOT_VALID = 'the capability is not valid for this job';

/** A token whose payload is `text`, signed with the right key: what a MAC alone would let through. */
async function signed(text: string): Promise<string> {
  const payload = toBase64Url(new TextEncoder().encode(text));
  const mac = await crypto.subtle.sign('HMAC', await capabilityKey(ADMIN), new TextEncoder().encode(payload));
  return `${payload}.${toBase64Url(mac)}`;
}

describe('event capabilities', () => {
  it('opens the job it was minted for, with the sight it was minted with', async () => {
    expect(await check(await mint({ see: 'state' }))).toEqual({ see: 'state' });
    expect(await check(await mint({ see: 'result' }))).toEqual({ see: 'result' });
  });

  it('is `<payload>.<mac>`: base64url of the compact claims, and HMAC-SHA256 under the HKDF of the admin token', async () => {
    const token = await mint({ see: 'result' });
    const [payload, mac] = token.split('.') as [string, string];
    expect(new TextDecoder().decode(fromBase64Url(payload))).toBe(
      JSON.stringify({ q: QUEUE, id: ID, exp: NOW + CAPABILITY_TTL_MS, see: 'result' }),
    );
    const key = hkdfSync('sha256', ADMIN, new Uint8Array(0), 'groupq events capability', 32);
    expect(mac).toBe(createHmac('sha256', Buffer.from(key)).update(payload).digest('base64url'));
    // The key is not the admin token: an HMAC keyed by the token itself differs.
    expect(mac).not.toBe(createHmac('sha256', ADMIN).update(payload).digest('base64url'));
  });

  it('derives one non-extractable key per admin token and isolate', async () => {
    const key = await capabilityKey(ADMIN);
    expect(capabilityKey(ADMIN)).toBe(capabilityKey(ADMIN));
    expect(await capabilityKey(ADMIN)).toBe(key);
    expect(await capabilityKey(OTHER_ADMIN)).not.toBe(key);
    expect(key.extractable).toBe(false);
    expect(key.algorithm).toMatchObject({ name: 'HMAC', hash: { name: 'SHA-256' } });
    await expect(crypto.subtle.exportKey('raw', key)).rejects.toThrow();
  });

  it('refuses a capability of another job or another queue', async () => {
    expect((await refusal(await mint({ id: 'job-2' }))).message).toBe(NOT_VALID);
    expect((await refusal(await mint(), { id: 'job-2' })).message).toBe(NOT_VALID);
    expect((await refusal(await mint(), { queue: 'invoices' })).message).toBe(NOT_VALID);
    // Case and prefixes count: ids are compared exactly.
    await refusal(await mint(), { id: 'JOB-1' });
    await refusal(await mint({ id: 'job-10' }));
  });

  it('refuses a tampered payload', async () => {
    const [, mac] = (await mint()).split('.') as [string, string];
    const moved = toBase64Url(new TextEncoder().encode(JSON.stringify({ q: QUEUE, id: 'job-2', exp: NOW + CAPABILITY_TTL_MS, see: 'state' })));
    expect((await refusal(`${moved}.${mac}`, { id: 'job-2' })).message).toBe(NOT_VALID);
    const lasting = toBase64Url(new TextEncoder().encode(JSON.stringify({ q: QUEUE, id: ID, exp: NOW + CAPABILITY_TTL_MS, see: 'result' })));
    await refusal(`${lasting}.${mac}`);
    // One character changed.
    const token = await mint();
    await refusal(`${token[0] === 'A' ? 'B' : 'A'}${token.slice(1)}`);
  });

  it('refuses a tampered mac, including another spelling of the same bytes', async () => {
    const token = await mint();
    const [payload, mac] = token.split('.') as [string, string];
    const flipped = `${mac[0] === 'A' ? 'B' : 'A'}${mac.slice(1)}`;
    expect((await refusal(`${payload}.${flipped}`)).message).toBe(NOT_VALID);
    // The 43rd character carries 2 bits that decode to nothing: a neighbour spells the same MAC.
    const last = mac.at(-1)!;
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const twin = `${mac.slice(0, -1)}${alphabet[alphabet.indexOf(last) ^ 1]}`;
    expect(fromBase64Url(twin)).toEqual(fromBase64Url(mac));
    await refusal(`${payload}.${twin}`);
  });

  it('refuses truncated and malformed tokens', async () => {
    const token = await mint();
    const [payload, mac] = token.split('.') as [string, string];
    for (const bad of [
      token.slice(0, -1),
      token.slice(1),
      payload,
      `${payload}.`,
      `.${mac}`,
      mac,
      `${payload}.${mac}=`,
      `${payload}==.${mac}`,
      `${payload}.${mac}.${mac}`,
      `${payload} .${mac}`,
      `${payload}%2E${mac}`,
      '',
    ]) {
      expect((await refusal(bad)).message).toBe(NOT_VALID);
    }
  });

  it('refuses an over-long token', async () => {
    const token = await mint();
    const [payload, mac] = token.split('.') as [string, string];
    const long = `${payload}${'A'.repeat(CAPABILITY_MAX_LENGTH)}.${mac}`;
    expect((await refusal(long)).message).toBe(NOT_VALID);
    expect((await refusal('A'.repeat(1_000_000))).message).toBe(NOT_VALID);
  });

  it('refuses a capability minted under another admin token: rotating the token revokes them all', async () => {
    expect((await refusal(await mint({ admin: OTHER_ADMIN }))).message).toBe(NOT_VALID);
  });

  it('refuses payloads a MAC covers but mint never writes', async () => {
    const exp = NOW + CAPABILITY_TTL_MS;
    for (const text of [
      'not json',
      '[]',
      'null',
      JSON.stringify({ q: QUEUE, id: ID, exp, see: 'everything' }),
      JSON.stringify({ q: QUEUE, id: ID, exp, see: 'state', admin: true }),
      JSON.stringify({ q: QUEUE, id: ID, exp: String(exp), see: 'state' }),
      JSON.stringify({ q: QUEUE, id: ID, exp: exp + 0.5, see: 'state' }),
      JSON.stringify({ q: QUEUE, id: ID, see: 'state' }),
    ]) {
      expect((await refusal(await signed(text))).message).toBe(NOT_VALID);
    }
    // The helper signs as mint does: the same claims pass.
    expect(await check(await signed(JSON.stringify({ q: QUEUE, id: ID, exp, see: 'state' })))).toEqual({ see: 'state' });
  });

  it('expires at exp: `expired` only for a capability of this job whose MAC verified', async () => {
    const token = await mint({ expiresAt: NOW + 1000 });
    expect(await check(token, { now: NOW + 999 })).toEqual({ see: 'state' });
    expect((await refusal(token, { now: NOW + 1000 })).message).toMatch(/expired/);
    expect((await refusal(token, { now: NOW + 10 * CAPABILITY_MAX_TTL_MS })).message).toMatch(/expired/);
    // A forged or foreign expired capability says nothing about its time.
    const [payload, mac] = token.split('.') as [string, string];
    expect((await refusal(`${payload}.${mac[0] === 'A' ? 'B' : 'A'}${mac.slice(1)}`, { now: NOW + 1000 })).message).toBe(NOT_VALID);
    expect((await refusal(token, { now: NOW + 1000, id: 'job-2' })).message).toBe(NOT_VALID);
    expect((await refusal(await mint({ admin: OTHER_ADMIN, expiresAt: NOW }), { now: NOW + 1000 })).message).toBe(NOT_VALID);
  });

  it('refuses a lifetime past the maximum, even with a good MAC', async () => {
    expect(await check(await mint({ expiresAt: NOW + CAPABILITY_MAX_TTL_MS }))).toEqual({ see: 'state' });
    expect((await refusal(await mint({ expiresAt: NOW + CAPABILITY_MAX_TTL_MS + 1 }))).message).toBe(NOT_VALID);
  });

  it('fits the longest queue name and job id within the length bound', async () => {
    const queue = 'q'.repeat(64);
    const id = '"\\'.repeat(128);
    const token = await mint({ queue, id, see: 'result', expiresAt: 99_999_999_999_999 });
    expect(token.length).toBe(882);
    expect(token.length).toBeLessThanOrEqual(CAPABILITY_MAX_LENGTH);
    const now = 99_999_999_999_999 - 1000;
    expect(await checkCapability({ key: await capabilityKey(ADMIN), token, queue, id, now })).toEqual({ see: 'result' });
  });

  it('mints only for a queue name, a job id and an epoch ms', async () => {
    await expect(mint({ queue: 'no spaces' })).rejects.toThrow(/not a queue name/);
    await expect(mint({ id: '..' })).rejects.toThrow(/not a queue name and job id/);
    await expect(mint({ expiresAt: NOW + 0.5 })).rejects.toThrow(/not an epoch ms/);
    await expect(mint({ expiresAt: Number.NaN })).rejects.toThrow(/not an epoch ms/);
  });
});
