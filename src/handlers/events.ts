// The event streams (issue 30): a queue's (`GET /v1/queues/{queue}/events`, ?group= narrows it)
// and a job's (`GET /v1/queues/{queue}/jobs/{id}/events`), as Server-Sent Events. Each stream
// attaches to its queue's hub (src/core/events/hub-core.ts) and asks the queue's scripts for events
// (want-events.lua: one call per partition at the open, then about one per queue every half
// retention while any stream is open, shared through the hub); the hub never asks Redis, so an
// idle stream costs no command. `Last-Event-ID` (or ?lastEventId=, for a client that cannot set
// headers) resumes after that event: the held events after it, a `gap` first when some are no
// longer held. Their rows have handlers of their own (operations.ts): the answer is a stream. A
// job's stream opens with the admin token or its events URL's capability (capabilities.ts); a
// capability that sees states only gets the events without their result and error (redact.ts).
import type { Context, Handler } from 'hono';
import * as z from 'zod';
import { wantEvents } from '../core/engine/events';
import { getJob } from '../core/engine/reads';
import { stateEventOf } from '../core/events/job-state';
import { frameOf } from '../core/events/log';
import { redactFrames } from '../core/events/redact';
import { HubSubscription, eventStream } from '../core/events/stream';
import type { EventFilter } from '../core/events/wire';
import type { Job } from '../protocol/api/types';
import { EVENTS_RETENTION_MS, isFinished } from '../protocol/constants';
import { QueueError } from '../protocol/errors';
import { isEventId } from '../protocol/event-id';
import type { EventStream } from '../protocol/api/operation';
import { eventDataSchemas, eventIdSchema } from '../protocol/events';
import { groupParamSchema, jobIdSchema } from '../protocol/job-input';
import { checkQueueName, parse, parseParam } from '../protocol/parse';
import { encodeEvent } from '../protocol/sse';
import { readerOf } from './capabilities';
import { runtimeOf } from './runtime';
import type { AppEnv } from './scope';

const lastEventIdParam = eventIdSchema.optional().describe('Resumes after this event, as the Last-Event-ID header does (the header wins).');

export const jobEventsQuerySchema = z.object({ lastEventId: lastEventIdParam });
export const queueEventsQuerySchema = z.object({
  group: groupParamSchema.optional().describe('Only the events of this group.'),
  lastEventId: lastEventIdParam,
});
export const LAST_EVENT_ID_HEADER = {
  'Last-Event-ID': {
    schema: eventIdSchema,
    description: 'Resumes after this event (EventSource sends it when it reconnects): the events held after it, a `gap` first if some are no longer held.',
  },
};

/** What both streams answer, for the OpenAPI document: every event a stream may carry, by name. */
export const EVENT_STREAM: EventStream = { mediaType: 'text/event-stream', events: eventDataSchemas };

/** Where the stream resumes: the header (EventSource's reconnect), else the query's; checked. */
function resumeOf(c: Context<AppEnv>, query: string | undefined): string | undefined {
  const header = c.req.header('last-event-id');
  if (header === undefined || header === '') return query;
  if (!isEventId(header)) {
    const message = 'not an event id of this stream';
    throw new QueueError('VALIDATION_FAILED', `header Last-Event-ID: ${message}`, [{ in: 'header', path: 'Last-Event-ID', message }]);
  }
  return header;
}

/** Asks the queue's scripts for events for the retention to come; answers until when. */
async function want(c: Context<AppEnv>, queue: string): Promise<number> {
  return (await wantEvents(c.var.ctx, { queue, until: Date.now() + EVENTS_RETENTION_MS })).until;
}

/**
 * Attaches to the hub and asks Redis for events, at once: the order does not matter, since the
 * stream's first reads (a job's state) come after both. A refusal (no such queue) closes the socket.
 */
async function attach(c: Context<AppEnv>, queue: string, filter: EventFilter, since: string | undefined): Promise<HubSubscription> {
  const opening = HubSubscription.open(runtimeOf(c.env).hub(queue), filter, since);
  const asked = want(c, queue);
  try {
    const [subscription, until] = await Promise.all([opening, asked]);
    subscription.send({ t: 'wanted', until });
    return subscription;
  } catch (error) {
    opening.then((subscription) => subscription.close(), () => {});
    asked.catch(() => {});
    throw error;
  }
}

/** The `gap` event: no id of its own, so the reader's Last-Event-ID stays where it was. */
function gapFrame(queue: string, filter: EventFilter, since: string, oldest: string | null): string {
  const where = { queue, ...(filter.group !== undefined && { group: filter.group }), ...(filter.job !== undefined && { id: filter.job }) };
  return encodeEvent('gap', { ...where, lastEventId: since, oldestEventId: oldest, at: Date.now() });
}

/** The job's state as an event, with the hub's newest id: a resume from it gets what came after. */
function stateFrame(job: Job, head: string): string {
  const { event, data } = stateEventOf(job);
  return encodeEvent(event, data, head);
}

export const queueEvents: Handler<AppEnv> = async (c) => {
  const queue = checkQueueName(c.req.param('queue') ?? '');
  const { group, lastEventId } = parse(queueEventsQuerySchema, c.req.query());
  const since = resumeOf(c, lastEventId);
  const filter: EventFilter = group === undefined ? {} : { group };
  const subscription = await attach(c, queue, filter, since);
  const { missed, oldest } = subscription.hello;
  return eventStream({
    opening: since !== undefined && missed ? gapFrame(queue, filter, since, oldest ?? null) : '',
    subscription,
    renew: () => want(c, queue),
    signal: c.req.raw.signal,
  });
};

/**
 * A job's stream: its state first (none on a resume: the reader has it), then its events, until
 * the one that ends it. The stream of a job that has ended is its end alone; a resume of it after
 * that end is 204, which tells EventSource to stop reconnecting.
 */
export const jobEvents: Handler<AppEnv> = async (c) => {
  // Auth first, on the path as sent: a capability names its queue and job, and opens no other.
  const reader = await readerOf(c, c.req.param('queue') ?? '', c.req.param('id') ?? '');
  const rewrite = reader.kind === 'capability' && reader.see === 'state' ? redactFrames : undefined;
  const queue = checkQueueName(c.req.param('queue') ?? '');
  const id = parseParam(jobIdSchema, c.req.param('id') ?? '', 'id');
  // The query schema drops `cap`: the credential, not a parameter of the stream.
  const since = resumeOf(c, parse(jobEventsQuerySchema, c.req.query()).lastEventId);
  const filter: EventFilter = { job: id };
  const subscription = await attach(c, queue, filter, since);
  let job: Job;
  try {
    job = await getJob(c.var.ctx, { queue, id });
  } catch (error) {
    subscription.close();
    throw error;
  }
  const { head, missed, oldest } = subscription.hello;
  if (isFinished(job.state)) {
    subscription.close();
    if (since === undefined) return eventStream({ opening: stateFrame(job, head), rewrite });
    return endedJob(c, queue, job, since, rewrite);
  }
  const opening = since === undefined ? stateFrame(job, head) : missed ? gapFrame(queue, filter, since, oldest ?? null) : '';
  return eventStream({ opening, subscription, renew: () => want(c, queue), signal: c.req.raw.signal, rewrite });
};

/** The resume of an ended job's stream: what the hub holds after `since`, then its end. */
async function endedJob(
  c: Context<AppEnv>, queue: string, job: Job, since: string, rewrite: ((text: string) => string) | undefined,
): Promise<Response> {
  const snapshot = await runtimeOf(c.env).hub(queue).snapshot({ job: job.id }, since);
  if (!snapshot.missed && snapshot.events.length === 0) return c.body(null, 204);
  const held = snapshot.events.map(frameOf).join('');
  // The held events may lack the end (trimmed, or it came while nobody asked): the state tells it.
  const told = snapshot.events.some(({ event }) => isFinished(event));
  const gap = snapshot.missed ? gapFrame(queue, { job: job.id }, since, snapshot.oldest) : '';
  return eventStream({ opening: gap + held + (told ? '' : stateFrame(job, snapshot.head)), rewrite });
}
