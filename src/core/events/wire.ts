// What a queue's event hub (hub.ts, a Durable Object) and the Worker's streams (stream.ts) say to
// each other. A stream reaches the hub over one WebSocket, which the hub holds hibernatable
// (docs/events.md: an idle hub bills no duration); the subscribe URL names the
// stream's filter and where it resumes. Messages are JSON text, one of HubMessage each way.
// The hub frames events as SSE itself (once per event, whatever the number of readers), so the
// Worker only copies `text` into its response. No Worker API here: the Node tests import it.
import type { JobEventName } from '../../protocol/events';
import type { EventPlace, ScriptEvent } from '../store/events';

/**
 * Which events of the queue a stream wants: all of them, one group's, or one job's. A job's stream
 * ends after that job's final event (FINAL_EVENT_NAMES), which the hub marks with `end`.
 */
export interface EventFilter {
  group?: string;
  job?: string;
}

/**
 * An event as the Worker hands it to its queue's hub, with its place in its partition's event
 * sequence (order.ts puts each partition's events in that order). `eventId`: an SSE id the hub
 * keeps when it is after the newest given (else, and without one, the hub gives the next).
 */
export interface PublishedEvent {
  eventId?: string;
  event: JobEventName;
  data: { id: string; group: string } & Record<string, unknown>;
  /** None: the hub lets it out as it comes, in no order but its arrival's. */
  place?: PublishedPlace;
}

/**
 * Where an event stands in its partition's event sequence (meta's `es`, src/lua/includes/meta.lua
 * placeEvents): its own number, or, for an event whose script numbered none (progress), the
 * number of the event it follows. One of `seq` and `after`.
 */
export interface PublishedPlace {
  /** The partition: the tag its script ran on (a queue of one partition: the queue's name). */
  part: string;
  /** Which of the partition's sequences (a queue made again starts a new, later one); 0: none yet. */
  epoch: number;
  seq?: number;
  after?: number;
}

/** The events of one script call, as the Worker hands them to the hub: each with its place. */
export function toPublished(tag: string, events: readonly ScriptEvent[], { epoch, last, numbered }: EventPlace): PublishedEvent[] {
  return events.map(({ event, data }, i) => ({
    event,
    data,
    place: numbered ? { part: tag, epoch, seq: last + 1 + i } : { part: tag, epoch, after: last },
  }));
}

/** Where a resume stands against what the hub holds. */
export interface Resume {
  /** Some events after the asked id are no longer held (or it is not one the hub knows): a `gap` goes first. */
  missed: boolean;
  /** The oldest event the hub holds; null when it holds none. */
  oldest: string | null;
}

/** The hub's first message to a new subscriber, before the held events it resumes with. */
export interface Hello extends Partial<Resume> {
  t: 'hello';
  /**
   * The newest id the hub has given: a job stream's first event (the job's state as read after
   * attaching) carries it, so that a resume from there gets exactly what came after.
   */
  head: string;
  /** Until when scripts are asked for events (want-events.lua), as the hub last heard; 0: never. */
  wantedUntil: number;
}

export type HubMessage =
  | Hello
  /** SSE text of one or more events, in order; `end`: the job of a job stream ended with them. */
  | { t: 'frames'; text: string; end?: true }
  /** A stream asked Redis again: every stream of the hub learns the new time. */
  | { t: 'wanted'; until: number };

/** What a stream tells the hub: it asked Redis for events until `until`. */
export type StreamMessage = { t: 'wanted'; until: number };

export const SUBSCRIBE_URL = 'https://hub/subscribe';

export function subscribeUrl(filter: EventFilter, since: string | undefined): string {
  const url = new URL(SUBSCRIBE_URL);
  if (filter.group !== undefined) url.searchParams.set('group', filter.group);
  if (filter.job !== undefined) url.searchParams.set('job', filter.job);
  if (since !== undefined) url.searchParams.set('since', since);
  return url.href;
}

export function filterOf(url: URL): EventFilter {
  const group = url.searchParams.get('group');
  const job = url.searchParams.get('job');
  return { ...(group !== null && { group }), ...(job !== null && { job }) };
}

/** Whether an event of `group` and job `id` is one the filter wants. */
export function matches(filter: EventFilter, group: string, id: string): boolean {
  return (filter.job === undefined || filter.job === id) && (filter.group === undefined || filter.group === group);
}

/**
 * workerd refuses a WebSocket tag over 256 bytes; a group or a job id may be longer (256
 * characters, and a group's may take 4 bytes each). A longer name gets a hashed tag: the hub then
 * checks the socket's filter (its attachment) before sending, since two names may share a hash.
 */
const MAX_TAG_BYTES = 256;
const encoder = new TextEncoder();

/** cyrb53 (public domain): a fast 53-bit string hash; collisions only cost an exact check. */
function hash53(text: string): string {
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 2654435761);
    h2 = Math.imul(h2 ^ c, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return (4294967296 * (2097151 & h2) + (h1 >>> 0)).toString(36);
}

/** The tag of the sockets that want every event. */
export const ALL_TAG = '*';

function nameTag(kind: 'g' | 'j', name: string): string {
  const tag = `${kind}:${name}`;
  return encoder.encode(tag).byteLength <= MAX_TAG_BYTES ? tag : `${kind}#${hash53(name)}`;
}

/** Whether sockets under `tag` may hold other names than its own (a hashed tag). */
export const isHashedTag = (tag: string): boolean => tag[1] === '#';

/** The one tag a subscriber's socket carries: what the hub looks it up by when an event comes. */
export function tagOf(filter: EventFilter): string {
  if (filter.job !== undefined) return nameTag('j', filter.job);
  if (filter.group !== undefined) return nameTag('g', filter.group);
  return ALL_TAG;
}

/** The tags whose sockets may want an event of `group` and job `id`. */
export function tagsFor(group: string, id: string): [string, string, string] {
  return [ALL_TAG, nameTag('g', group), nameTag('j', id)];
}
