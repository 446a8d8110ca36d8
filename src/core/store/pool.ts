// A pool of Redis databases (docs/scaling-out.md). Database 0 is the control database: the queue
// registry and the placement record live there. Every queue lives on one database of the pool,
// chosen when it is created by rendezvous hashing and recorded; a queue created before the pool
// grew has no record and stays on database 0. Each database keeps the due index of its own
// queues. With one database none of this runs: the engine gets that database's client as it is.
//
// The engine does not know the pool: it gets a ScriptRunner that sends each command to the
// database of the queue its keys belong to (a key's hash tag names its queue, keys.ts), as a Redis
// Cluster client routes by slot. Keys without a tag (the registry) are the control database's;
// the due index's commands go to the database of the queue they name.
import { scripts } from '../../lua/scripts.generated';
import { QueueError } from '../../protocol/errors';
import { DUE_KEY, PLACEMENT_KEY } from './keys';
import { asQueueError } from './redis';
import { callScript, type ScriptRunner } from './scripts';

/** The bits of a 32-bit FNV-1a hash of `text`'s UTF-8 bytes. */
export function fnv1a32(text: string): number {
  let hash = 0x811c9dc5;
  for (const byte of new TextEncoder().encode(text)) {
    hash ^= byte;
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash;
}

/**
 * Where rendezvous hashing places `queue` in a pool of `size` databases: the database whose
 * `fnv1a32("<database>:<queue>")` is highest (ties to the lower index). Adding a database moves
 * only the queues that now score highest on it; recorded placements never move by themselves.
 */
export function rendezvous(queue: string, size: number): number {
  let best = 0;
  let bestScore = -1;
  for (let database = 0; database < size; database++) {
    const score = fnv1a32(`${database}:${queue}`);
    if (score > bestScore) {
      best = database;
      bestScore = score;
    }
  }
  return best;
}

/** The queue whose hash tag `key` carries (`gq:{orders}:meta` -> orders), or null (the registry). */
export function queueOfKey(key: string | undefined): string | null {
  if (key === undefined || !key.startsWith('gq:{')) return null;
  const end = key.indexOf('}', 4);
  return end < 0 ? null : key.slice(4, end);
}

/**
 * What an isolate has learned of placements: a recorded placement never changes by itself, so
 * it is kept for the isolate's life. A queue without a record is not cached: it may be created
 * (and placed) by another isolate at any moment.
 */
export class Placements {
  private readonly known = new Map<string, number>();

  constructor(readonly size: number) {}

  /** The database of `queue`: its record, else database 0 (no such queue yet, or one from before the pool). */
  async of(control: ScriptRunner, queue: string): Promise<number> {
    const known = this.known.get(queue);
    if (known !== undefined) return known;
    let recorded: string | null;
    try {
      recorded = await control.hget<string>(PLACEMENT_KEY, queue);
    } catch (error) {
      throw asQueueError(error);
    }
    if (recorded === null) return 0;
    return this.remember(queue, Number(recorded));
  }

  /** Records `queue`'s placement if it has none (a queue the registry already lists stays on 0). */
  async place(control: ScriptRunner, queue: string, keyLocking: boolean): Promise<number> {
    const known = this.known.get(queue);
    if (known !== undefined) return known;
    const database = await callScript({ redis: control, keyLocking }, scripts.place, {}, [queue, rendezvous(queue, this.size)]);
    return this.remember(queue, database);
  }

  private remember(queue: string, database: number): number {
    if (!Number.isInteger(database) || database < 0 || database >= this.size) {
      throw new QueueError('INTERNAL', `queue ${queue} is placed on database ${database}, outside the pool of ${this.size} (GROUPQ_REDIS_POOL lost a database)`);
    }
    this.known.set(queue, database);
    return database;
  }
}

/**
 * Whether each database of a pool answers (one ZRANGE of its due index each), by index. A
 * single client is a pool of one.
 */
export async function databaseStates(redis: ScriptRunner): Promise<('ok' | 'down')[]> {
  const databases = 'databases' in redis ? (redis as PoolRunner).databases : [redis];
  const answers = await Promise.allSettled(databases.map((database) => database.zrange(DUE_KEY, 0, 0)));
  return answers.map((answer) => (answer.status === 'fulfilled' ? 'ok' : 'down'));
}

/** What the engine gets of a pool: a runner routed by queue, each database's own, and placing. */
export interface PoolRunner extends ScriptRunner {
  /** Each database's runner, by index: the due index is read on each. */
  readonly databases: readonly ScriptRunner[];
  /** Records a new queue's placement before its first write. */
  place(queue: string): Promise<void>;
}

/** A runner over `databases` (database 0 the control database) that sends each command where its queue lives. */
export function poolRunner(databases: readonly ScriptRunner[], placements: Placements, keyLocking: boolean): PoolRunner {
  const control = databases[0]!;
  const on = async (queue: string | null): Promise<ScriptRunner> => (queue === null ? control : databases[await placements.of(control, queue)]!);
  // The due index's member is a queue name; every other key carries its queue's tag.
  const dueMember = (key: string, member: unknown) => (key === DUE_KEY ? String(member) : queueOfKey(key));
  const runner: ScriptRunner = {
    evalsha: (async (sha: string, keys: string[], args: string[]) => (await on(queueOfKey(keys[0]))).evalsha(sha, keys, args)) as ScriptRunner['evalsha'],
    eval: (async (text: string, keys: string[], args: string[]) => (await on(queueOfKey(keys[0]))).eval(text, keys, args)) as ScriptRunner['eval'],
    hget: (async (key: string, field: string) => (await on(queueOfKey(key))).hget(key, field)) as ScriptRunner['hget'],
    zadd: (async (key: string, ...rest: [unknown, ...unknown[]]) => {
      const last = rest[rest.length - 1] as { member: unknown };
      const target = await on(dueMember(key, last.member));
      return (target.zadd as (...a: unknown[]) => Promise<unknown>)(key, ...rest);
    }) as ScriptRunner['zadd'],
    zrem: (async (key: string, ...members: unknown[]) => {
      const target = await on(dueMember(key, members[0]));
      return (target.zrem as (...a: unknown[]) => Promise<unknown>)(key, ...members);
    }) as ScriptRunner['zrem'],
    // A range of the due index spans the pool: due-index.ts reads each database's itself.
    zrange: ((key: string, ...rest: unknown[]) => {
      if (key === DUE_KEY) return Promise.reject(new Error('groupq: read the due index on each database of the pool'));
      return (control.zrange as (...a: unknown[]) => Promise<unknown>)(key, ...rest);
    }) as ScriptRunner['zrange'],
  };
  return {
    ...runner,
    databases,
    async place(queue) {
      await placements.place(control, queue, keyLocking);
    },
  };
}
