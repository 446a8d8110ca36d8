// Randomized model-based test: seeded sequences of user operations run against the real engine
// (Redis through the REST bridge, clock moved by hand) and against the reference model
// (reference-model.ts). Every op's result must agree, and every few ops the whole observable
// state too (counts, every job per state, every group). A mismatch names the seed, the op and
// the ops before it. Replay: `MODEL_SEEDS=7 npx vitest run test/model -t random` (MODEL_OPS and
// MODEL_HISTORY set the length and the ops shown).
import { describe, expect, it } from 'vitest';
import type { Engine } from '../../src/core/engine';
import { QueueError } from '../../src/protocol/errors';
import type { Job } from '../../src/protocol/api/types';
import type { LeasedJob } from '../../src/core/engine/leases';
import { queueKeys } from '../../src/core/store/keys';
import { T0, createQueue, testClock, testEngine } from '../helpers/engine';
import { restRedis } from '../helpers/stack';
import {
  type EnqueueInput, type JobState, type LeasedView, type Outcome, ModelError, ReferenceModel,
} from './reference-model';

const OPS = Number(process.env.MODEL_OPS ?? 300);
const SEEDS = process.env.MODEL_SEEDS?.split(',').map(Number) ?? Array.from({ length: 20 }, (_, i) => i + 1);
const HISTORY = Number(process.env.MODEL_HISTORY ?? 20);
const CHECK_EVERY = 10;
const GROUPS = ['a', 'b', 'c', 'd', 'grüppe 1', 'x:y/z'];
const STATES: JobState[] = ['waiting', 'delayed', 'active', 'completed', 'failed'];
// A dedup window short enough that runs see ids both remembered and forgotten again.
const CONFIG = { concurrency: 3, timeoutMs: 2000, maxAttempts: 3, backoffMs: 1500, orderingWindowMs: 0, dedupWindowMs: 10_000 };

/** mulberry32: a tiny seeded PRNG, so a seed replays the same operations. */
function rng(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (lo: number, hi: number) => lo + Math.floor(next() * (hi - lo + 1));
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!;
  return { next, int, pick, chance: (p: number) => next() < p };
}
type Rng = ReturnType<typeof rng>;

type Op =
  | { op: 'enqueue'; jobs: EnqueueInput[]; batch?: boolean }
  | { op: 'reserve'; n: number }
  | { op: 'complete'; id: string; lease: number; result?: unknown; next: number }
  | { op: 'fail'; id: string; lease: number; error: string; retry?: boolean; retryAfterMs?: number; next: number }
  | { op: 'settle'; outcomes: Outcome[]; n: number }
  | { op: 'heartbeat'; id: string; lease: number; extendMs?: number }
  | { op: 'advance'; ms: number }
  | { op: 'remove' | 'promote' | 'retry' | 'get'; id: string }
  | { op: 'update'; id: string; patch: { data?: unknown; delayMs?: number } }
  | { op: 'tick' | 'pauseQueue' | 'resumeQueue' }
  | { op: 'pauseGroup' | 'resumeGroup'; group: string };

/** What the generator remembers: ids used, and every lease handed out as [job id, handle]. */
interface Book {
  nextId: number;
  known: string[];
  issued: [string, number][];
}

// ---- generating operations -------------------------------------------------------------

function data(r: Rng): unknown {
  return r.pick([() => ({ n: r.int(0, 99) }), () => [r.int(0, 9), 'x'], () => [], () => ({}), () => `s${r.int(0, 9)}`,
    () => null, () => ({ deep: { list: [1, { b: null }], s: 'ü' } })])();
}

function newJob(r: Rng, m: ReferenceModel, book: Book): EnqueueInput {
  const id = r.chance(0.12) && book.known.length > 0 ? r.pick(book.known) : `j${book.nextId++}`;
  const job: EnqueueInput = { id, group: r.pick(GROUPS), data: data(r) };
  if (r.chance(0.35)) job.orderMs = m.now + r.int(-4000, 4000); // out of order, or in the future
  if (r.chance(0.25)) job.delayMs = r.int(0, 6000);
  else if (r.chance(0.05)) job.runAt = m.now + r.int(-2000, 4000);
  if (r.chance(0.15)) job.maxAttempts = r.int(1, 4);
  if (r.chance(0.1)) job.timeoutMs = r.int(100, 4000);
  if (r.chance(0.1)) job.backoffMs = r.int(0, 3000);
  return job;
}

/** Mostly a live lease; sometimes a stale one, another job's, or a made-up token (-1). */
function lease(r: Rng, m: ReferenceModel, book: Book): { id: string; lease: number } {
  const live = m.leases();
  const roll = r.next();
  const [id, handle] =
    live.length > 0 && roll < 0.75 ? r.pick(live)
    : book.issued.length > 0 && roll < 0.93 ? r.pick(book.issued)
    : [book.known.length > 0 ? r.pick(book.known) : 'j0', live.length > 0 && roll < 0.97 ? r.pick(live)[1] : -1];
  return { id, lease: handle };
}

function someId(r: Rng, m: ReferenceModel, book: Book, prefer: JobState[]): string {
  const preferred = m.ids().filter((id) => prefer.includes(m.getJob(id).state));
  if (preferred.length > 0 && r.chance(0.7)) return r.pick(preferred);
  return book.known.length > 0 ? r.pick(book.known) : 'j0';
}

function clockStep(r: Rng, m: ReferenceModel): number {
  const roll = r.next();
  if (roll < 0.55) return r.int(0, 1500);
  if (roll < 0.75) return r.int(1500, 9000);
  // Onto a boundary: just before, at, or just after something falls due.
  const future = m.timers().filter((t) => t > m.now);
  return future.length === 0 ? r.int(0, 3000) : Math.max(0, r.pick(future) - m.now + r.pick([-1, 0, 0, 1]));
}

const WEIGHTS: [Op['op'] | 'batch', number][] = [
  ['enqueue', 20], ['batch', 4], ['reserve', 12], ['complete', 12], ['fail', 8], ['settle', 4],
  ['heartbeat', 4], ['tick', 9], ['advance', 11], ['remove', 3], ['promote', 3], ['retry', 2],
  ['update', 3], ['get', 2], ['pauseQueue', 0.5], ['resumeQueue', 2], ['pauseGroup', 2], ['resumeGroup', 3],
];
const TOTAL_WEIGHT = WEIGHTS.reduce((sum, [, w]) => sum + w, 0);

function generate(r: Rng, m: ReferenceModel, book: Book): Op {
  let roll = r.next() * TOTAL_WEIGHT;
  let kind = WEIGHTS.find(([, w]) => (roll -= w) < 0)?.[0] ?? 'tick';
  // Keep the queue mostly running and leases mostly live, so most ops have an effect.
  if (['complete', 'fail', 'settle', 'heartbeat'].includes(kind) && m.leases().length === 0 && r.chance(0.7)) kind = 'reserve';
  if (kind === 'pauseQueue' && m.paused) kind = 'resumeQueue';
  const paused = m.pausedGroups();
  switch (kind) {
    case 'enqueue':
    case 'batch': {
      const jobs = Array.from({ length: kind === 'batch' ? r.int(1, 4) : 1 }, () => newJob(r, m, book));
      if (kind === 'batch' && r.chance(0.2)) jobs.push({ ...jobs[0]!, data: 'second of the same id' });
      return { op: 'enqueue', jobs, batch: kind === 'batch' };
    }
    case 'reserve':
      return { op: 'reserve', n: r.int(1, 4) };
    case 'complete': {
      const result = r.chance(0.5) ? { result: data(r) } : {};
      return { op: 'complete', ...lease(r, m, book), ...result, next: r.pick([0, 0, 0, 1, 2]) };
    }
    case 'fail': {
      const retryAfter = r.chance(0.3) ? { retryAfterMs: r.chance(0.5) ? 0 : r.int(1, 3000) } : {};
      const retry = r.chance(0.2) ? { retry: false } : {};
      const error = `boom ${r.int(0, 99)}`;
      return { op: 'fail', ...lease(r, m, book), error, ...retry, ...retryAfter, next: r.pick([0, 0, 1, 2]) };
    }
    case 'settle': {
      const outcomes = Array.from({ length: r.int(1, 3) }, (): Outcome => {
        const ref = lease(r, m, book);
        return r.chance(0.6) ? { kind: 'complete', ...ref } : { kind: 'fail', ...ref, error: 'settled fail' };
      });
      return { op: 'settle', outcomes, n: r.int(0, 3) };
    }
    case 'heartbeat': {
      const extend = r.chance(0.5) ? { extendMs: r.chance(0.05) ? 90_000_000 : r.int(1, 10_000) } : {}; // 25 h: capped at 24
      return { op: 'heartbeat', ...lease(r, m, book), ...extend };
    }
    case 'advance':
      return { op: 'advance', ms: clockStep(r, m) };
    case 'remove':
      return { op: 'remove', id: someId(r, m, book, ['waiting', 'delayed', 'completed', 'failed']) };
    case 'promote':
    case 'retry':
    case 'get':
      return { op: kind, id: someId(r, m, book, kind === 'promote' ? ['delayed'] : kind === 'retry' ? ['failed'] : []) };
    case 'update': {
      const patch = r.chance(0.5) ? { data: data(r) } : {};
      const delay = r.chance(0.6) || !('data' in patch) ? { delayMs: r.chance(0.3) ? 0 : r.int(1, 5000) } : {};
      return { op: 'update', id: someId(r, m, book, ['waiting', 'delayed']), patch: { ...patch, ...delay } };
    }
    case 'pauseGroup':
    case 'resumeGroup':
      // Resume mostly paused groups, so groups are not paused most of the time.
      return { op: kind, group: kind === 'resumeGroup' && paused.length > 0 && r.chance(0.85) ? r.pick(paused) : r.pick(GROUPS) };
    default:
      return { op: kind as 'tick' | 'pauseQueue' | 'resumeQueue' };
  }
}

// ---- running one op on each side -------------------------------------------------------

/** What a refused operation shows: its error code. */
function refusal(error: unknown) {
  if (error instanceof QueueError || error instanceof ModelError) return { error: error.code };
  throw error;
}

function attempt<T>(f: () => T) {
  try {
    return f();
  } catch (error) {
    return refusal(error);
  }
}

/** A result to compare, plus the leases it handed out (tokens on the engine, handles in the model). */
type Ran<L> = { value: unknown; leases: L[] };

// The model keeps no attempt history (test/engine/history.test.ts covers it).
const engineJob = ({ queue: _queue, history: _history, ...job }: Job) => job;
const engineInput = ({ backoffMs, ...job }: EnqueueInput) =>
  backoffMs === undefined ? job : { ...job, backoff: { type: 'fixed' as const, delayMs: backoffMs, jitter: false } };

async function runEngine(e: Engine, q: string, op: Op, token: (handle: number) => string): Promise<Ran<string>> {
  const leases: string[] = [];
  const leased = (jobs: LeasedJob[]) =>
    jobs.map(({ queue: _queue, tag: _tag, lease: l, webhookId: _webhookId, seq: _seq, solo: _solo, recordNeeded: _callback, named: _named, batchIndex: _batchIndex, ...job }) => (leases.push(l.token), { ...job, expiresAt: l.expiresAt }));
  const run = async (): Promise<unknown> => {
    switch (op.op) {
      case 'enqueue':
        return op.batch ? e.enqueueBatch(q, op.jobs.map(engineInput)) : [await e.enqueue(q, engineInput(op.jobs[0]!))];
      case 'reserve':
        return { jobs: leased((await e.reserve(q, op.n)).jobs) };
      case 'complete':
      case 'fail': {
        const { op: kind, next: n, lease: handle, ...input } = op;
        const end = kind === 'complete' ? e.complete : e.fail;
        const { state, next } = await end(q, { ...(input as { id: string; error: string }), lease: token(handle) }, n);
        return { state, next: leased(next) };
      }
      case 'settle': {
        const { results, jobs } = await e.settle(q, op.outcomes.map((o) => ({ ...o, lease: token(o.lease) })), op.n);
        return { results, jobs: leased(jobs) };
      }
      case 'heartbeat':
        return e.heartbeat(q, { id: op.id, lease: token(op.lease), extendMs: op.extendMs });
      case 'tick':
        return e.tick(q);
      case 'advance':
        return null;
      case 'remove':
        return (await e.removeJob(q, op.id)) ?? null;
      case 'promote':
      case 'retry':
      case 'get':
        return engineJob(await { promote: e.promoteJob, retry: e.retryJob, get: e.getJob }[op.op](q, op.id));
      case 'update':
        return engineJob(await e.updateJob(q, op.id, op.patch));
      case 'pauseQueue':
      case 'resumeQueue':
        return { paused: (await (op.op === 'pauseQueue' ? e.pauseQueue(q) : e.resumeQueue(q))).paused };
      case 'pauseGroup':
      case 'resumeGroup':
        return (op.op === 'pauseGroup' ? e.pauseGroup : e.resumeGroup)(q, op.group);
    }
  };
  return { value: await run().catch(refusal), leases };
}

function runModel(m: ReferenceModel, op: Op): Ran<number> {
  const leases: number[] = [];
  const leased = (jobs: LeasedView[]) => jobs.map(({ lease: handle, ...job }) => (leases.push(handle), job));
  const run = (): unknown => {
    switch (op.op) {
      case 'enqueue':
        return m.enqueue(op.jobs);
      case 'reserve':
        return { jobs: leased(m.settle([], op.n).jobs) };
      case 'complete':
      case 'fail': {
        const { op: kind, next: n, ...rest } = op;
        const { state, next } = m.end({ kind, ...rest } as Outcome, n);
        return { state, next: leased(next) };
      }
      case 'settle': {
        const { results, jobs } = m.settle(op.outcomes, op.n);
        return { results, jobs: leased(jobs) };
      }
      case 'heartbeat':
        return m.heartbeat(op.id, op.lease, op.extendMs);
      case 'tick':
        return m.tick();
      case 'advance':
        return (m.now += op.ms), null;
      case 'remove':
        return m.removeJob(op.id), null;
      case 'promote':
      case 'retry':
      case 'get':
        return { promote: m.promoteJob, retry: m.retryJob, get: m.getJob }[op.op].call(m, op.id);
      case 'update':
        return m.updateJob(op.id, op.patch);
      case 'pauseQueue':
      case 'resumeQueue':
        return m.setQueuePaused(op.op === 'pauseQueue');
      case 'pauseGroup':
      case 'resumeGroup':
        return op.op === 'pauseGroup' ? m.pauseGroup(op.group) : m.resumeGroup(op.group);
    }
  };
  return { value: attempt(run), leases };
}

// ---- the whole observable state --------------------------------------------------------

const byName = <T extends { group: string }>(rows: T[]) => [...rows].sort((a, b) => (a.group < b.group ? -1 : 1));

async function engineState(e: Engine, q: string) {
  const listAll = async (state: JobState) => {
    const seen = new Map<string, ReturnType<typeof engineJob>>();
    for (let cursor: string | null = ''; cursor !== null; ) {
      const query = { state, limit: 1000, ...(cursor ? { cursor } : {}) };
      const page: { jobs: Job[]; cursor: string | null } = await e.listJobs(q, query);
      for (const job of page.jobs) seen.set(job.id, engineJob(job));
      cursor = page.cursor;
    }
    const jobs = [...seen.values()];
    return state === 'waiting' ? jobs.sort((a, b) => (a.id < b.id ? -1 : 1)) : jobs; // HSCAN has no order
  };
  const group = (g: string) => e.getGroup(q, g).then(({ jobs, ...rest }) => ({ ...rest, jobs: jobs.map(engineJob) }), refusal);
  const [info, groups, details, ...lists] = await Promise.all([
    e.getQueue(q), e.listGroups(q, { limit: 1000 }), Promise.all(GROUPS.map(group)), ...STATES.map(listAll),
  ]);
  return {
    paused: info.paused,
    counts: info.counts,
    jobs: Object.fromEntries(STATES.map((s, i) => [s, lists[i]])),
    groups: byName(groups.groups),
    details: Object.fromEntries(GROUPS.map((g, i) => [g, details[i]])),
  };
}

function modelState(m: ReferenceModel) {
  return {
    paused: m.paused,
    counts: m.counts(),
    jobs: Object.fromEntries(STATES.map((s) => [s, m.listJobs(s)])),
    groups: byName(m.listGroups()),
    details: Object.fromEntries(GROUPS.map((g) => [g, attempt(() => m.getGroup(g))])),
  };
}

// ---- one run ---------------------------------------------------------------------------

const brief = (value: unknown) => {
  const text = JSON.stringify(value) ?? 'undefined';
  return text.length > 300 ? `${text.slice(0, 300)}…` : text;
};

type NextOp = (i: number, m: ReferenceModel, book: Book) => Op;

/** Runs `count` ops from `nextOp` on a fresh queue and on a fresh model, comparing as it goes. */
async function run(label: string, count: number, nextOp: NextOp, config = CONFIG) {
  const clock = testClock();
  const engine = testEngine(clock);
  const { backoffMs, ...rest } = config;
  const queue = await createQueue(engine, {
    ...rest, backoff: { type: 'fixed', delayMs: backoffMs, jitter: false }, keepCompleted: 1_000_000, keepFailed: 1_000_000,
  }, 'model');
  const model = new ReferenceModel(config, clock.now());
  const book: Book = { nextId: 0, known: [], issued: [] };
  const tokens = new Map<number, string>();
  const log: string[] = [];
  const where = (i: number, what: string) =>
    `${label}, op #${i}: ${what}\nlast ops (-> what the model says):\n${log.slice(-HISTORY).join('\n')}\n`;
  try {
    for (let i = 0; i < count; i++) {
      const op = nextOp(i, model, book);
      if (op.op === 'advance') clock.advance(op.ms);
      const actual = await runEngine(engine, queue, op, (handle) => tokens.get(handle) ?? 'not-a-lease-token');
      const expected = runModel(model, op);
      log.push(`#${i} ${brief(op)} -> ${brief(expected.value)}`);
      if (op.op === 'tick') {
        const { nextDueAt, readyNow } = expected.value as ReturnType<ReferenceModel['tick']>;
        const got = actual.value as Awaited<ReturnType<Engine['tick']>>;
        expect({ readyNow: got.readyNow, more: got.more }, where(i, 'tick')).toEqual({ readyNow, more: false });
        // The tick may wake early (a spurious tick is cheap), never late, never in the past.
        const late = nextDueAt !== null && (got.nextDueAt === null || got.nextDueAt > nextDueAt);
        const past = got.nextDueAt !== null && got.nextDueAt <= clock.now();
        const when = { nextDueAt: got.nextDueAt, late, past };
        expect(when, where(i, `tick: next due at ${nextDueAt}`)).toMatchObject({ late: false, past: false });
      } else {
        expect(actual.value, where(i, 'result differs (expected = model)')).toEqual(expected.value);
      }
      expected.leases.forEach((handle, k) => {
        tokens.set(handle, actual.leases[k]!);
        book.issued.push([model.leases().find(([, h]) => h === handle)![0], handle]);
      });
      if (op.op === 'enqueue') for (const job of op.jobs) if (!book.known.includes(job.id)) book.known.push(job.id);
      if (i % CHECK_EVERY === CHECK_EVERY - 1 || i === count - 1) {
        const state = await engineState(engine, queue);
        expect(state, where(i, 'observable state differs (expected = model)')).toEqual(modelState(model));
        // maxJobs is judged by meta's count of jobs not ended (quota.lua): it must be exact.
        const { waiting, delayed, active } = state.counts;
        const live = Number(await restRedis().hget(queueKeys(queue).meta, 'live'));
        expect(live, where(i, 'meta live != waiting + delayed + active')).toBe(waiting + delayed + active);
        // maxBytes is judged by meta's count of waiting + delayed data (bytes.lua): exact too.
        const bytes = Number((await restRedis().hget(queueKeys(queue).meta, 'bytes')) ?? 0);
        expect(bytes, where(i, 'meta bytes != the data of waiting + delayed jobs')).toBe(await waitingBytes(queue));
      }
    }
  } finally {
    await engine.deleteQueue(queue);
  }
}

/** The bytes of data of the queue's waiting and delayed jobs, read from their records. */
async function waitingBytes(queue: string): Promise<number> {
  const keys = queueKeys(queue);
  const flat = ((await restRedis().hgetall(keys.jobs)) ?? []) as unknown as string[]; // [field, value, ...] as sent
  const records = new Map<string, string>();
  for (let at = 0; at < flat.length; at += 2) records.set(flat[at]!, flat[at + 1]!);
  const leased = new Set(((await restRedis().zrange(keys.active, 0, -1)) as string[]).map((member) => member.split(' ')[0]));
  let total = 0;
  for (const [id, record] of records) {
    const lines = record.split('\n');
    const state = JSON.parse(lines[0]!) as { st?: string; h?: unknown };
    if ((state.st === undefined && !leased.has(id)) || state.st === 'delayed') {
      total += Buffer.byteLength(lines.slice(state.h ? 2 : 1).join('\n'));
    }
  }
  return total;
}

function runSeed(seed: number) {
  const r = rng(seed);
  const label = `seed ${seed} (replay: MODEL_SEEDS=${seed} npx vitest run test/model -t random)`;
  // Some seeds run one job at a time, some with an ordering window.
  const config = { ...CONFIG, concurrency: seed % 5 === 2 ? 1 : 3, orderingWindowMs: seed % 4 === 0 ? 1000 : 0 };
  return run(label, OPS, (_i, m, book) => generate(r, m, book), config);
}

describe(`random operations: engine vs reference model (${OPS} ops per seed)`, () => {
  for (const seed of SEEDS) it(`seed ${seed}`, () => runSeed(seed), 120_000);
});

// ---- engine bugs the model found, pinned as scripted scenarios ---------------------------

const scripted = (label: string, ops: Op[]) => run(label, ops.length, (i) => ops[i]!);
/** J fails once and holds group `a` for its 1500 ms backoff; then K, ordered before J, joins `a`. */
const heldByJ: Op[] = [
  { op: 'enqueue', jobs: [{ id: 'J', group: 'a', data: 1 }] },
  { op: 'reserve', n: 1 },
  { op: 'fail', id: 'J', lease: 1, error: 'boom', next: 0 },
  { op: 'enqueue', jobs: [{ id: 'K', group: 'a', data: 2, orderMs: T0 - 1000 }] },
];

describe('engine bugs the model found (fixed; kept as regressions)', () => {
  // complete/fail with a lost lease once leased `reserveNext` jobs that nobody received.
  it('complete with a stale lease and reserveNext leases nothing', () =>
    scripted('stale complete with reserveNext', [
      { op: 'enqueue', jobs: [{ id: 'A', group: 'a', data: 1 }] },
      { op: 'reserve', n: 1 },
      { op: 'complete', id: 'A', lease: 1, next: 0 },
      { op: 'enqueue', jobs: [{ id: 'B', group: 'b', data: 2 }] },
      { op: 'complete', id: 'A', lease: 1, next: 1 }, // LEASE_LOST, and must change nothing
      { op: 'reserve', n: 1 }, // B is still ready
    ]));

  // A retry hold once followed whichever job was the group's head, not the retried job.
  it('removing another job during a retry backoff does not end the backoff', () =>
    scripted('remove during backoff', [
      ...heldByJ,
      { op: 'remove', id: 'K' },
      { op: 'reserve', n: 1 }, // nothing: J's backoff has not ended
    ]));
  it('pausing and resuming a group during a retry backoff keeps the backoff', () =>
    scripted('pause/resume during backoff', [
      ...heldByJ,
      { op: 'pauseGroup', group: 'a' },
      { op: 'resumeGroup', group: 'a' }, // still held: J's backoff has not ended
      { op: 'reserve', n: 2 },
    ]));
});
