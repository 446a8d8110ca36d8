// Enqueue: validation in TypeScript (a bad batch writes nothing), then one script per batch. A
// publish token's jobs also pass its policy first (publish-policy.ts); the script checks the
// quotas (src/lua/includes/quota.lua) and the publish rate limits (publish-rate.lua) before it writes.
// While the queue's meta says someone may listen, the answer carries the job events the enqueue
// caused (`events`, src/core/store/events.ts): each job's `added`, then each lease's `active`.
import type * as z from 'zod';
import { checkQueueName, parse } from '../../protocol/parse';
import { scripts } from '../../lua/scripts.generated';
import type { EnqueueResult } from '../../protocol/api/types';
import type { ConfigOptions, StoredConfig } from '../../protocol/config';
import type { EngineContext } from '../store/context';
import { type QueueError } from '../../protocol/errors';
import { isRefusal, startTooLate } from '../store/refusals';
import { batchInputSchemaFor, jobInputSchemaFor } from '../../protocol/job-input';
import { randomId } from '../../protocol/ids';
import { type LeasedJob, toLeasedJob } from './leases';
import { deliveryCount } from '../store/leased';
import { partitionOf, partitionTag } from '../store/partitions';
import { callScript } from '../store/scripts';
import { type ScriptEvent, joinEvents, withEvents } from '../store/events';
import { newJobId, routed } from './partitions';
import { PUBLISH_ID_PREFIX, checkPublished } from './publish-policy';
import type { TraceContext } from '../../protocol/trace-context';

export type { EnqueueResult } from '../../protocol/api/types';

type ParsedJob = z.output<ReturnType<typeof jobInputSchemaFor>>;

/** The enqueue schemas, built once per setting of allowHttpLoopback (the only option they read). */
const schemas = new Map<boolean, { job: ReturnType<typeof jobInputSchemaFor>; batch: ReturnType<typeof batchInputSchemaFor> }>();
function schemasFor(options: ConfigOptions) {
  const key = options.allowHttpLoopback === true;
  let built = schemas.get(key);
  if (!built) schemas.set(key, (built = { job: jobInputSchemaFor(options), batch: batchInputSchemaFor(options) }));
  return built;
}

/**
 * The per-job state fields a job record carries only when given (see job.lua). `trace`: the
 * enqueue's trace context (docs/tracing.md), the same for every job of a batch.
 */
function recordOptions(job: ParsedJob, createdAt: number, orderMs: number, trace: TraceContext, ttlMs?: number): string {
  const options: Record<string, unknown> = {};
  if (ttlMs) options.x = createdAt + ttlMs; // its deadline to start (expiry.lua)
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
  if (job.keepResult) options.w = 1;
  if (createdAt !== orderMs) options.c = createdAt;
  if (trace.traceparent !== undefined) options.tp = trace.traceparent;
  if (trace.tracestate !== undefined) options.ts = trace.tracestate;
  return Object.keys(options).length > 0 ? JSON.stringify(options) : '';
}

/** A debounced job starts delayMs from now, and no later than maxDelayMs from now. */
function debouncedStart({ delayMs, maxDelayMs = delayMs }: NonNullable<ParsedJob['debounce']>, now: number): number {
  return now + Math.min(delayMs, maxDelayMs);
}

/** enqueue.lua's flag per job: new, duplicate (a known id), debounced (collapsed into another job). */
const ANSWER_FLAGS = [{}, { duplicate: true }, { debounced: true }] as const;

/**
 * A publish token's enqueue: the queue's config as the route read it (what the token may send),
 * the client whose publishRateLimit it spends (src/protocol/publish-client.ts) and the token's
 * SHA-256, whose publishTokenRateLimit it spends too.
 */
export interface Publisher {
  config: StoredConfig;
  client: string;
  /** The token's SHA-256 (the route always has it); a caller without one counts the client as its token. */
  tokenHash?: string;
}

/** Where job i sits in the body, for error paths: '' for a lone job, 'jobs.<i>.' in a batch. */
type PathOf = (i: number) => string;
const lonePath: PathOf = () => '';
const batchPath: PathOf = (i) => `jobs.${i}.`;

/** An enqueue call: the queue and its body, and what the route adds to it. */
export interface EnqueueInput {
  queue: string;
  /** One job (enqueue), or `{"jobs":[...]}` (enqueueBatch), as sent. */
  body: unknown;
  /** Ready jobs to lease in the same script call, for the caller to deliver. @default 0 */
  reserve?: number;
  /** Each job's `data` exactly as sent, stored instead of a re-encoding (big integers, number formats). */
  rawData?: readonly (string | undefined)[];
  /** Sent with a publish token. */
  publisher?: Publisher;
  /** The producer's trace context, already checked (src/protocol/trace-context.ts), kept with each job. */
  trace?: TraceContext;
  /** Events of these jobs wanted until then (epoch ms): an enqueue that answers eventsUrls (docs/events.md). */
  wantEventsUntil?: number;
}

/** Parsed jobs on their way to a script: the call, with where each job sits in the body. */
interface Sending extends EnqueueInput {
  jobs: ParsedJob[];
  pathOf: PathOf;
}

/** The field that set job `job`'s start, for a start past maxDelayMs (the script's DELAY_TOO_LONG). */
function startField(job: ParsedJob): string {
  if (job.debounce) return 'debounce.delayMs';
  return job.runAt !== undefined ? 'runAt' : 'delayMs';
}

/** One partition an enqueue wrote to (a queue of one partition: the queue itself). */
export interface EnqueuedPart {
  tag: string;
  /** More jobs may be ready there than were leased: a drain should look. */
  more: boolean;
}

export interface Enqueued {
  results: EnqueueResult[];
  /** Jobs leased by the same call (when asked to reserve), for the caller to deliver. */
  leased: LeasedJob[];
  config: StoredConfig;
  parts: EnqueuedPart[];
  /** The job events of the call, in order, while someone may listen (absent otherwise). */
  events?: ScriptEvent[];
}

/**
 * One script call: `jobs` into the queue or partition `tag`, each with its id in `ids` (the
 * producer's, or one made for it), leasing up to `reserve`. `rateSpent`: the publish windows
 * were spent at the queue's root (a partitioned queue).
 */
async function enqueueInto(
  ctx: EngineContext,
  tag: string,
  { jobs, reserve = 0, rawData = [], pathOf, publisher, trace = {}, wantEventsUntil = 0 }: Sending,
  ids: readonly string[],
  rateSpent = false,
) {
  const now = ctx.now();
  // '1': the script checks the publish windows; '2': they were spent at the queue's root.
  const published = publisher ? (rateSpent ? '2' : '1') : '';
  const args: (string | number)[] = [now, Math.min(Math.max(0, reserve), 1000), jobs.length, published, wantEventsUntil];
  for (const [i, job] of jobs.entries()) {
    const orderMs = job.orderMs ?? now;
    const runAt = job.debounce ? debouncedStart(job.debounce, now) : (job.runAt ?? (job.delayMs !== undefined ? now + job.delayMs : 0));
    // A publish token cannot send ttlMs (publish-policy.ts): its jobs get the queue's publishTtlMs.
    const ttlMs = publisher ? publisher.config.publishTtlMs : job.ttlMs;
    args.push(ids[i]!, job.group, orderMs, runAt, rawData[i] ?? JSON.stringify(job.data), recordOptions(job, now, orderMs, trace, ttlMs));
  }
  const target = { queue: tag, groups: jobs.map((job) => job.group), client: publisher?.client, token: publisher && (publisher.tokenHash ?? publisher.client) };
  // callScript lowers the due index before anything is pushed: a lease's deadline there is what
  // retries it if this invocation dies mid-delivery (G3).
  const { results, config, leased, events } = await callScript(ctx, scripts.enqueue, target, args).catch((error: unknown) => {
    if (!isRefusal(error, 'DELAY_TOO_LONG')) throw error;
    const { index } = (error as QueueError).details as { index: number };
    throw startTooLate(pathOf(index) + startField(jobs[index]!), error as QueueError);
  });
  const done = {
    results: results.map(([id, state, flag]): EnqueueResult => ({ id, state, ...ANSWER_FLAGS[flag] })),
    leased: leased.map((tuple) => toLeasedJob(tag, config, tuple)),
    config,
  };
  return withEvents(done, tag, events);
}

/**
 * A publish token's jobs, spent from its client's and its token's windows at the queue's root
 * (publish-rate.lua): one place per queue, whatever its partitions. One call more than an
 * unpartitioned queue's publish, whose enqueue script spends them itself.
 */
async function spendPublishRate(ctx: EngineContext, queue: string, n: number, { config, client, tokenHash = client }: Publisher): Promise<void> {
  const limits = JSON.stringify({ publishRateLimit: config.publishRateLimit, publishTokenRateLimit: config.publishTokenRateLimit });
  await callScript(ctx, scripts.publishRate, { queue, client, token: tokenHash }, [n, limits]);
}

/**
 * A partitioned queue's enqueue: one call per partition the jobs' groups fall in, at once, each
 * atomic (a batch is atomic per partition). A publish token's jobs are first spent from its
 * windows at the queue's root, so a refusal there writes no job.
 */
async function enqueueSplit(ctx: EngineContext, sending: Sending, partitions: number): Promise<Enqueued> {
  const { queue, jobs, reserve = 0, rawData = [], pathOf, publisher } = sending;
  const byPartition = new Map<number, number[]>();
  jobs.forEach((job, i) => {
    const p = partitionOf(job.group, partitions);
    byPartition.set(p, [...(byPartition.get(p) ?? []), i]);
  });
  const indexes = [...byPartition.values()];
  // The reservation goes whole to the partition with the most of the batch: one drain pushes
  // them with every slot; the others' drains take turns after it (dispatcher.ts drain).
  const most = indexes.reduce((best, at, k) => (at.length > indexes[best]!.length ? k : best), 0);
  if (publisher) await spendPublishRate(ctx, queue, jobs.length, publisher);
  const done = await Promise.all(
    indexes.map((at, k) => {
      const share = k === most ? reserve : 0;
      const tag = partitionTag(queue, partitionOf(jobs[at[0]!]!.group, partitions), partitions);
      const mine = at.map((i) => jobs[i]!);
      const ids = mine.map((job) => job.id ?? newJobId(job.group, partitions, publisher ? PUBLISH_ID_PREFIX : ''));
      const part = { ...sending, jobs: mine, reserve: share, rawData: at.map((i) => rawData[i]), pathOf: (j: number) => pathOf(at[j]!) };
      return enqueueInto(ctx, tag, part, ids, true).then((into) => ({ ...into, tag, more: share > 0 ? deliveryCount(into.leased) === share : reserve > 0 }));
    }),
  );
  const results = new Array<EnqueueResult>(jobs.length);
  done.forEach((part, k) => part.results.forEach((result, j) => (results[indexes[k]![j]!] = result)));
  const events = joinEvents(done.map((part) => part.events));
  const parts = done.map(({ tag, more }) => ({ tag, more }));
  return { results, leased: done.flatMap((part) => part.leased), config: done[0]!.config, parts, ...(events && { events }) };
}

async function enqueueParsed(ctx: EngineContext, sent: Sending): Promise<Enqueued> {
  const { queue, pathOf, publisher, reserve = 0 } = sent;
  if (publisher) checkPublished(sent.jobs, sent.jobs.map((_, i) => pathOf(i)), publisher.config);
  // A publish token's ids live apart: its `x` is the job `pub:x`, and the ids made for it start
  // `pub:` too (quota.lua counts its jobs by them: publishMaxJobs).
  const jobs = publisher ? sent.jobs.map((job) => (job.id === undefined ? job : { ...job, id: PUBLISH_ID_PREFIX + job.id })) : sent.jobs;
  const sending = { ...sent, jobs };
  return routed(ctx, queue, async (partitions) => {
    if (partitions > 1) return enqueueSplit(ctx, sending, partitions);
    const ids = jobs.map((job) => job.id ?? (publisher ? PUBLISH_ID_PREFIX : '') + randomId());
    const done = await enqueueInto(ctx, queue, sending, ids);
    return { ...done, parts: [{ tag: queue, more: reserve > 0 && deliveryCount(done.leased) === reserve }] };
  });
}

/**
 * Adds one job, and leases up to `reserve` ready jobs in the same round trip. A known id (a job
 * kept, or one the dedup window remembers) answers with `duplicate: true` and changes nothing; a
 * debounced job that collapsed into a waiting one answers that job with `debounced: true`.
 */
export function enqueue(ctx: EngineContext, input: EnqueueInput): Promise<Enqueued> {
  checkQueueName(input.queue);
  return enqueueParsed(ctx, { ...input, jobs: [parse(schemasFor(ctx.options).job, input.body)], pathOf: lonePath });
}

/** Adds up to 1000 jobs (`{"jobs":[...]}`) atomically: the batch is validated whole before anything is written. */
export function enqueueBatch(ctx: EngineContext, input: EnqueueInput): Promise<Enqueued> {
  checkQueueName(input.queue);
  return enqueueParsed(ctx, { ...input, jobs: parse(schemasFor(ctx.options).batch, input.body).jobs, pathOf: batchPath });
}
