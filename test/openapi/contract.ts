// Checks real answers against the OpenAPI document: which operation a request was, that the
// status is one the operation documents, that an error's code is one of those it lists for that
// status, and that the body validates against the response's schema (ajv, JSON Schema 2020-12,
// the dialect of OpenAPI 3.1); an event stream's every event, its data against the schema its
// name says and against the answer's `oneOf` (exactly one of them). Records the operations it
// saw, so a test can ask for all of them.
import Ajv2020 from 'ajv/dist/2020.js';
import { expect } from 'vitest';
import { eventSchemaName } from '../../src/protocol/api/openapi';
import document from '../../src/protocol/api/openapi.generated.json';
import { SseParser, type SseEvent } from '../../src/protocol/sse';

type Json = Record<string, any>;
const doc = document as Json;

const ajv = new Ajv2020({ strict: false, validateSchema: false, allErrors: true });
ajv.addSchema(doc, 'openapi.json');

/** `#/a/b` of the document, following a `$ref` at the end. */
function resolve(node: Json): Json {
  if (typeof node.$ref !== 'string') return node;
  const target = (node.$ref as string)
    .slice(2)
    .split('/')
    .reduce<Json>((at, key) => at[key.replace(/~1/g, '/').replace(/~0/g, '~')], doc);
  return { ...resolve(target), ...Object.fromEntries(Object.entries(node).filter(([key]) => key !== '$ref')) };
}

export interface DocumentedOperation {
  method: string;
  path: string;
  operationId: string;
  operation: Json;
  pattern: RegExp;
}

/** Every operation of the document; literal segments match before parameters (`jobs/batch` before `jobs/{id}`). */
export const OPERATIONS: DocumentedOperation[] = Object.entries(doc.paths as Json)
  .flatMap(([path, item]) =>
    Object.entries(item as Json).map(([method, operation]) => ({
      method: method.toUpperCase(),
      path,
      operationId: operation.operationId as string,
      operation,
      pattern: new RegExp(`^${path.replace(/\{\w+\}/g, '[^/]+')}$`),
    })),
  )
  .sort((a, b) => a.path.split('{').length - b.path.split('{').length);

const validators = new Map<string, ReturnType<typeof ajv.compile>>();
function validatorFor(pointer: string) {
  let validate = validators.get(pointer);
  if (!validate) {
    validate = ajv.compile({ $ref: `openapi.json${pointer}` });
    validators.set(pointer, validate);
  }
  return validate;
}

const pointer = (...keys: string[]) => `#/${keys.map((key) => key.replace(/~/g, '~0').replace(/\//g, '~1')).join('/')}`;

/**
 * Asserts that `events`, read from a 200 of `operationId` (an event stream), are what the
 * document says: each name one it lists, its data JSON of that name's schema, and of exactly one
 * schema of the answer's `oneOf`.
 */
export function checkEvents(operationId: string, events: readonly SseEvent[]): void {
  const op = OPERATIONS.find((candidate) => candidate.operationId === operationId);
  if (!op) throw new Error(`no operation ${operationId} in the document`);
  const at = pointer('paths', op.path, op.method.toLowerCase(), 'responses', '200', 'content', 'text/event-stream', 'schema');
  const listed = (resolve(op.operation.responses['200']).content['text/event-stream'].schema.oneOf as Json[]).map((branch) => branch.$ref);
  for (const { type, data } of events) {
    const where = `${operationId}: event ${type} ${data.slice(0, 300)}`;
    const component = eventSchemaName(type);
    expect(listed, `${where}: not an event the document lists`).toContain(`#/components/schemas/${component}`);
    const value = JSON.parse(data) as unknown;
    const own = validatorFor(pointer('components', 'schemas', component));
    expect(own(value), `${where}: ${ajv.errorsText(own.errors)}`).toBe(true);
    const any = validatorFor(at);
    expect(any(value), `${where}: ${ajv.errorsText(any.errors)}`).toBe(true);
  }
}

/** operationIds seen by `checkAnswer` (their answers conformed). */
export const seen = new Set<string>();

/**
 * Asserts that `res` (to `method` `url`) is what the document says; answers its body (parsed
 * when JSON). HEAD answers are checked as their GET without a body.
 */
export async function checkAnswer(method: string, url: string, res: Response): Promise<unknown> {
  const { pathname } = new URL(url);
  const text = await res.clone().text();
  const asked = method === 'HEAD' ? 'GET' : method;
  const op = OPERATIONS.find((candidate) => candidate.method === asked && candidate.pattern.test(pathname));
  const where = `${method} ${pathname} answered ${res.status} ${text.slice(0, 300)}`;
  if (!op) {
    // No operation: the one error shape, 404 NOT_FOUND or 405 METHOD_NOT_ALLOWED.
    expect([404, 405], where).toContain(res.status);
    const validate = validatorFor(pointer('components', 'schemas', 'Error'));
    expect(validate(JSON.parse(text)), `${where}: ${ajv.errorsText(validate.errors)}`).toBe(true);
    return JSON.parse(text);
  }
  const responses = op.operation.responses as Json;
  expect(Object.keys(responses), `${where}: status not in the document`).toContain(String(res.status));
  const response = resolve(responses[String(res.status)]);
  const [mediaType] = Object.keys(response.content ?? {});
  if (mediaType === undefined || method === 'HEAD') {
    if (mediaType === undefined) expect(text, `${where}: expected no body`).toBe('');
    seen.add(op.operationId);
    return undefined;
  }
  expect(res.headers.get('content-type') ?? '', where).toMatch(new RegExp(`^${mediaType.replace('/', '\\/')}`));
  if (mediaType === 'text/event-stream') {
    // A stream read to its end (a job that has ended): every event of it.
    const parser = new SseParser();
    checkEvents(op.operationId, [...parser.feed(text), ...parser.end()]);
    seen.add(op.operationId);
    return text;
  }
  if (!mediaType.endsWith('json')) {
    seen.add(op.operationId);
    return text;
  }
  const body = JSON.parse(text) as unknown;
  const schema = response.content[mediaType].schema as Json | undefined;
  if (schema) {
    const at = typeof responses[String(res.status)].$ref === 'string'
      ? `${responses[String(res.status)].$ref}/content/${mediaType.replace('/', '~1')}/schema`
      : pointer('paths', op.path, op.method.toLowerCase(), 'responses', String(res.status), 'content', mediaType, 'schema');
    const validate = validatorFor(at);
    expect(validate(body), `${where}: ${ajv.errorsText(validate.errors)}`).toBe(true);
  }
  if (typeof responses[String(res.status)].$ref === 'string') {
    // An error: one of the operation's own codes for this status (its reference's description lists them).
    const codes = (responses[String(res.status)].description as string).split(', ');
    expect(codes, where).toContain((body as { error: { code: string } }).error.code);
  }
  seen.add(op.operationId);
  return body;
}
