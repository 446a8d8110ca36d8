// Parsing what a request sends: a body or query with its zod schema, a path parameter, a queue's
// name. A failure is VALIDATION_FAILED, with zod's issues as details; nothing is written first.
import type * as z from 'zod';
import { QueueError } from './errors';
import { isQueueName, queueNameSchema } from './job-input';

/** Parses input with zod; a failure is VALIDATION_FAILED with zod's issues as details. */
export function parse<S extends z.ZodType>(schema: S, input: unknown): z.output<S> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const details = result.error.issues.map((issue) => ({ path: issue.path.join('.'), message: issue.message }));
  const first = details[0];
  throw new QueueError('VALIDATION_FAILED', first ? `${first.path || 'body'}: ${first.message}` : 'invalid input', details);
}

/**
 * Parses a path parameter (`param`: its name in the route, e.g. `queue`); a failure is
 * VALIDATION_FAILED whose details say so: `[{in: 'path', path: param, message}]`.
 */
export function parseParam<S extends z.ZodType>(schema: S, value: string, param: string): z.output<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const message = result.error.issues[0]?.message ?? 'invalid';
  throw new QueueError('VALIDATION_FAILED', `path parameter ${param}: ${message}`, [{ in: 'path', path: param, message }]);
}

/** A queue's name, checked as the `queue` path parameter. */
export function checkQueueName(name: string): string {
  // zod only for a name it refuses (its message): the check runs on every settle of a drain.
  return isQueueName(name) ? name : parseParam(queueNameSchema, name, 'queue');
}
