// Access to the stack started by test/global-setup.ts.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeEach, inject } from 'vitest';
import { createRedis } from '../../src/core/store/redis';
import { createRespClient, type RespClient } from '../../scripts/resp.mjs';

/** URLs, token and Redis port of the test stack. */
export function stack() {
  return inject('stack');
}

/** The production @upstash/redis client (src/core/store/redis.ts), pointed at the test bridge. */
export function restRedis() {
  const { restUrl, restToken } = inject('stack');
  return createRedis({ url: restUrl, token: restToken });
}

/** A raw RESP client on the Redis behind the bridge; close() it when done. */
export function adminClient(): RespClient {
  const { redisHost, redisPort } = inject('stack');
  return createRespClient({ host: redisHost, port: redisPort });
}

/** A name no other test uses, e.g. for a queue or a key prefix. */
export function uniqueName(prefix: string): string {
  return `${prefix}-${Date.now().toString(36)}-${randomBytes(4).toString('hex')}`;
}

/** Deletes every key that starts with `prefix` (tests only: uses SCAN over the whole keyspace). */
export async function deleteKeysByPrefix(admin: RespClient, prefix: string): Promise<number> {
  const pattern = `${prefix.replace(/[*?[\]\\]/g, '\\$&')}*`;
  let cursor = '0';
  let deleted = 0;
  do {
    const reply = (await admin.call(['SCAN', cursor, 'MATCH', pattern, 'COUNT', 1000])) as [Buffer, Buffer[]];
    cursor = reply[0].toString();
    if (reply[1].length > 0) deleted += (await admin.call(['DEL', ...reply[1]])) as number;
  } while (cursor !== '0');
  return deleted;
}

/**
 * A key per test under a prefix only this file uses, and an admin client; every key under the
 * prefix is deleted after the file. Call at the top of a test file.
 */
export function testKeys(name: string): { key(): string; admin: RespClient } {
  const prefix = uniqueName(name);
  const admin = adminClient();
  let current = '';
  beforeEach((ctx) => {
    current = `${prefix}:${ctx.task.id}`;
  });
  afterAll(async () => {
    await deleteKeysByPrefix(admin, prefix);
    admin.close();
  });
  return { key: () => current, admin };
}
