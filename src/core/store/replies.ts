// The reply of every Lua script, checked and decoded before its caller sees it: callScript
// (scripts.ts) parses a script's reply with its schema here, and a reply of another shape is an
// INTERNAL QueueError naming the script, never an `undefined` read further on.
//
// Written as zod schemas here rather than as a reply line in each Lua header that the build
// reads: zod is how every other boundary is checked, and a header notation would need a parser
// and a code generator of its own only to end up as these schemas. A script's `Returns` line
// stays the prose its reader sees; this file follows it, one entry per script by its name, in
// the order of src/lua, and `satisfies Record<ScriptName, ...>` fails to compile while a script
// has no entry.
//
// What the wire does to a Lua reply (Lua -> RESP -> Upstash REST -> @upstash/redis, built with
// automaticDeserialization off in redis.ts, so nothing is JSON-parsed on the way): numbers come
// as integers (fractions cut), strings as strings (a number sent as a string stays a string),
// false and nil as null, and a nil inside a table ends the array there, so a reply cut short
// fails its tuple. Refusals (a negative status) never reach these schemas: runScript turns them
// into their errors first.
//
// Each entry is a zod schema that checks the reply and a plain function that decodes what
// passed (names its fields, -1 to null, 0|1 to booleans). A script that may lower its queue's
// timer reports it in its reply (dueAt): its entry says where, and callScript lowers the due
// index to it, so the decoded value leaves it out. The schemas are built once, when this
// module loads, and a check is O(reply). Decoding is left out of zod on purpose: a zod transform
// over a large value made a 500-job enqueue reply ten times slower to parse (1-3 ms instead of
// 0.1-0.3 ms, measured with zod 4.1 on the bench machine).
//
// A script that changes jobs ends its reply with the job events it caused while its queue's meta
// says someone may listen (events.ts, src/lua/includes/events.lua), and only then: `events` is
// that optional last element, passed on as checked tuples for the engine to decode with its tag.
import * as z from 'zod';
import type { ScriptName } from '../../lua/scripts.generated';
import { type GroupLimits, type StoredConfig, readStoredConfig } from '../../protocol/config';
import { QueueError } from '../../protocol/errors';
import { type GroupState, JOB_STATES } from '../../protocol/job-input';
import { type EventList, eventList } from './events';

const ok = z.literal(1);
const int = z.number();
const text = z.string();
const bit = z.literal([0, 1]);
const jobState = z.enum(JOB_STATES);
/** A known id's answer may name the state its job ended in, `removed` included (dedup.lua). */
const enqueuedState = z.enum([...JOB_STATES, 'removed']);
const groupState = z.enum(['ready', 'active', 'held', 'paused'] satisfies GroupState[]);
/** Where the next page of a listing starts, [] for none (cursors.ts). */
const position = z.array(z.union([text, int]));

/** view.lua's jobView: {id, state JSON, data, state, startedAt, expiresAt, maxAttempts, history JSON?}. */
const jobTuple = z.tuple([text, text, text, jobState, int, int, int, text.optional()]);
export type JobTuple = z.output<typeof jobTuple>;

/**
 * reserve.lua's leased job: {id, state JSON, data, lease deadline, hint 's' | 'm', lease token,
 * message id, its place in its delivery (0: the first; absent for a job leased solo)}.
 */
const leasedTuple = z.tuple([text, text, text, int, z.enum(['s', 'm']), text, text, int.optional()]);
export type LeasedTuple = z.output<typeof leasedTuple>;

/**
 * outcome.lua's recorded outcome callbacks, leased to the caller to send: {job id, record JSON,
 * the queue's signingSecret, its signingSecretNext} ('' for none).
 */
const outcomesToSend = z.array(z.tuple([text, text, text, text]));

/** An epoch-ms instant where -1 means none (dueAt, timers, next runs). */
const instant = (at: number) => (at < 0 ? null : at);
/** The stored config's JSON: validated once, when put-queue stored it; parsed, not checked, per call. */
const storedConfig = (json: string): StoredConfig => readStoredConfig(json);

/** A group's runtime limits as meta stores them, '' for none (validated when they were set). */
const groupLimits = (json: string) => (json === '' ? null : (JSON.parse(json) as GroupLimits));

/** How one script's reply is checked (`schema`) and then decoded (`decode`). */
interface Reply<S extends z.ZodType = z.ZodType, T = unknown> {
  readonly schema: S;
  // A method, so that any entry fits `Reply` whatever its tuple.
  decode(checked: z.output<S>): T;
  /** The index of dueAt in the reply, for a script that may lower its queue's timer. */
  readonly dueAt?: number;
}
/** The indexes of a tuple's numbers: where a reply's dueAt may be. */
type NumberAt<Tuple> = Tuple extends readonly unknown[]
  ? { [K in keyof Tuple]: Tuple[K] extends number ? (K extends `${infer I extends number}` ? I : never) : never }[number]
  : never;
const reply = <S extends z.ZodType, T>(
  schema: S,
  decode: (checked: z.output<S>) => T,
  where: { dueAt?: NumberAt<z.output<S>> } = {},
): Reply<S, T> => ({ schema, decode, ...where });

/** A reply that carries nothing but its status. */
const done = reply(z.tuple([ok]), () => undefined);
/** A job changed by hand: its view. */
const jobChange = reply(z.tuple([ok, jobTuple, int, eventList]), ([, view, , events]) => ({ view, events }), { dueAt: 2 });

/** A script whose reply depends on its first argument, a mode: one entry per mode. */
interface ByMode {
  readonly byMode: Readonly<Record<string, Reply>>;
}
const byMode = <Modes extends Record<string, Reply>>(modes: Modes) => ({ byMode: modes });

export const replies = {
  /** The outcome callback the cancel recorded, if any. */
  'cancel-job': reply(z.tuple([ok, int, outcomesToSend, eventList]), ([, , recorded, events]) => ({ recorded, events }), { dueAt: 1 }),
  'clean-jobs': reply(z.tuple([ok, int, int]), ([, deleted, left]) => ({ deleted, left })),
  /**
   * null: the repeat changed since the tick read it, nothing was committed. Its dueAt is not
   * used: the tick that commits reads the queue's timer back afterwards (scheduler.ts).
   */
  'commit-repeat': reply(z.union([z.tuple([z.literal(0)]), z.tuple([ok, text, jobState, bit, int, eventList])]), (checked) =>
    checked[0] === 0 ? null : { id: checked[1], state: checked[2], duplicate: checked[3] === 1, events: checked[5] },
  ),
  'delete-queue': reply(z.tuple([ok, bit, text, z.array(text)]), ([, finished, cursor, groups]) => ({ finished: finished === 1, cursor, groups })),
  'delete-repeat': done,
  /** results: {id, state, flag} per job, flag 0 new, 1 duplicate, 2 debounced. */
  enqueue: reply(
    z.tuple([ok, z.array(z.tuple([text, enqueuedState, z.literal([0, 1, 2])])), text, z.array(leasedTuple), int, eventList]),
    ([, results, config, leased, , events]) => ({ results, config: storedConfig(config), leased, events }),
    { dueAt: 4 },
  ),
  /** id, group, id, group, ...: the oldest first ('' for a member without a record). */
  'finished-page': reply(z.tuple([ok, z.array(text)]), ([, page]) => page),
  /** state '': no jobs (shown while the group has limits); limits: the group's own ('' none). */
  'get-group': reply(z.tuple([ok, z.union([groupState, z.literal('')]), z.array(jobTuple), text, int, int]), ([, state, views, limits, active, concurrency]) => ({
    state: state === '' ? ('idle' as const) : state,
    views,
    limits: groupLimits(limits),
    active,
    concurrency,
  })),
  /** callbackUrl: the job's or its queue's; outcome: a pending record's JSON, or the summary the job keeps. */
  'get-job': reply(z.tuple([ok, jobTuple, text, text]), ([, view, callbackUrl, outcome]) => ({
    view,
    callbackUrl: callbackUrl === '' ? null : callbackUrl,
    outcome: outcome === '' ? null : outcome,
  })),
  /** The ring's values, c:0..59, f:0..59, r:0..59, null where unset (minutes.ts). */
  'get-minutes': reply(z.tuple([ok, z.array(text.nullable())]), ([, values]) => values),
  'group-info': reply(z.tuple([ok, z.array(z.tuple([text, int, int, groupState, int]))]), ([, rows]) =>
    rows.map(([group, waiting, active, state, concurrency]) => ({ group, waiting, active, state, concurrency })),
  ),
  /** The group's limits as now stored. */
  'group-limits': reply(z.tuple([ok, text, int]), ([, limits]) => groupLimits(limits), { dueAt: 2 }),
  /** The lease's new deadline. */
  heartbeat: reply(z.tuple([ok, int, int]), ([, expiresAt]) => expiresAt, { dueAt: 2 }),
  /**
   * recordNeeded: settle reads its record (a callback URL of its own, or a waiter); named: its
   * producer named its id; attempt: the attempt under way, only while events are wanted.
   */
  'job-group': reply(z.tuple([ok, text, int, bit, bit, int.optional()]), ([, group, seq, record, named, attempt]) => ({
    group,
    seq,
    recordNeeded: record === 1,
    named: named === 1,
    ...(attempt !== undefined && { attempt }),
  })),
  'list-groups': reply(z.tuple([ok, position, z.array(text)]), ([, next, names]) => ({ next, names })),
  'list-jobs': reply(z.tuple([ok, position, z.array(jobTuple)]), ([, next, views]) => ({ next, views })),
  /** key, spec JSON, key, spec JSON, ... */
  'list-repeats': reply(z.tuple([ok, z.array(text)]), ([, flat]) => flat),
  /** The group's state; null: the group has no jobs. */
  'move-fence': done,
  /** Where the key's next page starts (null: none), and each key's entries as a flat list. */
  'move-read': reply(z.tuple([ok, text]).rest(z.array(text)), ([, next, ...pages]) => ({ next: next === '' ? null : next, pages })),
  /** Whether the lease is this move's, else the database the move holding it goes to. */
  'move-lock': reply(z.union([z.tuple([ok, z.literal(1)]), z.tuple([ok, z.literal(0), int])]), ([, mine, database]) => (mine === 1 ? null : database!)),
  /** The database the record names now, and whether the move still held its lease. */
  'move-place': reply(z.tuple([ok, int, bit]), ([, database, held]) => ({ database, held: held === 1 })),
  'move-write': done,
  'pause-group': reply(z.tuple([ok, z.union([groupState, z.literal('')]), int]), ([, state]) => (state === '' ? null : state), { dueAt: 2 }),
  /** Whether the queue is paused now. */
  'pause-queue': reply(z.tuple([ok, bit, int]), ([, paused]) => paused === 1, { dueAt: 2 }),
  progress: reply(z.tuple([ok, eventList]), ([, events]) => events),
  'publish-rate': done,
  /** previous: the config replaced, null when the queue was created. */
  'put-queue': reply(
    z.tuple([ok, bit, text, int]),
    ([, created, previous]) => ({ created: created === 1, previous: previous === '' ? null : storedConfig(previous) }),
    { dueAt: 3 },
  ),
  /** The repeat's next run, null for none. */
  'put-repeat': reply(z.tuple([ok, int, int]), ([, nextRunAt]) => instant(nextRunAt), { dueAt: 2 }),
  'queue-config': reply(z.tuple([ok, text]), ([, config]) => storedConfig(config)),
  /** oldestReady: the job that could start now with the lowest orderMs, null for none. */
  'queue-info': reply(
    z.tuple([ok, text, bit, int, int, int, int, int, int, int, text, int, int]),
    ([, config, paused, waiting, delayed, active, completed, failed, groups, cancelled, oldestId, oldestOrderMs, expired]) => ({
      config: storedConfig(config),
      paused: paused === 1,
      counts: { waiting, delayed, active, completed, failed, cancelled, expired, groups },
      oldestReady: oldestId === '' ? null : { id: oldestId, orderMs: oldestOrderMs },
    }),
  ),
  /** The database each name lives on. */
  place: reply(z.tuple([ok, z.array(int)]), ([, databases]) => databases),
  'queue-timer': reply(z.tuple([ok, int]), ([, timer]) => instant(timer)),
  /** values: queue-totals.lua's fields in its order, '' where unset; then held groups, delayed jobs. */
  'queue-totals': reply(z.tuple([ok, z.tuple([bit]).rest(text), int, int]), ([, [exists, ...values], held, delayed]) => ({
    exists: exists === 1,
    values,
    held,
    delayed,
  })),
  registry: byMode({
    add: done,
    remove: done,
    list: reply(z.tuple([ok, z.array(text)]), ([, names]) => names),
    count: reply(z.tuple([ok, int]), ([, count]) => count),
  }),
  /** groups: declare these and call again with the same cursor (nothing was done). */
  repair: reply(
    z.tuple([ok, text, z.array(text), int, int, int]),
    ([, cursor, groups, reindexed, offered]) => ({ cursor, groups, reindexed, offered }),
    { dueAt: 5 },
  ),
  'rejoin-job': jobChange,
  'remove-job': reply(z.tuple([ok, int]), () => undefined, { dueAt: 1 }),
  'retry-jobs': reply(z.tuple([ok, int, int, int, eventList]), ([, retried, left, , events]) => ({ retried, left, events }), { dueAt: 3 }),
  'settle-outcomes': reply(z.tuple([ok, int]), () => undefined, { dueAt: 1 }),
  settle: reply(
    z.tuple([
      ok,
      z.array(z.tuple([text, z.enum(['completed', 'waiting', 'failed', 'LEASE_LOST', 'JOB_CANCELLED', 'OUT_OF_ORDER'])])),
      text,
      z.array(leasedTuple),
      int,
      outcomesToSend,
      eventList,
    ]),
    ([, results, config, leased, , recorded, events]) => ({
      results: results.map(([id, state]) => ({ id, state })),
      config: storedConfig(config),
      leased,
      recorded,
      events,
    }),
    { dueAt: 4 },
  ),
  /**
   * idle: nothing to do before `timer`; locked: another tick runs; work (tick-scan.lua's 'due'):
   * tick with these groups' keys.
   */
  'tick-scan': reply(
    z.union([z.tuple([ok, z.literal('idle'), int]), z.tuple([ok, z.literal('locked')]), z.tuple([ok, z.literal('due'), z.array(text)])]),
    (checked) =>
      checked[1] === 'idle'
        ? { kind: checked[1], timer: instant(checked[2]) }
        : checked[1] === 'locked'
          ? { kind: checked[1] }
          : { kind: 'work' as const, groups: checked[2] },
  ),
  /** repeatsToRun: {key, spec JSON} of each repeat whose next run has come. */
  tick: reply(
    z.tuple([ok, int, bit, bit, z.array(z.tuple([text, text])), outcomesToSend, eventList]),
    ([, nextDueAt, readyNow, more, repeatsToRun, outcomes, events]) => ({
      nextDueAt: instant(nextDueAt),
      readyNow: readyNow === 1,
      more: more === 1,
      repeatsToRun,
      outcomes,
      events,
    }),
  ),
  'totals-cache': byMode({
    read: reply(z.tuple([ok, z.array(text), z.array(text)]), ([, names, flat]) => {
      const entries = new Map<string, string>();
      for (let i = 0; i + 1 < flat.length; i += 2) entries.set(flat[i]!, flat[i + 1]!);
      return { names, entries };
    }),
    write: done,
    forget: done,
  }),
  'update-job': jobChange,
  /** Events wanted until (epoch ms), as meta now holds it. */
  'want-events': reply(z.tuple([ok, int]), ([, until]) => until),
} satisfies Record<ScriptName, Reply | ByMode>;

type Replies = typeof replies;
type ModesOf<N extends ScriptName> = Replies[N] extends ByMode ? Replies[N]['byMode'] : never;

/** The arguments of script `N`: a script with modes takes its mode first. */
export type ArgsOf<N extends ScriptName> = [ModesOf<N>] extends [never]
  ? readonly (string | number)[]
  : readonly [keyof ModesOf<N> & string, ...(string | number)[]];

type Decoded<R> = R extends Reply<z.ZodType, infer T> ? T : never;

/** What script `N` called with `args` answers, decoded. */
export type ReplyOf<N extends ScriptName, A> = Replies[N] extends ByMode
  ? A extends readonly [infer Mode extends keyof ModesOf<N>, ...unknown[]]
    ? Decoded<ModesOf<N>[Mode]>
    : never
  : Decoded<Replies[N]>;

/**
 * Checks and decodes the reply of script `name` (called in mode `mode`, if it has modes): its
 * value, and the timer it reports it lowered (dueAt, null for none).
 */
export function decodeReply(name: ScriptName, mode: unknown, raw: readonly unknown[]): { value: unknown; dueAt: number | null; events?: EventList } {
  const entry: Reply | ByMode = replies[name];
  const script = 'byMode' in entry ? entry.byMode[String(mode)] : entry;
  const checked = script?.schema.safeParse(raw);
  if (script && checked?.success) {
    // The schema checked that element: an integer.
    const dueAt = script.dueAt === undefined ? null : instant((checked.data as readonly number[])[script.dueAt]!);
    return { value: script.decode(checked.data), dueAt, events: eventsOf(script.schema, checked.data as readonly unknown[]) };
  }
  const error = new QueueError('INTERNAL', `${name}: unexpected reply`);
  (error as { cause?: unknown }).cause = checked?.error ?? `no reply for mode ${String(mode)}`;
  throw error;
}

/** The events a reply ends with: its last element, when its schema ends with an event list and the reply has it. */
function eventsOf(schema: z.ZodType, checked: readonly unknown[]): EventList | undefined {
  if (!(schema instanceof z.ZodTuple)) return undefined;
  const { items } = schema.def;
  return items[items.length - 1] === eventList && checked.length === items.length ? (checked[items.length - 1] as EventList) : undefined;
}
