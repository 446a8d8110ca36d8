// Events as a Worker hands them to a queue's hub, and what a test reads back from a stream: shared
// by the hub's tests in workerd (test/events) and on the Node server (test/server/hub.test.ts),
// which drive the same hub (src/core/events/hub-core.ts) through the same behaviours.
import { expect } from 'vitest';
import type { PublishedEvent, PublishedPlace } from '../../src/core/events/wire';
import { compareEventIds } from '../../src/protocol/event-id';
import { type JobEventName, streamEventSchema } from '../../src/protocol/events';
import type { SseEvent } from '../../src/protocol/sse';

/** The epoch of the partitions' sequences in placed(). */
export const EPOCH = 1_700_000_000_000;

/** A job event of `queue` for job `id` in `group`, valid for src/protocol/events.ts. */
export function jobEvent(queue: string, id: string, group: string, event: JobEventName = 'added'): PublishedEvent {
  const base = { id, queue, group, at: Date.now() };
  switch (event) {
    case 'added':
      return { event, data: { ...base, attempt: 0, state: 'waiting' } };
    case 'active':
      return { event, data: { ...base, attempt: 1, state: 'active' } };
    case 'completed':
      return { event, data: { ...base, attempt: 1, state: 'completed', result: { ok: true } } };
    case 'cancelled':
      return { event, data: { ...base, attempt: 0, state: 'cancelled' } };
    default:
      throw new Error(`no test event ${event}`);
  }
}

/** Job `id`'s event `name` of `queue`, at `place` (partition `queue`, EPOCH, unless it says). */
export function placed(queue: string, id: string, event: JobEventName, place: Omit<PublishedPlace, 'part' | 'epoch'> & Partial<PublishedPlace>): PublishedEvent {
  const attempt = event === 'added' ? 0 : 1;
  const state = { added: 'waiting', active: 'active', progress: 'active', completed: 'completed' }[event as string] ?? 'waiting';
  const extra = event === 'progress' ? { progress: 50 } : {};
  return { event, data: { id, queue, group: 'g', attempt, state, at: Date.now(), ...extra }, place: { part: queue, epoch: EPOCH, ...place } };
}

/** Numbered events `seqs` of `queue`, one per job `j<seq>` (added). */
export const numbered = (queue: string, ...seqs: number[]) => seqs.map((seq) => placed(queue, `j${seq}`, 'added', { seq }));

/** The events of a stream as the client kit will parse them. */
export function parsed(events: SseEvent[]) {
  return events.map((e) => streamEventSchema.parse({ event: e.type, ...(e.type !== 'gap' && { eventId: e.lastEventId }), data: JSON.parse(e.data) }));
}

/** Each event's job id. */
export const ids = (events: SseEvent[]) => events.map((e) => JSON.parse(e.data).id as string);

/** Each event as `<name> <job>` (a gap as `gap <missing>`). */
export const lines = (events: SseEvent[]) =>
  events.map((e) => {
    const data = JSON.parse(e.data);
    return e.type === 'gap' ? `gap ${data.missing}` : `${e.type} ${data.id}`;
  });

/** The stream's ids increase, whatever came out of order. */
export function expectIncreasing(events: SseEvent[]): void {
  const ids = events.filter((e) => e.type !== 'gap').map((e) => e.lastEventId);
  for (let i = 1; i < ids.length; i++) expect(compareEventIds(ids[i - 1]!, ids[i]!)).toBeLessThan(0);
}
