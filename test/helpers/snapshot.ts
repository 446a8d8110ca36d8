// Every key of a queue, byte for byte, to show that a refused call wrote nothing.
import type { RespClient } from '../../scripts/resp.mjs';
import { queueKeys } from '../../src/core/store/keys';

const hex = (value: unknown) => (value as Buffer).toString('hex');

/**
 * key -> its bytes, for every key of `queue` ('gq:{<queue>}:*'): the DUMP of strings and zsets
 * (whose order is their own), and each field and value (or member) of hashes and sets, sorted,
 * with the encoding. A hash or set kept as a hashtable lists its entries in the table's order,
 * which moves while Redis rehashes it incrementally, even on reads: its DUMP would differ with
 * nothing written.
 */
export async function snapshotQueue(admin: RespClient, queue: string): Promise<Map<string, string>> {
  const pattern = `${queueKeys(queue).prefix.replace(/[*?[\]\\]/g, '\\$&')}*`;
  const keys: string[] = [];
  let cursor = '0';
  do {
    const [next, found] = (await admin.call(['SCAN', cursor, 'MATCH', pattern, 'COUNT', 1000])) as [Buffer, Buffer[]];
    cursor = next.toString();
    keys.push(...found.map(String));
  } while (cursor !== '0');
  const out = new Map<string, string>();
  for (const key of keys.sort()) {
    const type = String(await admin.call(['TYPE', key]));
    const encoding = String(await admin.call(['OBJECT', 'ENCODING', key]));
    if (type === 'hash' || type === 'set') {
      const flat = (await admin.call(type === 'hash' ? ['HGETALL', key] : ['SMEMBERS', key])) as Buffer[];
      const entries: string[] = [];
      const step = type === 'hash' ? 2 : 1;
      for (let i = 0; i < flat.length; i += step) entries.push(flat.slice(i, i + step).map(hex).join('='));
      out.set(key, `${type} ${encoding} ${entries.sort().join(' ')}`);
    } else {
      out.set(key, `${type} ${encoding} ${hex(await admin.call(['DUMP', key]))}`);
    }
  }
  return out;
}
