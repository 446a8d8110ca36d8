// The job events a script returns in its reply while its queue's meta says someone may listen
// (meta's `ev`, "events wanted until": src/lua/includes/events.lua), checked and decoded.
// replies.ts checks each tuple with `eventList` as part of the script's reply, exactly, one zod
// tuple per kind; the engine decodes the checked tuples with the tag the script ran on (the
// queue's name goes into every event's data), as it decodes leased jobs (leases.ts toLeasedJob).
// What comes out is an event of src/protocol/events.ts without its SSE id, which the hub that
// numbers a queue's events assigns. No event, no cost: a reply without the list decodes as it did.
// The list starts with its place in the partition's event sequence (meta.lua placeEvents): what
// the hub orders each partition's events by (src/core/events/order.ts), whichever Worker hands
// them over and when; the engine's results carry the events without it.
import * as z from 'zod';
import type { EventData, JobEventName } from '../../protocol/events';
import { queueOfTag } from './partitions';

const text = z.string();
const int = z.number();

/** What every tuple starts with: kind, job id, group, state, attempt, at (epoch ms). */
const head = <K extends JobEventName, S extends z.ZodType>(kind: K, state: S) => [z.literal(kind), text, text, state, int, int] as const;

/**
 * One tuple per kind, as events.lua writes them; kind-specific values follow the head. A union of
 * exact tuples, the most frequent first: warm, it checks 1,000 events in about 0.2 ms, what as
 * many leased tuples take (measured with zod 4 on the bench machine).
 */
const eventTuple = z.union([
  z.tuple([...head('added', z.enum(['waiting', 'delayed'])), int]),
  z.tuple([...head('active', z.literal('active'))]),
  z.tuple([...head('completed', z.literal('completed')), text, z.literal([0, 1])]),
  z.tuple([...head('retrying', z.literal('waiting')), text, int]),
  z.tuple([...head('failed', z.literal('failed')), text]),
  z.tuple([...head('progress', z.literal('active')), text]),
  z.tuple([...head('cancelled', z.literal('cancelled'))]),
  z.tuple([z.literal('expired'), text, text, z.literal('expired'), z.literal(0), int, int]),
]);
export type EventTuple = z.output<typeof eventTuple>;

/**
 * The last element of a script's reply, present only while events are wanted: its place
 * {epoch, last, numbered 0|1}, then the events.
 */
export const eventList = z.tuple([int, int, z.literal([0, 1])], eventTuple).optional();
export type EventList = NonNullable<z.output<typeof eventList>>;

/**
 * Where a call's events stand in their partition's event sequence (meta's `es`). `numbered`:
 * they are `last + 1`, `last + 2`...; else they took no number (a call that writes no meta:
 * progress) and follow event `last`. `epoch` tells the partition's sequences apart (a queue made
 * again starts a new one); 0: no event of the partition was numbered yet.
 */
export interface EventPlace {
  epoch: number;
  last: number;
  numbered: boolean;
}

/** The place a list of events starts with. */
export function placeOf(list: EventList): EventPlace {
  return { epoch: list[0], last: list[1], numbered: list[2] === 1 };
}

/** A job event as a script reported it: its name and data, without the SSE id. */
export type ScriptEvent = { [N in JobEventName]: { event: N; data: EventData<N> } }[JobEventName];

/** JSON text a script passed on as it was given (a result, a progress value), as the model types it. */
const json = (text: string) => JSON.parse(text) as EventData<'progress'>['progress'];

/** An event's data from its tuple: every field of the model, `queue` from the tag. */
function toEvent(queue: string, tuple: EventTuple): ScriptEvent {
  const [, id, group, , attempt, at] = tuple;
  const base = { id, queue, group, attempt, at };
  switch (tuple[0]) {
    case 'added': {
      const [, , , state, , , runAt] = tuple;
      return { event: 'added', data: { ...base, state, ...(runAt >= 0 && { runAt }) } };
    }
    case 'active':
      return { event: 'active', data: { ...base, state: 'active' } };
    case 'completed': {
      const [, , , , , , result, truncated] = tuple;
      const data = { ...base, state: 'completed' as const, ...(result !== '' && { result: json(result) }) };
      return { event: 'completed', data: truncated === 1 ? { ...data, resultTruncated: true } : data };
    }
    case 'retrying':
      return { event: 'retrying', data: { ...base, state: 'waiting', error: tuple[6], retryAt: tuple[7] } };
    case 'failed':
      return { event: 'failed', data: { ...base, state: 'failed', error: tuple[6] } };
    case 'progress':
      return { event: 'progress', data: { ...base, state: 'active', progress: json(tuple[6]) } };
    case 'cancelled':
      return { event: 'cancelled', data: { ...base, state: 'cancelled' } };
    case 'expired':
      return { event: 'expired', data: { ...base, attempt: 0, state: 'expired', expiresAt: tuple[6] } };
  }
}

/** The events of a reply of a script that ran on `tag` (a queue, or a partition of one), in order. */
export function toScriptEvents(tag: string, list: EventList): ScriptEvent[] {
  const queue = queueOfTag(tag);
  const [, , , ...tuples] = list;
  return tuples.map((tuple) => toEvent(queue, tuple));
}

/**
 * `value` with the events of a reply, decoded, as its optional `events` field; without the field
 * when the reply had no list, so that a result reads exactly as it did while nobody listens.
 */
export function withEvents<T extends object>(value: T, tag: string, list: EventList | undefined): T & { events?: ScriptEvent[] } {
  return list === undefined ? value : { ...value, events: toScriptEvents(tag, list) };
}

/** Events of several calls, in order; undefined when none of them had a list. */
export function joinEvents(lists: readonly (readonly ScriptEvent[] | undefined)[]): ScriptEvent[] | undefined {
  const present = lists.filter((list) => list !== undefined);
  return present.length === 0 ? undefined : present.flat();
}
