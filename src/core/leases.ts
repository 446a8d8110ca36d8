// Leases: reserve ready jobs, end leases (complete, fail) and extend them (heartbeat, progress).
// Everything that ends a lease goes through settle.lua, so a drain acks a batch of outcomes and
// reserves the next jobs in one round trip.
import { z } from 'zod';
import { scripts } from '../lua/scripts.generated';
import { DAY_MS, type StoredConfig } from './config';
import { type EngineContext, parse } from './context';
import { QueueError, luaError } from './errors';
import { randomSeed } from './ids';
import { jobIdSchema } from './job-input';
import type { JobRecord } from './job-view';
import { queueKeys } from './keys';
import { checkQueueName } from './queues';
import { runScript } from './scripts';

/** The most jobs one call reserves, and the most outcomes it ends. */
const MAX_BATCH = 1000;
const MAX_ERROR_LENGTH = 2048;

export interface LeasedJob<T = unknown> {
  id: string;
  queue: string;
  group: string;
  data: T;
  /** `data` exactly as stored (JSON text), to forward without re-encoding. */
  rawData: string;
  /** 1-based number of this attempt. */
  attempt: number;
  maxAttempts: number;
  orderMs: number;
  createdAt: number;
  /** How long this delivery may take. */
  timeoutMs: number;
  lease: { token: string; expiresAt: number };
}

export type Outcome =
  | { kind: 'complete'; id: string; lease: string; result?: unknown; resultTruncated?: boolean }
  | { kind: 'fail'; id: string; lease: string; error: string; retry?: boolean; retryAfterMs?: number };

export interface Settled {
  /** Per outcome: the job's new state, or LEASE_LOST (nothing changed for it). */
  results: { id: string; state: 'completed' | 'waiting' | 'failed' | 'LEASE_LOST' }[];
  config: StoredConfig;
  jobs: LeasedJob[];
}

const leaseRefSchema = z.object({ id: jobIdSchema, lease: z.string().min(1).max(64) });

export function toLeasedJob(queue: string, config: StoredConfig, tuple: unknown): LeasedJob {
  const [id, stateJson, rawData, deadline] = tuple as [string, string, string, number];
  const record = JSON.parse(stateJson) as JobRecord;
  return {
    id,
    queue,
    group: record.g,
    data: JSON.parse(rawData),
    rawData,
    attempt: (record.a ?? 0) + 1,
    maxAttempts: record.ma ?? config.maxAttempts,
    orderMs: record.o,
    createdAt: record.c ?? record.o,
    timeoutMs: record.to ?? config.timeoutMs,
    lease: { token: record.t!, expiresAt: deadline },
  };
}

function outcomeArgs(outcome: Outcome): (string | number)[] {
  parse(leaseRefSchema, { id: outcome.id, lease: outcome.lease });
  if (outcome.kind === 'complete') {
    const result = outcome.result === undefined ? '' : JSON.stringify(outcome.result);
    return ['complete', outcome.id, outcome.lease, result, outcome.resultTruncated ? '1' : '0', -1];
  }
  const retryAfterMs = outcome.retryAfterMs === undefined ? -1 : Math.min(Math.max(0, Math.floor(outcome.retryAfterMs)), DAY_MS);
  const error = outcome.error.slice(0, MAX_ERROR_LENGTH);
  return ['fail', outcome.id, outcome.lease, error, outcome.retry === false ? '0' : '1', retryAfterMs];
}

async function runSettle(ctx: EngineContext, queue: string, outcomes: Outcome[], reserve: number, onlyIfLive: boolean): Promise<Settled> {
  checkQueueName(queue);
  if (outcomes.length > MAX_BATCH) {
    throw new QueueError('VALIDATION_FAILED', `at most ${MAX_BATCH} outcomes per call`, [{ path: 'outcomes', message: 'too many' }]);
  }
  const k = queueKeys(queue);
  const n = Math.min(Math.max(0, reserve), MAX_BATCH);
  const args: (string | number)[] = [ctx.now(), randomSeed(), outcomes.length, n, onlyIfLive ? '1' : '0'];
  for (const outcome of outcomes) args.push(...outcomeArgs(outcome));
  const reply = await runScript(
    ctx.redis,
    scripts.settle,
    [k.meta, k.jobs, k.ready, k.active, k.held, k.completed, k.failed, k.pausedGroups, k.metrics],
    args,
  );
  const [, results, configJson, jobs] = reply as [number, [string, Settled['results'][number]['state']][], string, unknown[]];
  const config = JSON.parse(configJson) as StoredConfig;
  return {
    results: results.map(([id, state]) => ({ id, state })),
    config,
    jobs: jobs.map((tuple) => toLeasedJob(queue, config, tuple)),
  };
}

/** Ends each outcome's lease (fenced by its token), then reserves up to `reserve` ready jobs. */
export function settle(ctx: EngineContext, queue: string, outcomes: Outcome[], reserve: number): Promise<Settled> {
  return runSettle(ctx, queue, outcomes, reserve, false);
}

/** Leases up to `max` ready jobs: oldest group heads first, within the queue's concurrency. */
export async function reserve(ctx: EngineContext, queue: string, max: number) {
  const { config, jobs } = await settle(ctx, queue, [], max);
  return { config, jobs };
}

// A stale holder changes nothing: with its lease lost, no next job is reserved either. A lease
// of a deleted queue is lost too (DESIGN: "a removed job: LEASE_LOST").
async function endLease(ctx: EngineContext, queue: string, outcome: Outcome, reserveNext: number) {
  const settled = await runSettle(ctx, queue, [outcome], reserveNext, true).catch((error: unknown) => {
    throw error instanceof QueueError && error.code === 'QUEUE_NOT_FOUND' ? luaError([-3]) : error;
  });
  const state = settled.results[0]!.state;
  if (state === 'LEASE_LOST') throw luaError([-3]);
  return { state, next: settled.jobs, endpoint: settled.config.endpoint };
}

/** Completes a leased job; with `reserveNext` > 0 it also leases the next ready jobs. */
export function complete(
  ctx: EngineContext,
  queue: string,
  input: { id: string; lease: string; result?: unknown; resultTruncated?: boolean },
  reserveNext = 0,
) {
  return endLease(ctx, queue, { kind: 'complete', ...input }, reserveNext);
}

/** Fails an attempt: retried with backoff while attempts remain (and `retry` is not false). */
export function fail(
  ctx: EngineContext,
  queue: string,
  input: { id: string; lease: string; error: string; retry?: boolean; retryAfterMs?: number },
  reserveNext = 0,
) {
  return endLease(ctx, queue, { kind: 'fail', ...input }, reserveNext);
}

/** Extends a live lease to now + extendMs (default: the job's timeoutMs), at most 24 h. */
export async function heartbeat(ctx: EngineContext, queue: string, input: { id: string; lease: string; extendMs?: number }) {
  const k = queueKeys(checkQueueName(queue));
  const { id, lease } = parse(leaseRefSchema, input);
  // Longer extensions are capped at 24 h (heartbeat.lua), not refused.
  const { extendMs = 0 } = parse(z.object({ extendMs: z.number().int().min(1).optional() }), { extendMs: input.extendMs });
  const reply = await runScript(ctx.redis, scripts.heartbeat, [k.meta, k.jobs, k.active, k.ready], [ctx.now(), id, lease, extendMs]);
  return { expiresAt: reply[1] as number };
}

const progressSchema = z.union([
  z.number().min(0).max(100),
  z
    .record(z.string(), z.json())
    .refine((p) => new TextEncoder().encode(JSON.stringify(p)).length <= 4096, 'progress objects are at most 4 KiB'),
]);

/** Records a live lease's progress: a number 0-100 or a small JSON object. */
export async function progress(ctx: EngineContext, queue: string, input: { id: string; lease: string; progress: unknown }) {
  const k = queueKeys(checkQueueName(queue));
  const { id, lease } = parse(leaseRefSchema, input);
  const value = parse(progressSchema, input.progress);
  await runScript(ctx.redis, scripts.progress, [k.jobs, k.active], [id, lease, JSON.stringify(value)]);
  return {};
}
