// What every engine operation is given: a Redis script runner, a clock and deployment options.
import type * as z from 'zod';
import type { ConfigOptions } from '../../protocol/config';
import { QueueError } from '../../protocol/errors';
import type { PartitionCounts } from './partitions';
import type { ScriptRunner } from './scripts';

export interface EngineContext {
  redis: ScriptRunner;
  /** Epoch milliseconds; tests inject a clock. */
  now: () => number;
  options: ConfigOptions;
  /** Send scripts with Upstash's allow-key-locking flag (ScriptOptions). @default true */
  keyLocking?: boolean;
  /** What this isolate has learned of queues' partition counts (src/core/engine/partitions.ts). */
  partitions?: PartitionCounts;
}

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
