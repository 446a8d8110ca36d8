// Enqueue: validation in TypeScript (a bad batch writes nothing), then one script per batch.
import type { z } from 'zod';
import { scripts } from '../lua/scripts.generated';
import type { EnqueueResult } from './api-types';
import type { ConfigOptions, StoredConfig } from './config';
import { type EngineContext, parse } from './context';
import { batchInputSchemaFor, jobInputSchemaFor } from './job-input';
import { noteDue } from './due-index';
import { checkQueueName } from './queues';
import { randomId } from './ids';
import { type LeasedJob, toLeasedJob } from './leases';
import { callScript } from './scripts';

export type { EnqueueResult } from './api-types';

type ParsedJob = z.output<ReturnType<typeof jobInputSchemaFor>>;

/** The enqueue schemas, built once per setting of allowHttpLoopback (the only option they read). */
const schemas = new Map<boolean, { job: ReturnType<typeof jobInputSchemaFor>; batch: ReturnType<typeof batchInputSchemaFor> }>();
function schemasFor(options: ConfigOptions) {
  const key = options.allowHttpLoopback === true;
  let built = schemas.get(key);
  if (!built) schemas.set(key, (built = { job: jobInputSchemaFor(options), batch: batchInputSchemaFor(options) }));
  return built;
}

/** The per-job state fields a job record carries only when given (see job.lua). */
function recordOptions(job: ParsedJob, createdAt: number, orderMs: number): string {
  const options: Record<string, unknown> = {};
  if (job.id !== undefined) options.i = 1; // only ids the producer named are remembered (dedup.lua)
  if (job.debounce !== undefined) {
    options.db = job.debounce.key;
    if (job.debounce.maxDelayMs !== undefined) options.dx = createdAt + job.debounce.maxDelayMs;
  }
  if (job.maxAttempts !== undefined) options.ma = job.maxAttempts;
  if (job.backoff !== undefined) options.bo = job.backoff;
  if (job.timeoutMs !== undefined) options.to = job.timeoutMs;
  if (job.callbackUrl !== undefined) options.cb = job.callbackUrl;
  if (job.priority) options.pr = job.priority;
  if (createdAt !== orderMs) options.c = createdAt;
  return Object.keys(options).length > 0 ? JSON.stringify(options) : '';
}

/** A debounced job starts delayMs from now, and no later than maxDelayMs from now. */
function debouncedStart({ delayMs, maxDelayMs = delayMs }: NonNullable<ParsedJob['debounce']>, now: number): number {
  return now + Math.min(delayMs, maxDelayMs);
}

/** enqueue.lua's flag per job: new, duplicate (a known id), debounced (collapsed into another job). */
const ANSWER_FLAGS = [{}, { duplicate: true }, { debounced: true }] as const;

export interface Enqueued {
  results: EnqueueResult[];
  /** Jobs leased by the same call (when asked to reserve), for the caller to deliver. */
  leased: LeasedJob[];
  config: StoredConfig;
}

async function enqueueParsed(
  ctx: EngineContext,
  queue: string,
  jobs: ParsedJob[],
  reserve: number,
  rawData: readonly (string | undefined)[] = [],
): Promise<Enqueued> {
  const now = ctx.now();
  const args: (string | number)[] = [now, Math.min(Math.max(0, reserve), 1000), jobs.length];
  for (const [i, job] of jobs.entries()) {
    const orderMs = job.orderMs ?? now;
    const runAt = job.debounce ? debouncedStart(job.debounce, now) : (job.runAt ?? (job.delayMs !== undefined ? now + job.delayMs : 0));
    args.push(job.id ?? randomId(), job.group, orderMs, runAt, rawData[i] ?? JSON.stringify(job.data), recordOptions(job, now, orderMs));
  }
  const { results, config, leased, dueAt } = await callScript(ctx, scripts.enqueue, { queue, groups: jobs.map((job) => job.group) }, args);
  // Before anything is pushed: a lease's deadline in the due index is what retries it if this
  // invocation dies mid-delivery (G3).
  await noteDue(ctx, queue, dueAt);
  return {
    results: results.map(([id, state, flag]) => ({ id, state, ...ANSWER_FLAGS[flag] })),
    leased: leased.map((tuple) => toLeasedJob(queue, config, tuple)),
    config,
  };
}

/**
 * Adds one job. A known id (a job kept, or one the dedup window remembers) answers with
 * `duplicate: true` and changes nothing; a debounced job that collapsed into a waiting one
 * answers that job with `debounced: true`.
 */
export async function enqueue(ctx: EngineContext, queue: string, input: unknown): Promise<EnqueueResult> {
  return (await enqueueAndReserve(ctx, queue, input, 0)).results[0]!;
}

/** Adds up to 1000 jobs atomically; the batch is validated whole before anything is written. */
export async function enqueueBatch(ctx: EngineContext, queue: string, jobs: unknown): Promise<EnqueueResult[]> {
  return (await enqueueBatchAndReserve(ctx, queue, { jobs }, 0)).results;
}

/**
 * enqueue, then up to `reserve` ready jobs leased in the same round trip (the dispatcher's way
 * in). `rawData`, the exact JSON text `input.data` was parsed from, is stored instead of a
 * re-encoding, so big integers and number formats reach the endpoint as sent.
 */
export function enqueueAndReserve(ctx: EngineContext, queue: string, input: unknown, reserve: number, rawData?: string): Promise<Enqueued> {
  checkQueueName(queue);
  return enqueueParsed(ctx, queue, [parse(schemasFor(ctx.options).job, input)], reserve, [rawData]);
}

/** enqueueBatch of a body `{"jobs":[...]}`, then up to `reserve` ready jobs leased in the same round trip. */
export function enqueueBatchAndReserve(
  ctx: EngineContext,
  queue: string,
  batch: unknown,
  reserve: number,
  rawData?: readonly (string | undefined)[],
): Promise<Enqueued> {
  checkQueueName(queue);
  return enqueueParsed(ctx, queue, parse(schemasFor(ctx.options).batch, batch).jobs, reserve, rawData);
}
