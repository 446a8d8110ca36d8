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
// The schemas are built once, when this module loads; a parse is O(reply).
import { z } from 'zod';
import type { ScriptName } from '../lua/scripts.generated';
import type { GroupState } from './api-types';
import type { StoredConfig } from './config';
import { QueueError } from './errors';
import { JOB_STATES } from './job-input';

const ok = z.literal(1);
const int = z.number();
const text = z.string();
const flag = z.union([z.literal(0), z.literal(1)]).transform((value) => value === 1);
/** An epoch-ms instant where -1 means none (dueAt, timers, next runs). */
const instant = int.transform((at) => (at < 0 ? null : at));
const jobState = z.enum(JOB_STATES);
const groupState = z.enum(['ready', 'active', 'held', 'paused'] satisfies GroupState[]);
/** The stored config's JSON: validated once, when put-queue stored it; parsed, not checked, per call. */
const storedConfig = text.transform((json) => JSON.parse(json) as StoredConfig);
/** Where the next page of a listing starts, [] for none (cursors.ts). */
const position = z.array(z.union([text, int]));
/** A reply that carries nothing but its status. */
const done = z.tuple([ok]).transform(() => undefined);

/** view.lua's jobView: {id, state JSON, data, state, startedAt, expiresAt, maxAttempts}. */
const jobView = z.tuple([text, text, text, jobState, int, int, int]);
export type JobView = z.output<typeof jobView>;

/** reserve.lua's leased job: {id, state JSON, data, lease deadline, hint 's' | 'm', lease token}. */
const leasedJob = z.tuple([text, text, text, int, z.enum(['s', 'm']), text]);
export type LeasedTuple = z.output<typeof leasedJob>;

/** A job changed by hand: its view, and the due-index report. */
const jobChange = z.tuple([ok, jobView, instant]).transform(([, view, dueAt]) => ({ view, dueAt }));

/** A script whose reply depends on its first argument, a mode: one schema per mode. */
interface ByMode {
  readonly byMode: Readonly<Record<string, z.ZodType>>;
}
const byMode = <Modes extends Record<string, z.ZodType>>(modes: Modes) => ({ byMode: modes });

export const replies = {
  /** null: the repeat changed since the tick read it, nothing was committed. */
  'commit-repeat': z.union([
    z.tuple([z.literal(0)]).transform(() => null),
    z.tuple([ok, text, jobState, flag, instant]).transform(([, id, state, duplicate, dueAt]) => ({ id, state, duplicate, dueAt })),
  ]),
  'delete-queue': z.tuple([ok, flag, text, z.array(text)]).transform(([, finished, cursor, groups]) => ({ finished, cursor, groups })),
  'delete-repeat': done,
  enqueue: z
    .tuple([ok, z.array(z.tuple([text, jobState, flag])), storedConfig, z.array(leasedJob), instant])
    .transform(([, results, config, leased, dueAt]) => ({ results, config, leased, dueAt })),
  'get-group': z.tuple([ok, groupState, z.array(jobView)]).transform(([, state, views]) => ({ state, views })),
  'get-job': z.tuple([ok, jobView]).transform(([, view]) => view),
  /** The ring's values, c:0..59, f:0..59, r:0..59, null where unset (metrics.ts). */
  'get-metrics': z.tuple([ok, z.array(text.nullable())]).transform(([, values]) => values),
  'group-info': z
    .tuple([ok, z.array(z.tuple([text, int, int, groupState]))])
    .transform(([, rows]) => rows.map(([group, waiting, active, state]) => ({ group, waiting, active, state }))),
  heartbeat: z.tuple([ok, int, instant]).transform(([, expiresAt, dueAt]) => ({ expiresAt, dueAt })),
  'job-group': z.tuple([ok, text, int]).transform(([, group, seq]) => ({ group, seq })),
  'list-groups': z.tuple([ok, position, z.array(text)]).transform(([, next, names]) => ({ next, names })),
  'list-jobs': z.tuple([ok, position, z.array(jobView)]).transform(([, next, views]) => ({ next, views })),
  /** key, spec JSON, key, spec JSON, ... */
  'list-repeats': z.tuple([ok, z.array(text)]).transform(([, flat]) => flat),
  /** state null: the group has no jobs. */
  'pause-group': z
    .tuple([ok, z.union([groupState, z.literal('')]), instant])
    .transform(([, state, dueAt]) => ({ state: state === '' ? null : state, dueAt })),
  'pause-queue': z.tuple([ok, flag, instant]).transform(([, paused, dueAt]) => ({ paused, dueAt })),
  progress: done,
  'promote-job': jobChange,
  /** lookup: the token's queue, or null. */
  'publish-tokens': byMode({
    set: done,
    lookup: z.tuple([ok, text]).transform(([, queue]) => (queue === '' ? null : queue)),
  }),
  /** previous: the config replaced, null when the queue was created. */
  'put-queue': z
    .tuple([ok, flag, text, instant])
    .transform(([, created, previous, dueAt]) => ({ created, previous: previous === '' ? null : (JSON.parse(previous) as StoredConfig), dueAt })),
  'put-repeat': z.tuple([ok, instant, instant]).transform(([, nextRunAt, dueAt]) => ({ nextRunAt, dueAt })),
  'queue-config': z.tuple([ok, storedConfig]).transform(([, config]) => config),
  'queue-info': z
    .tuple([ok, storedConfig, flag, int, int, int, int, int, int])
    .transform(([, config, paused, waiting, delayed, active, completed, failed, groups]) => ({
      config,
      paused,
      counts: { waiting, delayed, active, completed, failed, groups },
    })),
  'queue-timer': z.tuple([ok, instant]).transform(([, timer]) => timer),
  registry: byMode({
    add: done,
    remove: done,
    list: z.tuple([ok, z.array(text)]).transform(([, names]) => names),
    count: z.tuple([ok, int]).transform(([, count]) => count),
  }),
  'remove-job': z.tuple([ok, instant]).transform(([, dueAt]) => ({ dueAt })),
  'retry-job': jobChange,
  settle: z
    .tuple([ok, z.array(z.tuple([text, z.enum(['completed', 'waiting', 'failed', 'LEASE_LOST'])])), storedConfig, z.array(leasedJob), instant])
    .transform(([, results, config, leased, dueAt]) => ({ results: results.map(([id, state]) => ({ id, state })), config, leased, dueAt })),
  'tick-scan': z.union([
    z.tuple([ok, z.literal('idle'), instant]).transform(([, kind, timer]) => ({ kind, timer })),
    z.tuple([ok, z.literal('locked')]).transform(([, kind]) => ({ kind })),
    z.tuple([ok, z.literal('due'), z.array(text)]).transform(([, kind, groups]) => ({ kind, groups })),
  ]),
  tick: z
    .tuple([ok, instant, flag, flag, z.array(z.tuple([text, text]))])
    .transform(([, nextDueAt, readyDue, more, dueRepeats]) => ({ nextDueAt, readyDue, more, dueRepeats })),
  'update-job': jobChange,
} satisfies Record<ScriptName, z.ZodType | ByMode>;

type Replies = typeof replies;
type ModesOf<N extends ScriptName> = Replies[N] extends ByMode ? Replies[N]['byMode'] : never;

/** The arguments of script `N`: a script with modes takes its mode first. */
export type ArgsOf<N extends ScriptName> = [ModesOf<N>] extends [never]
  ? readonly (string | number)[]
  : readonly [keyof ModesOf<N> & string, ...(string | number)[]];

/** What script `N` called with `args` answers, decoded. */
export type ReplyOf<N extends ScriptName, A> = Replies[N] extends z.ZodType
  ? z.output<Replies[N]>
  : A extends readonly [infer Mode extends keyof ModesOf<N>, ...unknown[]]
    ? z.output<ModesOf<N>[Mode]>
    : never;

/** Checks and decodes the reply of script `name` (called in mode `mode`, if it has modes). */
export function decodeReply(name: ScriptName, mode: unknown, reply: readonly unknown[]): unknown {
  const entry: z.ZodType | ByMode = replies[name];
  const schema = 'byMode' in entry ? entry.byMode[String(mode)] : entry;
  const parsed = schema?.safeParse(reply);
  if (parsed?.success) return parsed.data;
  const error = new QueueError('INTERNAL', `${name}: unexpected reply`);
  (error as { cause?: unknown }).cause = parsed?.error ?? `no reply schema for mode ${String(mode)}`;
  throw error;
}
