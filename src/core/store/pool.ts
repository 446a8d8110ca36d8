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
import { fnv1a32, partitionTags } from './partitions';
import { asQueueError, redisMessageOf } from './redis';
import { callScript, type ScriptRunner } from './scripts';

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

/**
 * Where rendezvous hashing places the `partitions` of `queue`, in partition order: each on the
 * highest scoring database (by `<queue>:<p>`) among those holding the fewest of the queue's
 * partitions so far, so a queue's partitions spread evenly (8 over 3 databases: 3, 3, 2).
 */
export function placePartitions(queue: string, partitions: number, size: number): number[] {
  const held = new Array<number>(size).fill(0);
  return Array.from({ length: partitions }, (_, p) => {
    const fewest = Math.min(...held);
    let best = -1;
    let bestScore = -1;
    for (let database = 0; database < size; database++) {
      const score = fnv1a32(`${database}:${queue}:${p}`);
      if (held[database] === fewest && score > bestScore) {
        best = database;
        bestScore = score;
      }
    }
    held[best]!++;
    return best;
  });
}

/** The queue or partition whose hash tag `key` carries (`gq:{orders:3}:meta` -> orders:3), or null (the registry). */
export function queueOfKey(key: string | undefined): string | null {
  if (key === undefined || !key.startsWith('gq:{')) return null;
  const end = key.indexOf('}', 4);
  return end < 0 ? null : key.slice(4, end);
}

/** How long an isolate trusts that a name has no placement record: another isolate may create the queue. */
export const UNPLACED_MS = 2_000;
/** Names without a record remembered at once: names a stranger makes up cannot grow the isolate's memory. */
const MAX_UNPLACED = 1_000;

/**
 * What an isolate has learned of placements: a recorded placement changes only by a move
 * (which the old database tells of: PARTITION_MOVED), so it is kept for the isolate's life. A
 * name without a record is remembered as such for UNPLACED_MS only, so that calls to made-up
 * queue names cost one read per name per isolate in that time, and a queue another isolate
 * creates is found within it (this isolate's own creations at once: `place`).
 */
export class Placements {
  private readonly known = new Map<string, number>();
  /** Names without a record, by when that stops being trusted; in insertion order, oldest first. */
  private readonly unplaced = new Map<string, number>();

  constructor(
    readonly size: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** The database of `queue`: its record, else database 0 (no such queue yet, or one from before the pool). */
  async of(control: ScriptRunner, queue: string): Promise<number> {
    const known = this.known.get(queue);
    if (known !== undefined) return known;
    const until = this.unplaced.get(queue);
    if (until !== undefined && until > this.now()) return 0;
    let recorded: string | null;
    try {
      recorded = await control.hget<string>(PLACEMENT_KEY, queue);
    } catch (error) {
      throw asQueueError(error);
    }
    if (recorded === null) {
      this.unplaced.delete(queue);
      this.unplaced.set(queue, this.now() + UNPLACED_MS);
      if (this.unplaced.size > MAX_UNPLACED) this.unplaced.delete(this.unplaced.keys().next().value!);
      return 0;
    }
    return this.remember(queue, Number(recorded));
  }

  /**
   * Records where each of `names` lives, unless it has a record: `chosen` databases, except that
   * a queue the registry already lists stays on 0. Returns the databases, recorded ones first.
   */
  async place(control: ScriptRunner, names: readonly string[], chosen: readonly number[], keyLocking: boolean): Promise<number[]> {
    const args = names.flatMap((name, i) => [name, chosen[i]!]);
    const databases = await callScript({ redis: control, keyLocking }, scripts.place, {}, args);
    return databases.map((database, i) => this.remember(names[i]!, database));
  }

  /** Drops what is known of `name`'s placement: it moved (src/core/engine/move.ts). */
  forget(name: string): void {
    this.known.delete(name);
    this.unplaced.delete(name);
  }

  private remember(queue: string, database: number): number {
    if (!Number.isInteger(database) || database < 0 || database >= this.size) {
      throw new QueueError('INTERNAL', `queue ${queue} is placed on database ${database}, outside the pool of ${this.size} (GROUPQ_REDIS_POOL lost a database)`);
    }
    this.known.set(queue, database);
    this.unplaced.delete(queue);
    return database;
  }
}

/**
 * Whether each database of a pool answers (one ZRANGE of its due index each), by index. A
 * single client is a pool of one.
 */
export async function databaseStates({ redis, pool }: { redis: ScriptRunner; pool?: Pool }): Promise<('ok' | 'down')[]> {
  const answers = await Promise.allSettled((pool?.databases ?? [redis]).map((database) => database.zrange(DUE_KEY, 0, 0)));
  return answers.map((answer) => (answer.status === 'fulfilled' ? 'ok' : 'down'));
}

/** What the engine knows of a pool besides its routed runner: each database's own runner, and placing. */
export interface Pool {
  /** Each database's runner, by index: the due index is read on each. */
  readonly databases: readonly ScriptRunner[];
  /** The database `tag` (a queue's name, or a partition's tag) lives on, as this isolate knows it. */
  databaseOf(tag: string): Promise<number>;
  /** Forgets what this isolate knows of `tag`'s placement: the next call reads the record. */
  forget(tag: string): void;
  /** Records a new queue's placement (and its partitions') before its first write. */
  place(queue: string, partitions: number): Promise<void>;
}

/** A pool's runner, which sends each command where its queue lives, and the pool it routes over. */
export interface PoolRunner extends ScriptRunner {
  readonly pool: Pool;
}

/** The pool `redis` routes over, if it is a pool's runner (the engine's context keeps it: EngineContext.pool). */
export function poolOf(redis: ScriptRunner): Pool | undefined {
  return 'pool' in redis ? (redis as PoolRunner).pool : undefined;
}

/** A runner over `databases` (database 0 the control database) that sends each command where its queue lives. */
export function poolRunner(databases: readonly ScriptRunner[], placements: Placements, keyLocking: boolean): PoolRunner {
  const control = databases[0]!;
  const indexOf = (queue: string | null): Promise<number> => (queue === null ? Promise.resolve(0) : placements.of(control, queue));
  const on = async (queue: string | null): Promise<ScriptRunner> => databases[await indexOf(queue)]!;
  // The due index's member is a queue name; every other key carries its queue's tag.
  const dueMember = (key: string, member: unknown) => (key === DUE_KEY ? String(member) : queueOfKey(key));
  // A script run where its partition was, before it moved, is refused with PARTITION_MOVED
  // (errors.lua refuseMoving): the placement is read again and the script sent where it is now.
  // So is one refused with PARTITION_MOVING: a move cut off after the switch leaves the old copy
  // fenced until the move is made again, and the record already names the new database; while
  // the move runs, the record names the same one, and the refusal stands (one HGET more).
  const script = async (keys: string[], run: (database: ScriptRunner) => Promise<unknown>) => {
    const tag = queueOfKey(keys[0]);
    const tried = await indexOf(tag);
    try {
      return await run(databases[tried]!);
    } catch (error) {
      const message = redisMessageOf(error);
      if (tag === null || !(message.includes('PARTITION_MOVED') || message.includes('PARTITION_MOVING'))) throw error;
      placements.forget(tag);
      const now = await indexOf(tag);
      if (now === tried && !message.includes('PARTITION_MOVED')) throw error;
      return run(databases[now]!);
    }
  };
  const runner: ScriptRunner = {
    evalsha: ((sha: string, keys: string[], args: string[]) => script(keys, (database) => database.evalsha(sha, keys, args))) as ScriptRunner['evalsha'],
    eval: ((text: string, keys: string[], args: string[]) => script(keys, (database) => database.eval(text, keys, args))) as ScriptRunner['eval'],
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
  const pool: Pool = {
    databases,
    databaseOf: (tag) => placements.of(control, tag),
    forget: (tag) => placements.forget(tag),
    async place(queue, partitions) {
      const tags = partitions === 1 ? [] : partitionTags(queue, partitions);
      const chosen = [rendezvous(queue, placements.size), ...placePartitions(queue, partitions, placements.size)];
      await placements.place(control, [queue, ...tags], partitions === 1 ? chosen.slice(0, 1) : chosen, keyLocking);
    },
  };
  return { ...runner, pool };
}
