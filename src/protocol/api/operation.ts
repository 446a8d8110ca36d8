// What a route is on the wire: its path, who may call it, what it takes (path and query
// parameters, body) and what it answers (each status, the error codes behind each error status),
// with the constructors that fill in what routes of a kind share. Each operation's row
// (src/handlers/operations.ts) is one of these and what serves it; openapi.ts turns the rows into
// the OpenAPI document.
import * as z from 'zod';
import type { ErrorCode } from '../errors';
import { groupParamSchema, jobIdSchema, partitionParamSchema, queueNameSchema, repeatKeySchema } from '../job-input';

/**
 * Who may call a route: the admin token; it or a queue's publish token; it or the capability of
 * the job's events URL (`?cap=`, src/handlers/capabilities.ts); or anyone.
 */
export type Access = 'admin' | 'publish' | 'capability' | 'open';

export interface Operation {
  method: 'get' | 'put' | 'post' | 'delete' | 'patch' | 'options';
  /** OpenAPI form: `{queue}` where Hono has `:queue`. */
  path: string;
  id: string;
  tag: string;
  summary: string;
  description?: string;
  access: Access;
  query?: z.ZodObject;
  /** Request headers of its own (optional ones), by name. */
  headers?: Record<string, { schema: z.ZodType; description: string }>;
  body?: z.ZodType;
  /** The body may be left out (every field of it has a default). @default false */
  optionalBody?: boolean;
  /** Successful answers: a JSON schema, null for an empty body, a media type for a page, or an event stream. */
  ok: Record<number, z.ZodType | null | { mediaType: string } | EventStream>;
  /** The error codes the route may answer with, besides those every route of its kind may. */
  errors: ErrorCode[];
}

/**
 * An answer that is a stream of Server-Sent Events (`text/event-stream`): each event's `event:`
 * name and the zod schema of its `data:` JSON. OpenAPI 3.1 has no way to say what a stream's
 * events are, so openapi.ts gives each data schema a component and the answer a `oneOf` of them,
 * and says the framing in words.
 */
export interface EventStream {
  mediaType: 'text/event-stream';
  events: Readonly<Record<string, z.ZodType>>;
}

/** The path parameters, by name: each is checked with the schema its route checks it with. */
export const PATH_PARAMETERS: Record<string, z.ZodType> = {
  queue: queueNameSchema,
  id: jobIdSchema,
  group: groupParamSchema,
  key: repeatKeySchema,
  partition: partitionParamSchema,
};

/** Codes any route of a kind may answer with: checked before the route's own work. */
export const COMMON_ERRORS: Record<'admin' | 'publish' | 'capability' | 'body' | 'redis', ErrorCode[]> = {
  admin: ['UNAUTHORIZED'],
  publish: ['UNAUTHORIZED'],
  capability: ['UNAUTHORIZED'],
  body: ['BAD_JSON', 'UNSUPPORTED_MEDIA_TYPE', 'PAYLOAD_TOO_LARGE', 'VALIDATION_FAILED'],
  redis: ['REDIS_UNAVAILABLE', 'PARTITION_MOVING', 'INTERNAL'],
};

/** The path of one queue's routes. */
export const Q = '/v1/queues/{queue}';

type Method = Operation['method'];
/** What a route adds to its method, path, id and summary; `errors` defaults to none of its own. */
export type Rest = Partial<Omit<Operation, 'method' | 'path' | 'id' | 'summary'>> & Pick<Operation, 'ok'>;
/** A constructor of routes of one kind; `R` carries what serves the route beside its wire form. */
type Kind = <R extends Rest>(method: Method, path: string, id: string, summary: string, rest: R) => Operation & R;

export const operation: Kind = (method, path, id, summary, rest) => ({
  method, path, id, summary, tag: 'Service', access: 'open', errors: [], ...rest,
}) as Operation & typeof rest;
/** A route of one queue: its name is checked (400) and the queue must exist (404). */
export const queueOp: Kind = (method, path, id, summary, rest) =>
  operation(method, path, id, summary, {
    tag: 'Queues', access: 'admin', ...rest, errors: ['VALIDATION_FAILED', 'QUEUE_NOT_FOUND', ...(rest.errors ?? [])],
  } as typeof rest);
export const jobOp: Kind = (method, path, id, summary, rest) =>
  queueOp(method, path, id, summary, { tag: 'Jobs', ...rest, errors: ['JOB_NOT_FOUND', ...(rest.errors ?? [])] });
export const groupOp: Kind = (method, path, id, summary, rest) => queueOp(method, path, id, summary, { tag: 'Groups', ...rest });
export const repeatOp: Kind = (method, path, id, summary, rest) => queueOp(method, path, id, summary, { tag: 'Repeats', ...rest });
/** A lease callback: the lease token in the body is its auth. */
export const callbackOp = <R extends Rest>(path: string, id: string, summary: string, rest: R) =>
  queueOp('post', path, id, summary, {
    tag: 'Lease callbacks',
    access: 'open',
    description: 'Authorized by the lease token in the body alone: a wrong or stale lease is 409 LEASE_LOST and changes nothing.',
    ...rest,
    errors: ['LEASE_LOST', 'JOB_CANCELLED'],
  });
/** The W3C trace context an enqueue may carry, kept with each job it adds (docs/tracing.md). */
export const TRACE_HEADERS: NonNullable<Operation['headers']> = {
  traceparent: {
    schema: z.string(),
    description:
      'W3C Trace Context: `00-<trace-id>-<parent-id>-<flags>`, kept with every job of the call and sent on, unchanged, with each ' +
      'delivery and the outcome callback (docs/tracing.md). A value that is not valid is ignored (the spec\'s rule), never refused.',
  },
  tracestate: {
    schema: z.string(),
    description: 'W3C Trace Context: kept with the traceparent (only with a valid one), at most 32 members and 512 characters.',
  },
};

export const enqueueOp: Kind = (method, path, id, summary, rest) =>
  queueOp(method, path, id, summary, {
    tag: 'Enqueue',
    access: 'publish',
    description:
      "The admin token, or a publish token of this queue (its jobs pass the queue's publish policy and rate limit). " +
      "Browsers may call it from the queue's allowedOrigins (CORS). A publish token learns only the id of a duplicate, and " +
      "gets an eventsUrl for each new job unless the queue's publishEvents is \"none\".",
    errors: ['FIELD_NOT_ALLOWED', 'QUEUE_FULL', 'RATE_LIMITED'],
    ...rest,
  });
/** 204 whatever the queue (an unknown one gets no CORS headers, and no error that would tell). */
export const preflightOp = <R extends object>(path: string, id: string, summary: string, rest: R) =>
  operation('options', path, id, summary, {
    tag: 'Enqueue',
    description: "CORS headers only for an Origin in the queue's allowedOrigins.",
    ok: { 204: null },
    ...rest,
  });
/** An open page: no Redis, no error of its own. */
export const page = <R extends object>(path: string, id: string, summary: string, mediaType: string, rest: R) =>
  operation('get', path, id, summary, { ok: { 200: { mediaType }, 304: null }, ...rest });

