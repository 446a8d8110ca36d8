// Leases: reserve ready jobs, end leases (complete, fail) and extend them (heartbeat, progress).
// Everything that ends a lease goes through settle.lua, so a drain acks a batch of settlements
// and reserves the next jobs in one round trip. While the queue's meta says someone may listen,
// each answer carries the job events its call caused (`events`, src/core/store/events.ts).
import * as z from 'zod';
import { checkQueueName, parse, parseParam } from '../../protocol/parse';
import { scripts } from '../../lua/scripts.generated';
import { DAY_MS, type StoredConfig } from '../../protocol/config';
import { MAX_BATCH, MAX_ERROR_CHARS } from '../../protocol/constants';
import { DELIVERY_ID_PREFIX } from '../../protocol/delivery-body';
import type { EngineContext, QueueRef } from '../store/context';
import { QueueError } from '../../protocol/errors';
import { ScriptRefusal } from '../store/refusals';
import { textHead } from '../../protocol/encoding';
import { randomSeed } from '../../protocol/ids';
import { isJobId, jobIdSchema } from '../../protocol/job-input';
import type { JobRecord } from '../store/job-records';
import type { LeaseSpot, LeasedJob, Settlement } from '../store/leased';
import { LEASE_GRACE_MS, type OutcomeToSend, pushTarget, toOutcomesToSend } from '../store/leased';
import { routed, checkTag } from './partitions';
import { leaseTag, partitionOfTag, partitionTag, publicLease, queueOfTag, splitLease } from '../store/partitions';
import type { LeasedTuple } from '../store/replies';
import { callScript } from '../store/scripts';
import { type ScriptEvent, joinEvents, withEvents } from '../store/events';

export type { LeasedJob, LeaseSpot, Settlement } from '../store/leased';

export interface Settled {
  /** Per settlement: the job's new state, or LEASE_LOST / JOB_CANCELLED (nothing changed for it). */
  results: { id: string; state: 'completed' | 'waiting' | 'failed' | 'LEASE_LOST' | 'JOB_CANCELLED' | 'OUT_OF_ORDER' }[];
  config: StoredConfig;
  jobs: LeasedJob[];
  /** Outcome callbacks the call recorded, leased to the caller to send. */
  outcomes: OutcomeToSend[];
  /** The job events of the call, in order (ends, then leases), while someone may listen. */
  events?: ScriptEvent[];
}

const leaseSchema = z.object({ lease: z.string().min(1).max(64) });

/**
 * A callback's job id (its route's path parameter `id`) and lease token. zod only for what it
 * refuses (its message): a drain's settle checks every settlement of its batch.
 */
function parseLeaseRef({ id, lease }: { id: string; lease: string }) {
  const leaseOk = typeof lease === 'string' && lease.length >= 1 && lease.length <= 64;
  if (isJobId(id) && leaseOk) return { id, lease };
  return { id: parseParam(jobIdSchema, id, 'id'), lease: parse(leaseSchema, { lease }).lease };
}

export function toLeasedJob(tag: string, config: StoredConfig, [id, stateJson, rawData, deadline, hint, token, messageId, batchIndex]: LeasedTuple): LeasedJob {
  const record = JSON.parse(stateJson) as JobRecord;
  return {
    id,
    queue: queueOfTag(tag),
    tag,
    group: record.g,
    data: JSON.parse(rawData),
    rawData,
    attempt: (record.a ?? 0) + 1,
    maxAttempts: record.ma ?? config.maxAttempts,
    orderMs: record.o,
    createdAt: record.c ?? record.o,
    timeoutMs: record.to ?? config.timeoutMs,
    lease: { token: publicLease(tag, token), expiresAt: deadline },
    webhookId: `${DELIVERY_ID_PREFIX}${messageId}`,
    seq: record.s,
    solo: hint === 's',
    recordNeeded: record.cb !== undefined || record.w === 1,
    named: record.i === 1,
    traceparent: record.tp,
    tracestate: record.ts,
    batchIndex: batchIndex ?? 0,
  };
}

/** What settle needs to know of a leased job's spot in its group. */
export function spotOf(job: LeasedJob): LeaseSpot {
  const startedAt = job.lease.expiresAt - job.timeoutMs - LEASE_GRACE_MS;
  return { group: job.group, seq: job.seq, solo: job.solo, recordNeeded: job.recordNeeded, named: job.named, startedAt, attempt: job.attempt };
}

/**
 * Reads job `id`'s spot (its group and sequence): the one read a lease callback adds. Its attempt
 * comes along while events are wanted (job-group.lua).
 */
async function readSpot(ctx: EngineContext, queue: string, id: string): Promise<LeaseSpot> {
  try {
    return await callScript(ctx, scripts.jobGroup, { queue }, [id, ctx.now()]);
  } catch (error) {
    // No such job: its lease cannot be live, and settle says LEASE_LOST for it.
    if (error instanceof QueueError && error.code === 'JOB_NOT_FOUND') return { group: '', seq: 0, recordNeeded: false, named: false };
    throw error;
  }
}

function settlementArgs(settlement: Settlement, { group, seq, solo, recordNeeded, named, startedAt, attempt }: LeaseSpot): (string | number)[] {
  const hint = solo === undefined ? '?' : solo ? 's' : 'm';
  const lease = [settlement.id, splitLease(settlement.lease).token, group, seq, hint];
  const status = settlement.status ?? 0;
  const { batch } = settlement;
  const flags = [recordNeeded ? '1' : '0', named ? '1' : '0', startedAt ?? '', attempt ?? '', batch ? `${batch.id} ${batch.index} ${batch.size}` : ''];
  if (settlement.kind === 'complete') {
    const result = settlement.result === undefined ? '' : JSON.stringify(settlement.result);
    return ['complete', ...lease, result, settlement.resultTruncated ? '1' : '0', -1, status, ...flags];
  }
  if (settlement.kind === 'release') return ['release', ...lease, '', '0', -1, status, ...flags];
  const retryAfterMs = settlement.retryAfterMs === undefined ? -1 : Math.min(Math.max(0, Math.floor(settlement.retryAfterMs)), DAY_MS);
  const error = textHead(settlement.error, MAX_ERROR_CHARS);
  return ['fail', ...lease, error, settlement.retry === false ? '0' : '1', retryAfterMs, status, ...flags];
}

async function runSettle(ctx: EngineContext, queue: string, settlements: Settlement[], reserve: number, onlyIfLive: boolean): Promise<Settled> {
  checkTag(queue);
  if (settlements.length > MAX_BATCH) {
    throw new QueueError('VALIDATION_FAILED', `at most ${MAX_BATCH} settlements per call`, [{ path: 'settlements', message: 'too many' }]);
  }
  for (const settlement of settlements) parseLeaseRef(settlement);
  const spots = await Promise.all(settlements.map((settlement) => settlement.spot ?? readSpot(ctx, queue, settlement.id)));
  const n = Math.min(Math.max(0, reserve), MAX_BATCH);
  const args: (string | number)[] = [ctx.now(), randomSeed(), settlements.length, n, onlyIfLive ? '1' : '0'];
  for (const [i, settlement] of settlements.entries()) args.push(...settlementArgs(settlement, spots[i]!));
  const groups = spots.map((spot) => spot.group);
  // callScript lowers the due index before the new leases are pushed (see producer.ts).
  const { results, config, leased, recorded, events } = await callScript(ctx, scripts.settle, { queue, groups }, args);
  const settled = {
    results,
    config,
    jobs: leased.map((tuple) => toLeasedJob(queue, config, tuple)),
    outcomes: toOutcomesToSend(queue, recorded),
  };
  return withEvents(settled, queue, events);
}

/**
 * Ends each settlement's lease (fenced by its token), then reserves up to `reserve` ready jobs,
 * on one queue or partition (`queue` a tag: a drain's), or across a partitioned queue's
 * partitions: each settlement in the partition its lease names, then reserveAcross.
 */
export function settle(ctx: EngineContext, queue: string, settlements: Settlement[], reserve: number): Promise<Settled> {
  if (partitionOfTag(queue) !== null) return runSettle(ctx, queue, settlements, reserve, false);
  return routed(ctx, queue, async (partitions) => {
    if (partitions === 1) return runSettle(ctx, queue, settlements, reserve, false);
    const byTag = new Map<string, number[]>();
    settlements.forEach((settlement, i) => {
      const tag = leaseTag(queue, settlement.lease);
      byTag.set(tag, [...(byTag.get(tag) ?? []), i]);
    });
    const results: Settled['results'] = new Array(settlements.length);
    const outcomes: OutcomeToSend[] = [];
    const ended: (ScriptEvent[] | undefined)[] = [];
    await Promise.all(
      [...byTag].map(async ([tag, at]) => {
        const done: Pick<Settled, 'results' | 'outcomes' | 'events'> =
          tag === queue ? lostAll(at.map((i) => settlements[i]!)) : await runSettle(ctx, tag, at.map((i) => settlements[i]!), 0, false);
        done.results.forEach((result, j) => (results[at[j]!] = result));
        outcomes.push(...done.outcomes);
        ended.push(done.events);
      }),
    );
    const { config, jobs, events: leasing } = await reserveAcross(ctx, queue, partitions, reserve);
    const events = joinEvents([...ended, leasing]);
    return { results, config, jobs, outcomes, ...(events && { events }) };
  });
}

/** Settlements of a partitioned queue whose tokens name no partition: no lease of it has such a token. */
const lostAll = (settlements: Settlement[]) => ({
  results: settlements.map(({ id }) => ({ id, state: 'LEASE_LOST' as const })),
  outcomes: [],
});

/**
 * Leases up to `max` ready jobs of a partitioned queue: its partitions one after another, from a
 * random one (so that none is always served first), until `max` are leased or all were asked.
 */
async function reserveAcross(ctx: EngineContext, queue: string, partitions: number, max: number) {
  const start = Math.floor(Math.random() * partitions);
  const jobs: LeasedJob[] = [];
  const leasing: (ScriptEvent[] | undefined)[] = [];
  let config: StoredConfig | undefined;
  for (let k = 0; k < partitions && (config === undefined || jobs.length < max); k++) {
    const got = await runSettle(ctx, partitionTag(queue, (start + k) % partitions, partitions), [], max - jobs.length, false);
    config ??= got.config;
    jobs.push(...got.jobs);
    leasing.push(got.events);
  }
  return { config: config!, jobs, events: joinEvents(leasing) };
}

/** Leases up to `max` ready jobs: oldest group heads first, within the queue's concurrency. */
export async function reserve(ctx: EngineContext, queue: string, max: number): Promise<Pick<Settled, 'config' | 'jobs' | 'events'>> {
  const { config, jobs, events } = await settle(ctx, queue, [], max);
  return { config, jobs, ...(events && { events }) };
}

// A stale holder changes nothing: with its lease lost, no next job is reserved either. A lease
// of a deleted queue is lost too (docs/delivery.md#async-mode-jobs-longer-than-one-invocation: "its queue deleted").
// The lease's token names its partition (publicLease): `tag` in the answer says where the next
// jobs were leased.
async function endLease(ctx: EngineContext, queue: string, settlement: Settlement, reserveNext: number) {
  checkQueueName(queue);
  const tag = leaseTag(queue, settlement.lease);
  const settled = await onLease(ctx, queue, tag, () => runSettle(ctx, tag, [settlement], reserveNext, true)).catch((error: unknown) => {
    // A lease of a deleted queue (or of a partition the queue lacks) is lost.
    throw error instanceof QueueError && error.code === 'QUEUE_NOT_FOUND' ? new ScriptRefusal('LEASE_LOST') : error;
  });
  const state = settled.results[0]!.state;
  if (state === 'LEASE_LOST' || state === 'JOB_CANCELLED' || state === 'OUT_OF_ORDER') throw new ScriptRefusal(state);
  const { events } = settled;
  return { state, next: settled.jobs, target: pushTarget(settled.config), outcomes: settled.outcomes, tag, ...(events && { events }) };
}

/** `run` on the lease's partition (`tag`); a partitioned queue's lease whose token names none is lost. */
function onLease<T>(ctx: EngineContext, queue: string, tag: string, run: () => Promise<T>): Promise<T> {
  return routed(ctx, queue, (partitions) => {
    if (partitions > 1 && tag === queue) throw new ScriptRefusal('LEASE_LOST');
    return run();
  });
}

/** Ready jobs a lease's end leases in the same script call, for the caller to deliver. */
interface Reserving {
  /** @default 0 */
  reserve?: number;
}

/** Completes a leased job; with `reserve` > 0 it also leases the next ready jobs. */
export function complete(
  ctx: EngineContext,
  { queue, reserve = 0, ...input }: QueueRef & Reserving & { id: string; lease: string; result?: unknown; resultTruncated?: boolean; spot?: LeaseSpot },
) {
  return endLease(ctx, queue, { kind: 'complete', ...input }, reserve);
}

/** Fails an attempt: retried with backoff while attempts remain (and `retry` is not false). */
export function fail(
  ctx: EngineContext,
  { queue, reserve = 0, ...input }: QueueRef & Reserving & { id: string; lease: string; error: string; retry?: boolean; retryAfterMs?: number; spot?: LeaseSpot },
) {
  return endLease(ctx, queue, { kind: 'fail', ...input }, reserve);
}

const extendSchema = z.object({ extendMs: z.number().int().min(1).optional() });

/** Extends a live lease to now + extendMs (default: the job's timeoutMs), at most 24 h. */
export async function heartbeat(ctx: EngineContext, { queue, ...input }: QueueRef & { id: string; lease: string; extendMs?: number }) {
  checkQueueName(queue);
  const { id, lease } = parseLeaseRef(input);
  // Longer extensions are capped at 24 h (heartbeat.lua), not refused.
  const { extendMs = 0 } = parse(extendSchema, { extendMs: input.extendMs });
  const tag = leaseTag(queue, lease);
  const run = () => callScript(ctx, scripts.heartbeat, { queue: tag }, [ctx.now(), id, splitLease(lease).token, extendMs]);
  const expiresAt = await onLease(ctx, queue, tag, run);
  return { expiresAt };
}

const progressSchema = z.union([
  z.number().min(0).max(100),
  z
    .record(z.string(), z.json())
    .refine((p) => new TextEncoder().encode(JSON.stringify(p)).length <= 4096, 'progress objects are at most 4 KiB'),
]);

type ProgressInput = QueueRef & { id: string; lease: string; progress: unknown };

/**
 * Records a live lease's progress: a number 0-100 or a small JSON object. Answers its `progress`
 * event while the queue's meta says someone may listen (progress below answers the route's `{}`).
 */
export async function recordProgress(ctx: EngineContext, { queue, ...input }: ProgressInput): Promise<{ events?: ScriptEvent[] }> {
  checkQueueName(queue);
  const { id, lease } = parseLeaseRef(input);
  const value = parse(progressSchema, input.progress);
  const tag = leaseTag(queue, lease);
  const args = [id, splitLease(lease).token, JSON.stringify(value), ctx.now()];
  const events = await onLease(ctx, queue, tag, () => callScript(ctx, scripts.progress, { queue: tag }, args));
  return withEvents({}, tag, events);
}

/** recordProgress, answered as the progress route answers: nothing (its events are not an answer). */
export async function progress(ctx: EngineContext, input: ProgressInput): Promise<Record<string, never>> {
  await recordProgress(ctx, input);
  return {};
}
