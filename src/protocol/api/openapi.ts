// Builds the OpenAPI 3.1 document from the operations' rows (src/handlers/operations.ts) and the zod schemas,
// with zod's own JSON Schema output (draft 2020-12, OpenAPI 3.1's dialect). Run by
// scripts/build-openapi.mjs, which writes src/protocol/api/openapi.generated.json; never at run time.
import * as z from 'zod';
import { ERROR_STATUS, type ErrorCode } from '../errors';
import { JOB_EVENT_NAMES } from '../events';
import { COMMON_ERRORS, type EventStream, type Operation, PATH_PARAMETERS } from './operation';
import * as responses from './responses';
import { WEBHOOKS, type Webhook } from './webhooks';

type Json = Record<string, unknown>;

const pascal = (name: string) => name[0]!.toUpperCase() + name.slice(1);
const ref = (kind: string, name: string) => ({ $ref: `#/components/${kind}/${name}` });

/** zod's conversion, tidied: z.int()'s safe-integer bounds are left out (every JSON number the API sends is one). */
function tidy({ jsonSchema }: { jsonSchema: Json }) {
  if (jsonSchema.minimum === Number.MIN_SAFE_INTEGER) delete jsonSchema.minimum;
  if (jsonSchema.maximum === Number.MAX_SAFE_INTEGER) delete jsonSchema.maximum;
}

/** z.json()'s recursive schema, which zod puts in a `__shared` entry of its own: named JsonValue here. */
function isJsonValue(def: Json): boolean {
  const types = (def.anyOf as Json[] | undefined)?.map((branch) => branch.type);
  return JSON.stringify(types) === JSON.stringify(['string', 'number', 'boolean', 'null', 'array', 'object']);
}

/**
 * The named schemas as components. Request bodies are described as producers send them (fields
 * with defaults optional), answers as the Worker sends them.
 */
function schemasOf(named: Map<z.ZodType, string>, io: 'input' | 'output'): Record<string, Json> {
  const registry = z.registry<{ id: string }>();
  for (const [schema, id] of named) registry.add(schema, { id });
  const uri = (id: string) => `#/components/schemas/${id}`;
  const { schemas } = z.toJSONSchema(registry, { io, unrepresentable: 'any', uri, override: tidy });
  const { __shared: shared, ...out } = schemas as Record<string, Json>;
  let text = JSON.stringify(out);
  for (const [name, def] of Object.entries((shared?.$defs ?? {}) as Record<string, Json>)) {
    if (!isJsonValue(def)) throw new Error(`openapi: a schema zod shares (${name}) needs a name of its own`);
    text = text.replaceAll(JSON.stringify(`${uri('__shared')}#/$defs/${name}`), JSON.stringify(uri('JsonValue')));
  }
  const components = JSON.parse(text) as Record<string, Json>;
  // OpenAPI names a schema by its component: zod's `$id` (a bare fragment) is not valid there.
  for (const schema of Object.values(components)) {
    delete schema.$schema;
    delete schema.$id;
  }
  return components;
}

/** Any JSON value (z.json()). */
const JSON_VALUE: Json = {
  description: 'Any JSON value.',
  anyOf: [
    { type: 'string' },
    { type: 'number' },
    { type: 'boolean' },
    { type: 'null' },
    { type: 'array', items: ref('schemas', 'JsonValue') },
    { type: 'object', additionalProperties: ref('schemas', 'JsonValue') },
  ],
};

/** Inline JSON Schema of a parameter. */
function parameterSchema(schema: z.ZodType): Json {
  const { $schema: _, ...json } = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any', override: tidy });
  return json;
}

/** Every code an operation may answer with, by status. */
function errorsOf(op: Operation): Map<number, ErrorCode[]> {
  const codes = new Set<ErrorCode>(op.access === 'open' ? [] : COMMON_ERRORS[op.access]);
  if (op.body) for (const code of COMMON_ERRORS.body) codes.add(code);
  if (op.query) codes.add('VALIDATION_FAILED');
  for (const code of op.errors) codes.add(code);
  if (op.path.startsWith('/v1/')) for (const code of COMMON_ERRORS.redis) codes.add(code);
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of Object.keys(ERROR_STATUS) as ErrorCode[]) {
    if (!codes.has(code)) continue;
    const status = ERROR_STATUS[code];
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  return byStatus;
}

/** The component of an event's data: JobAdded for `added`, and so on; Gap for `gap`, the stream's own. */
export function eventSchemaName(event: string): string {
  return (JOB_EVENT_NAMES as readonly string[]).includes(event) ? `Job${pascal(event)}` : pascal(event);
}

/**
 * The 200 of a stream of Server-Sent Events. OpenAPI 3.1 describes a body, not a sequence of
 * events (3.2's itemSchema does; our validators and Redoc read 3.1), so: the `text/event-stream`
 * media type, whose schema is the `data:` of one event (a `oneOf` of the events' components, which
 * never overlap: each is closed and has a state of its own or fields the others lack), and the
 * framing and which data each name carries in words. No x- extension: tools ignore them.
 */
function eventStreamAnswer(stream: EventStream): Json {
  const names = Object.keys(stream.events);
  const example = [
    'event: progress',
    'id: 1767225600123-0',
    'data: {"id":"job-1","queue":"orders","group":"user:7","attempt":1,"at":1767225600123,"state":"active","progress":50}',
  ];
  const description = [
    'A stream of Server-Sent Events (the WHATWG HTML standard; EventSource reads it), UTF-8. Each event is its lines, then a blank line:',
    '',
    '```',
    ...example,
    '```',
    '',
    '- `event:` its name, which says the schema of its data (the table below);',
    '- `id:` `<ms>-<seq>`, which orders it in its stream: sent back as the Last-Event-ID header (EventSource does so when it ' +
      "reconnects) or `?lastEventId=`, it resumes after it. `gap` has none, so a reader's last id stays where it was;",
    '- `data:` its JSON, on one line: one of the schemas below, the one its name says.',
    '',
    'The stream opens with `retry:` (how long a reader waits before it reconnects when the stream is cut); lines that start ' +
      'with a colon are comments, which keep an idle stream open through proxies.',
    '',
    '| event | data |',
    '| --- | --- |',
    ...names.map((name) => `| ${name} | ${eventSchemaName(name)} |`),
  ].join('\n');
  const schema = { description: "One event's `data:`: the schema its `event:` name says.", oneOf: names.map((name) => ref('schemas', eventSchemaName(name))) };
  return { description, content: { [stream.mediaType]: { schema } } };
}

const RETRY_AFTER = { 'Retry-After': { description: 'Whole seconds to wait before trying again.', schema: { type: 'integer', minimum: 1 } } };

/**
 * One response per error status that an operation answers with, its codes listed; an
 * operation's reference names its own codes.
 */
function errorResponses(used: Set<number>): Record<string, Json> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const [code, status] of Object.entries(ERROR_STATUS)) byStatus.set(status, [...(byStatus.get(status) ?? []), code as ErrorCode]);
  const out: Record<string, Json> = {};
  for (const [status, codes] of [...byStatus].filter(([status]) => used.has(status))) {
    const schema = { allOf: [ref('schemas', 'Error')], properties: { error: { properties: { code: { enum: codes } } } } };
    out[`Error${status}`] = {
      description: codes.join(', '),
      ...(status === 429 || status === 503 ? { headers: RETRY_AFTER } : {}),
      content: { 'application/json': { schema } },
    };
  }
  return out;
}

function operationOf(op: Operation, names: { responses: Map<z.ZodType, string>; bodies: Map<z.ZodType, string> }): Json {
  const parameters: Json[] = [...op.path.matchAll(/\{(\w+)\}/g)].map(([, name]) => ref('parameters', name!));
  for (const [name, schema] of Object.entries(op.query?.shape ?? {})) {
    const json = parameterSchema(schema as z.ZodType);
    const { description, ...rest } = json;
    parameters.push({ name, in: 'query', required: !(schema as z.ZodType).safeParse(undefined).success, ...(description ? { description } : {}), schema: rest });
  }
  for (const [name, { schema, description }] of Object.entries(op.headers ?? {})) {
    const { description: _own, ...rest } = parameterSchema(schema);
    parameters.push({ name, in: 'header', required: false, description, schema: rest });
  }
  const answers: Json = {};
  for (const [status, answer] of Object.entries(op.ok)) {
    if (answer === null) answers[status] = { description: status === '304' ? 'Not modified (If-None-Match)' : 'Done' };
    else if ('events' in answer) answers[status] = eventStreamAnswer(answer);
    else if ('mediaType' in answer) answers[status] = { description: 'OK', content: { [answer.mediaType as string]: {} } };
    else {
      const schema = ref('schemas', names.responses.get(answer)!);
      // A 503 that is an answer of its own (health's) says when to ask again, as every 503 does.
      answers[status] = { description: status === '503' ? 'Unavailable' : 'OK', ...(status === '503' ? { headers: RETRY_AFTER } : {}), content: { 'application/json': { schema } } };
    }
  }
  for (const [status, codes] of errorsOf(op)) answers[status] = { ...ref('responses', `Error${status}`), description: codes.join(', ') };
  const operation: Json = { operationId: op.id, tags: [op.tag], summary: op.summary };
  if (op.description) operation.description = op.description;
  if (parameters.length > 0) operation.parameters = parameters;
  if (op.body) {
    operation.requestBody = { required: !op.optionalBody, content: { 'application/json': { schema: ref('schemas', names.bodies.get(op.body)!) } } };
  }
  operation.responses = answers;
  operation.security = SECURITY[op.access];
  return operation;
}

/** Who may call an operation of each access, as OpenAPI security requirements (any one of them). */
const SECURITY: Record<Operation['access'], Json[]> = {
  admin: [{ adminToken: [] }],
  publish: [{ adminToken: [] }, { publishToken: [] }],
  capability: [{ adminToken: [] }, { eventsCapability: [] }],
  open: [],
};

/** A request the Worker sends (webhooks.ts), as an OpenAPI 3.1 webhook: its headers, its body, what answers mean. */
function webhookOf(hook: Webhook, bodyName: string, answerNames: Map<z.ZodType, string>): Json {
  const parameters = Object.entries(hook.headers).map(([name, { schema, description, required }]) => {
    const { description: _own, ...rest } = parameterSchema(schema);
    return { name, in: 'header', required, description, schema: rest };
  });
  const responses = Object.fromEntries(
    Object.entries(hook.answers).map(([status, { description, headers, body }]) => {
      const answer: Json = { description };
      if (body) answer.content = { 'application/json': { schema: ref('schemas', answerNames.get(body)!) } };
      if (headers) {
        answer.headers = Object.fromEntries(
          Object.entries(headers).map(([name, header]) => {
            const { description: _own, ...rest } = parameterSchema(header.schema);
            return [name, { description: header.description, schema: rest }];
          }),
        );
      }
      return [status, answer];
    }),
  );
  return {
    post: {
      operationId: hook.id,
      tags: ['Webhooks'],
      summary: hook.summary,
      description: hook.description,
      parameters,
      requestBody: { required: true, content: { 'application/json': { schema: ref('schemas', bodyName) } } },
      responses,
      security: [],
    },
  };
}

const DESCRIPTION = `Per-group FIFO job queue at the edge. Every answer carries an \`x-request-id\` header, the request's id in the Worker's log. Every failure answers one shape, \`{"error":{"code","message","details","requestId"}}\`; each code has one status:

| code | status |
| --- | --- |
${Object.entries(ERROR_STATUS)
  .map(([code, status]) => `| ${code} | ${status} |`)
  .join('\n')}

A path the Worker does not serve is 404 NOT_FOUND; a known path asked with another method is 405 METHOD_NOT_ALLOWED with an Allow header.`;

const TAGS = {
  Service: 'Open pages: the home, health, this document and the dashboard. None costs a Redis command but /health.',
  Queues: 'Create, read, pause and delete queues (admin token).',
  Enqueue: "Add jobs: the admin token, or a publish token of the queue, also from browsers of its allowedOrigins.",
  Jobs: "Read, list, change and act on jobs (admin token; a job's eventsUrl capability opens its GET too).",
  'Lease callbacks': 'What an endpoint sends back about a job it was delivered: authorized by the lease token in the body.',
  Webhooks: 'What groupq sends: each delivery of a job to its endpoint, and outcome callbacks (docs/delivery.md).',
  Groups: 'Groups of a queue: list, read, pause, resume, and their own limits (admin token).',
  Repeats: 'Repeatable jobs (admin token).',
  Events: "A queue's and a job's changes as they happen, as Server-Sent Events, resumable with Last-Event-ID (docs/events.md).",
};

/** The OpenAPI 3.1 document of the HTTP API (`version`: the package's) from its operations' rows (src/handlers/operations.ts). */
export function openApiDocument(version: string, operations: readonly Operation[]): Json {
  // Answers are named by their schema's name in responses.ts (jobSchema: Job); bodies by their route.
  const responseNames = new Map<z.ZodType, string>();
  for (const [name, value] of Object.entries(responses)) {
    if (value instanceof z.ZodType && name.endsWith('Schema')) responseNames.set(value, pascal(name.slice(0, -'Schema'.length)));
  }
  responseNames.set(responses.errorBodySchema, 'Error');
  const bodyNames = new Map<z.ZodType, string>();
  for (const op of operations) {
    if (op.body) bodyNames.set(op.body, `${pascal(op.id)}Request`);
    for (const answer of Object.values(op.ok)) {
      if (answer instanceof z.ZodType && !responseNames.has(answer)) responseNames.set(answer, `${pascal(op.id)}Response`);
      // A stream's events: each data schema a component of its own, named for its event.
      else if (answer !== null && 'events' in answer) for (const [event, data] of Object.entries(answer.events)) responseNames.set(data, eventSchemaName(event));
    }
  }
  const names = { responses: responseNames, bodies: bodyNames };
  // A webhook's body is what groupq sends: named like an answer.
  // What an endpoint answers it, when the answer has a shape: what groupq reads, named like a request body.
  for (const hook of WEBHOOKS) {
    responseNames.set(hook.body, `${pascal(hook.id)}Body`);
    for (const { body } of Object.values(hook.answers)) if (body) bodyNames.set(body, `${pascal(hook.id)}Answer`);
  }
  const paths: Record<string, Json> = {};
  for (const op of operations) (paths[op.path] ??= {})[op.method] = operationOf(op, names);
  const parameters = Object.fromEntries(
    Object.entries(PATH_PARAMETERS).map(([name, schema]) => [name, { name, in: 'path', required: true, schema: parameterSchema(schema) }]),
  );
  return {
    openapi: '3.1.0',
    info: { title: 'groupq', version, description: DESCRIPTION, license: { name: 'MIT', identifier: 'MIT' } },
    servers: [{ url: '/', description: 'The Worker that serves this document' }],
    tags: Object.entries(TAGS).map(([name, description]) => ({ name, description })),
    security: [{ adminToken: [] }],
    paths,
    webhooks: Object.fromEntries(WEBHOOKS.map((hook) => [hook.id, webhookOf(hook, responseNames.get(hook.body)!, bodyNames)])),
    components: {
      schemas: { ...schemasOf(responseNames, 'output'), ...schemasOf(bodyNames, 'input'), JsonValue: JSON_VALUE },
      parameters,
      responses: errorResponses(new Set(operations.flatMap((op) => [...errorsOf(op).keys()]))),
      securitySchemes: {
        adminToken: { type: 'http', scheme: 'bearer', description: 'GROUPQ_ADMIN_TOKEN: opens every route.' },
        publishToken: {
          type: 'http',
          scheme: 'bearer',
          description: "One of a queue's publishTokens: opens only that queue's two enqueue routes.",
        },
        eventsCapability: {
          type: 'apiKey',
          in: 'query',
          name: 'cap',
          description:
            "The capability of a job's eventsUrl (an enqueue's answer to a publish token, or the admin's POST .../events-url): opens " +
            "that one job's event stream and GET, without an Authorization header, until it expires. Not a bearer token: every other " +
            'route answers it 401.',
        },
      },
    },
  };
}
