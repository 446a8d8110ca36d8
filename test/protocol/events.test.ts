// The job event model (src/protocol/events.ts) and its SSE ids (src/protocol/event-id.ts): every
// event's schema takes an example and refuses a broken one; ids order as their stream does; and
// each example goes through the SSE encoder and back, read by eventsource-parser and by our
// SseParser, unchanged.
import { createParser } from 'eventsource-parser';
import { describe, expect, it } from 'vitest';
import { FINISHED_STATES } from '../../src/protocol/constants';
import { compareEventIds, eventIdTime, formatEventId, isEventId } from '../../src/protocol/event-id';
import {
  FINAL_EVENT_NAMES, JOB_EVENT_NAMES, STREAM_EVENT_NAMES, type StreamEvent, eventDataSchemas, streamEventSchema,
} from '../../src/protocol/events';
import { SseParser, encodeEvent } from '../../src/protocol/sse';

const T = 1_767_225_600_000;
const job = { id: 'job-1', queue: 'emails', group: 'user:42 ü', at: T };

/** One example of every event, in the order a job meets them. */
const EXAMPLES: StreamEvent[] = [
  { event: 'added', eventId: `${T}-0`, data: { ...job, state: 'delayed', attempt: 0, runAt: T + 5000 } },
  { event: 'active', eventId: `${T + 5000}-0`, data: { ...job, state: 'active', attempt: 1 } },
  { event: 'progress', eventId: `${T + 5000}-1`, data: { ...job, state: 'active', attempt: 1, progress: { done: 3, of: 10, note: 'a\nb 🎉' } } },
  { event: 'retrying', eventId: `${T + 6000}-0`, data: { ...job, state: 'waiting', attempt: 1, error: 'HTTP 500', retryAt: T + 7000 } },
  { event: 'completed', eventId: `${T + 8000}-0`, data: { ...job, state: 'completed', attempt: 2, result: ['ok', null] } },
  { event: 'failed', eventId: `${T + 8000}-1`, data: { ...job, state: 'failed', attempt: 3, error: 'gave up' } },
  { event: 'cancelled', eventId: `${T + 8000}-2`, data: { ...job, state: 'cancelled', attempt: 0 } },
  { event: 'expired', eventId: `${T + 9000}-0`, data: { ...job, state: 'expired', attempt: 0, expiresAt: T + 8500 } },
  { event: 'gap', data: { queue: 'emails', id: 'job-1', lastEventId: `${T - 1}-0`, oldestEventId: `${T}-0`, at: T + 9500 } },
];

/** A broken variant of each example: a field a reader counts on is wrong or missing. */
const BROKEN: Record<string, (data: Record<string, unknown>) => Record<string, unknown>> = {
  added: (d) => ({ ...d, state: 'active' }),
  active: (d) => ({ ...d, attempt: 0 }),
  progress: ({ progress: _, ...d }) => d,
  retrying: (d) => ({ ...d, retryAt: 'soon' }),
  completed: (d) => ({ ...d, state: 'failed' }),
  failed: (d) => ({ ...d, error: 42 }),
  cancelled: ({ group: _, ...d }) => d,
  expired: (d) => ({ ...d, attempt: 1 }),
  gap: (d) => ({ ...d, oldestEventId: 'yesterday' }),
};

describe('event schemas', () => {
  it('name every event once, the final ones being the finished states', () => {
    expect(EXAMPLES.map((e) => e.event)).toEqual([...STREAM_EVENT_NAMES]);
    expect(Object.keys(eventDataSchemas)).toEqual([...STREAM_EVENT_NAMES]);
    expect([...FINAL_EVENT_NAMES]).toEqual([...FINISHED_STATES]);
    expect(FINAL_EVENT_NAMES.every((name) => (JOB_EVENT_NAMES as readonly string[]).includes(name))).toBe(true);
  });

  for (const example of EXAMPLES) {
    it(`${example.event}: parses the example and refuses a broken one`, () => {
      expect(streamEventSchema.parse(example)).toEqual(example);
      expect(eventDataSchemas[example.event].parse(example.data)).toEqual(example.data);
      const broken = { ...example, data: BROKEN[example.event]!(example.data as Record<string, unknown>) };
      expect(streamEventSchema.safeParse(broken).success).toBe(false);
      expect(eventDataSchemas[example.event].safeParse(broken.data).success).toBe(false);
    });
  }

  it('refuses a job event without a valid SSE id, an unknown name and a bad time', () => {
    const [added] = EXAMPLES as [Extract<StreamEvent, { event: 'added' }>];
    const { eventId: _, ...noId } = added;
    expect(streamEventSchema.safeParse(noId).success).toBe(false);
    expect(streamEventSchema.safeParse({ ...added, eventId: '01-0' }).success).toBe(false);
    expect(streamEventSchema.safeParse({ ...added, event: 'succeeded' }).success).toBe(false);
    expect(streamEventSchema.safeParse({ ...added, data: { ...added.data, at: -1 } }).success).toBe(false);
    expect(streamEventSchema.safeParse({ ...added, data: { ...added.data, at: 1.5 } }).success).toBe(false);
  });

  it('drops unknown fields, so readers survive fields added later; leaves out what a reader may not see', () => {
    const [, , , retrying, completed, failed] = EXAMPLES;
    expect(streamEventSchema.parse({ ...completed, data: { ...completed!.data, newField: 1 } })).toEqual(completed);
    const { error: _e, ...noError } = retrying!.data as Record<string, unknown>;
    const { result: _r, ...noResult } = completed!.data as Record<string, unknown>;
    const { error: _f, ...noFailure } = failed!.data as Record<string, unknown>;
    expect(eventDataSchemas.retrying.safeParse(noError).success).toBe(true);
    expect(eventDataSchemas.completed.safeParse(noResult).success).toBe(true);
    expect(eventDataSchemas.failed.safeParse(noFailure).success).toBe(true);
  });
});

describe('event ids', () => {
  it('are canonical <ms>-<seq>', () => {
    for (const id of ['0-0', '1700000000000-0', '1700000000000-18446744073709551615', '99999999999999-1']) expect(isEventId(id), id).toBe(true);
    for (const id of ['', '1', '1-', '-1', '01-0', '1-00', '1-0 ', ' 1-0', '1-0-0', '100000000000000-0', '1.5-0', '1_0-0', 1]) {
      expect(isEventId(id), String(id)).toBe(false);
    }
    expect(formatEventId(T, 3)).toBe(`${T}-3`);
    expect(eventIdTime(`${T}-3`)).toBe(T);
    expect(() => formatEventId(-1, 0)).toThrow(RangeError);
    expect(() => formatEventId(T, 0.5)).toThrow(RangeError);
    expect(() => compareEventIds('1-0', 'x')).toThrow(RangeError);
  });

  it('compare as the stream orders them, not as strings', () => {
    const ordered = ['0-0', '9-0', '9-1', '9-2', '9-10', '10-0', '99-99', `${T}-0`, `${T}-9`, `${T}-10`, `${T + 1}-0`, '1700000000000-18446744073709551615'];
    const sortedIds = ordered.slice(0, -1);
    const shuffled = [...sortedIds].reverse();
    expect(shuffled.sort(compareEventIds)).toEqual(sortedIds);
    expect([...sortedIds].sort()).not.toEqual(sortedIds); // why a compare function is needed
    expect(compareEventIds('9-1', '9-1')).toBe(0);
    expect(compareEventIds('1700000000000-18446744073709551615', '1700000000000-18446744073709551614')).toBeGreaterThan(0);
    expect(compareEventIds('1700000000000-18446744073709551615', '1700000000001-0')).toBeLessThan(0);
  });
});

describe('events over SSE', () => {
  const stream = EXAMPLES.map((e) => encodeEvent(e.event, e.data, 'eventId' in e ? e.eventId : undefined)).join('');
  const bytes = new TextEncoder().encode(stream);

  it('come back unchanged through eventsource-parser', () => {
    const read: StreamEvent[] = [];
    const parser = createParser({
      onEvent: (e) => read.push(streamEventSchema.parse({ event: e.event, eventId: e.id, data: JSON.parse(e.data) })),
    });
    parser.feed(new TextDecoder().decode(bytes));
    expect(read).toEqual(EXAMPLES);
  });

  it('come back unchanged through SseParser, in chunks of every size', () => {
    for (const size of [1, 2, 3, 7, 64, bytes.length]) {
      const parser = new SseParser();
      const read: StreamEvent[] = [];
      for (let at = 0; at < bytes.length; at += size) {
        for (const e of parser.feed(bytes.subarray(at, at + size))) {
          // `gap` has no id of its own: the one it carries along is the previous event's, dropped by its schema.
          read.push(streamEventSchema.parse({ event: e.type, eventId: e.lastEventId, data: JSON.parse(e.data) }));
        }
      }
      expect(read, `chunks of ${size}`).toEqual(EXAMPLES);
      expect(parser.lastEventId).toBe(`${T + 9000}-0`); // a reconnect resumes after the last job event
    }
  });
});
