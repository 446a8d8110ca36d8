// The copying and the deleting of a move (move.ts): a partition's keys read page by page on the
// database it leaves (move-read) and written on the one it goes to (move-write). A page is
// bounded by entries and by bytes, so a partition of large jobs moves in requests of bounded
// size (an entry larger than the bound moves alone). Which keys a partition has comes from the
// key catalogue (keys.ts): a key added there moves with the rest, with nothing to add here.
import { scripts } from '../../lua/scripts.generated';
import { KEY_CATALOGUE, groupKey, isQueueKeyName, queueKey } from '../store/keys';
import { callScript, type ScriptContext } from '../store/scripts';

/** Entries per page of a copied key, and the most small keys (groups) copied in one call. */
export const PAGE = 1000;
const KEYS_PER_CALL = 100;
/** Bytes of fields, members and values per page of a copied key (job records are its large entries). */
const PAGE_BYTES = 2 * 1024 * 1024;
/** Entries a hash's or set's first page asks its scan for, before the key's sizes are known. */
const FIRST_SCAN = 16;

type Kind = 'hash' | 'zset' | 'set';

/** The keys of a partition the move copies, with their types: every fixed key but meta and the transient strings. */
export const COPIED = KEY_CATALOGUE.flatMap(({ key, type }) => {
  const name = key.slice('gq:{q}:'.length);
  return key.startsWith('gq:{q}:') && isQueueKeyName(name) && name !== 'meta' && type !== 'string' ? [{ name, type: type as Kind }] : [];
});

/** What a move does before each write: renew its lease (move-lease.ts), or stop there. */
export type BeforeWrite = () => Promise<void>;

/**
 * Copies one key from `from` to `to` in pages; returns its entries when it is a hash (meta's
 * fields and values). `lead`: entries written in the first page before the rest (meta's `move`,
 * so that any copy cut off half way is known as one: move.ts).
 */
export async function copyKey(from: ScriptContext, to: ScriptContext, key: string, kind: Kind, beforeWrite: BeforeWrite, lead: string[] = []): Promise<string[]> {
  const hash: string[] = [];
  let at: string | null = '0';
  let scan = FIRST_SCAN;
  for (let first = true; at !== null; first = false) {
    const { next, pages }: { next: string | null; pages: string[][] } = await callScript(from, scripts.moveRead, { keys: [key] }, [kind, at, PAGE, PAGE_BYTES, scan]);
    const entries = first ? [...lead, ...(pages[0] ?? [])] : (pages[0] ?? []);
    if (kind === 'hash') hash.push(...(pages[0] ?? []));
    if (first || entries.length > 0) {
      await beforeWrite();
      await callScript(to, scripts.moveWrite, { keys: [key] }, [kind, first ? '1' : '', entries.length, ...entries]);
    }
    // The next page's scan asks for what its bytes should hold at this page's mean size.
    const bytes = entries.reduce((sum, entry) => sum + entry.length, 0);
    const count = entries.length / (kind === 'hash' ? 2 : 1);
    if (count > 0) scan = Math.max(1, Math.min(PAGE, Math.floor((PAGE_BYTES * count) / Math.max(bytes, 1))));
    at = next;
  }
  return hash;
}

/** Copies small zsets (groups of at most PAGE jobs: copyKey pages larger ones) whole, up to KEYS_PER_CALL or PAGE jobs a call. */
export async function copyGroups(from: ScriptContext, to: ScriptContext, keys: { key: string; jobs: number }[], beforeWrite: BeforeWrite): Promise<void> {
  for (let i = 0; i < keys.length; ) {
    const batch: string[] = [];
    for (let jobs = 0; i < keys.length && batch.length < KEYS_PER_CALL && jobs + keys[i]!.jobs <= PAGE; i++) {
      batch.push(keys[i]!.key);
      jobs += keys[i]!.jobs;
    }
    const { pages } = await callScript(from, scripts.moveRead, { keys: batch }, ['zset', '', PAGE, PAGE_BYTES, PAGE]);
    const args = pages.flatMap((entries) => [entries.length, ...entries]);
    await beforeWrite();
    await callScript(to, scripts.moveWrite, { keys: batch }, ['zset', '1', ...args]);
  }
}

/** The group zsets a partition's meta names (its `g:<group>` fields, flat as read), with their sizes. */
export function groupsOf(tag: string, meta: string[]): { key: string; jobs: number }[] {
  const groups: { key: string; jobs: number }[] = [];
  for (let i = 0; i < meta.length; i += 2) {
    if (meta[i]!.startsWith('g:')) groups.push({ key: groupKey(tag, meta[i]!.slice(2)), jobs: Number(meta[i + 1]) });
  }
  return groups;
}

/** Deletes `keys` on `from`, KEYS_PER_CALL a call. */
async function dropKeys(from: ScriptContext, keys: string[], beforeWrite: BeforeWrite): Promise<void> {
  for (let i = 0; i < keys.length; i += KEYS_PER_CALL) {
    const batch = keys.slice(i, i + KEYS_PER_CALL);
    await beforeWrite();
    await callScript(from, scripts.moveWrite, { keys: batch }, ['zset', '1', ...batch.map(() => 0)]);
  }
}

/**
 * Deletes the copy of partition `tag` on `from`, but for its meta, which keeps only where the
 * partition is (`move`, `at <database>`: PARTITION_MOVED). `groups`: its group zsets, as its
 * meta names them.
 */
export async function dropCopy(from: ScriptContext, tag: string, groups: { key: string }[], database: number, beforeWrite: BeforeWrite): Promise<void> {
  await dropKeys(from, [...COPIED.map(({ name }) => queueKey(tag, name)), ...groups.map(({ key }) => key)], beforeWrite);
  await beforeWrite();
  await callScript(from, scripts.moveWrite, { keys: [queueKey(tag, 'meta')] }, ['hash', '1', 2, 'move', `at ${database}`]);
}

/** The whole of `tag`'s meta on `from`, flat (field, value, ...), read in pages. */
export async function readMeta(from: ScriptContext, tag: string): Promise<string[]> {
  const meta: string[] = [];
  let at: string | null = '0';
  while (at !== null) {
    const { next, pages }: { next: string | null; pages: string[][] } = await callScript(from, scripts.moveRead, { keys: [queueKey(tag, 'meta')] }, ['hash', at, PAGE, PAGE_BYTES, PAGE]);
    meta.push(...(pages[0] ?? []));
    at = next;
  }
  return meta;
}
