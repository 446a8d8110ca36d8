// Checks a queue stream as one reader got it against what an endpoint was sent, after the run:
// every job's events, in order per job, none missing, none repeated, no gap; ids increasing
// across the stream. Record everything (the reader's events, the endpoint's requests), assert at
// the end, as the other checkers of test/helpers do. Each check returns its violations, [] when
// it holds.
import { compareEventIds, isEventId } from '../../src/protocol/event-id';
import { type StreamEvent, streamEventSchema } from '../../src/protocol/events';
import type { SseEvent } from '../../src/protocol/sse';
import type { Received } from './endpoint';

const MAX_REPORTED = 20;

function capped(violations: string[]): string[] {
  if (violations.length <= MAX_REPORTED) return violations;
  return [...violations.slice(0, MAX_REPORTED), `... and ${violations.length - MAX_REPORTED} more`];
}

/** A job's events as one line each: `<name> <attempt>`. */
const line = (event: StreamEvent) => (event.event === 'gap' ? 'gap' : `${event.event} ${event.data.attempt}`);

/**
 * What job `id` must have shown, from what the endpoint was sent of it: `added`, then per
 * attempt `active` and how it ended (`completed` on a 2xx, else `retrying` while attempts are
 * left, else `failed`), as `<name> <attempt>`.
 */
export function expectedLines(deliveries: readonly { attempt: number; maxAttempts: number; status: number }[]): string[] {
  const lines = ['added 0'];
  for (const { attempt, maxAttempts, status } of [...deliveries].sort((a, b) => a.attempt - b.attempt)) {
    lines.push(`active ${attempt}`);
    if (status >= 200 && status < 300) lines.push(`completed ${attempt}`);
    else lines.push(attempt < maxAttempts ? `retrying ${attempt}` : `failed ${attempt}`);
  }
  return lines;
}

export interface OrderReport {
  /** Events that are not of the model, or without an id. */
  malformed: string[];
  /** Ids that do not increase along the stream. */
  unordered: string[];
  /** Gap events (something never came). */
  gaps: string[];
  /** Jobs whose events differ from what they must be: missing, repeated, out of order, unknown. */
  jobs: string[];
  /** How many events were read. */
  events: number;
}

/**
 * Checks `read` (a queue stream's events, as the reader got them) against `sent` (every request
 * the endpoint got for that queue) and the status each was answered with (`statusOf`).
 */
export function checkEventOrder(read: readonly SseEvent[], sent: readonly Received[], statusOf: (received: Received) => number): OrderReport {
  const malformed: string[] = [];
  const unordered: string[] = [];
  const gaps: string[] = [];
  const byJob = new Map<string, string[]>();
  let previous: string | null = null;
  for (const [i, raw] of read.entries()) {
    const parsed = streamEventSchema.safeParse({ event: raw.type, ...(raw.type !== 'gap' && { eventId: raw.lastEventId }), data: JSON.parse(raw.data) });
    if (!parsed.success) {
      malformed.push(`#${i} ${raw.type} ${raw.data.slice(0, 120)}`);
      continue;
    }
    const event = parsed.data;
    if (event.event === 'gap') {
      gaps.push(`#${i} after ${event.data.lastEventId}: ${JSON.stringify(event.data)}`);
      continue;
    }
    if (!isEventId(event.eventId)) malformed.push(`#${i} id ${event.eventId}`);
    else if (previous !== null && compareEventIds(previous, event.eventId) >= 0) unordered.push(`#${i} ${event.eventId} after ${previous}`);
    previous = event.eventId;
    const lines = byJob.get(event.data.id) ?? [];
    lines.push(line(event));
    byJob.set(event.data.id, lines);
  }
  const deliveries = new Map<string, { attempt: number; maxAttempts: number; status: number }[]>();
  for (const received of sent) {
    const list = deliveries.get(received.job.id) ?? [];
    list.push({ attempt: received.job.attempt, maxAttempts: received.job.maxAttempts, status: statusOf(received) });
    deliveries.set(received.job.id, list);
  }
  const jobs: string[] = [];
  for (const [id, list] of deliveries) {
    const want = expectedLines(list).join(', ');
    const got = (byJob.get(id) ?? []).join(', ');
    if (got !== want) jobs.push(`${id}: got [${got}], want [${want}]`);
  }
  for (const id of byJob.keys()) if (!deliveries.has(id)) jobs.push(`${id}: events of a job never delivered`);
  return { malformed: capped(malformed), unordered: capped(unordered), gaps: capped(gaps), jobs: capped(jobs), events: read.length };
}
