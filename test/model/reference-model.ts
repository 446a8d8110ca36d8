// A reference model of one groupq queue, in plain memory: the spec the randomized test
// (random-ops.test.ts) holds the engine to. It knows nothing of Redis keys or scripts; it says
// what a user observes after each operation, from the docs (README.md#guarantees, docs/http-api.md,
// docs/internals.md). Where the contract is
// silent and the engine made a reasonable choice, the model mirrors it and says so ("mirror:").
import type { JobState } from '../../src/protocol/job-input';
import type { Job } from '../../src/protocol/api/types';
import type { LeasedJob } from '../../src/core/engine/leases';
import type { GroupState } from '../../src/core/engine/queues';
import type { GroupSummary } from '../../src/core/engine/reads';

export type { JobState };
export type EndState = 'completed' | 'waiting' | 'failed' | 'LEASE_LOST';
/** A job as getJob/listJobs show it, without `queue`. */
export type JobView = Omit<Job, 'queue' | 'progress' | 'resultTruncated'>;
/** A job as reserve hands it out; `lease` is the model's handle for the engine's token. */
export type LeasedView = Omit<LeasedJob, 'queue' | 'tag' | 'lease' | 'webhookId' | 'seq' | 'solo' | 'recordNeeded' | 'named' | 'batchIndex'> & { expiresAt: number; lease: number };

const DAY_MS = 86_400_000;
const LEASE_GRACE_MS = 5000;

/** An operation's refusal, named by the engine's error code. */
export class ModelError extends Error {
  constructor(readonly code: string) {
    super(code);
  }
}

const throwError = (code: string): never => {
  throw new ModelError(code);
};

/** The queue config; the backoff is fixed and without jitter so retry times are exact. */
export type ModelConfig = Record<'concurrency' | 'timeoutMs' | 'maxAttempts' | 'backoffMs' | 'orderingWindowMs' | 'dedupWindowMs', number>;

/** A job to enqueue; `backoffMs` is a per-job fixed backoff without jitter. */
export type EnqueueInput = { id: string; group: string; data: unknown } & Partial<
  Record<'orderMs' | 'delayMs' | 'runAt' | 'maxAttempts' | 'timeoutMs' | 'backoffMs', number>
>;

export type Outcome =
  | { kind: 'complete'; id: string; lease: number; result?: unknown }
  | { kind: 'fail'; id: string; lease: number; error: string; retry?: boolean; retryAfterMs?: number };

type ModelJob = Omit<EnqueueInput, 'delayMs'> & {
  orderMs: number;
  seq: number;
  createdAt: number;
  state: JobState;
  /** Attempts that ended. */
  attempts: number;
  /** The live lease: its handle (the test maps handles to the engine's tokens), deadline, start. */
  lease?: number;
  deadline?: number;
  startedAt?: number;
  finishedAt?: number;
  result?: { value: unknown };
  error?: string;
};

interface GroupFlags {
  paused: boolean;
  /** A paused group that dispatching has set aside (see reserve). */
  parked: boolean;
  /** A retry's backoff for job `job`: the group starts nothing until a tick at or after `until`. */
  hold: { until: number; job: string } | null;
}

const byOrder = (a: ModelJob, b: ModelJob) => a.orderMs - b.orderMs || a.seq - b.seq;

export class ReferenceModel {
  paused = false;
  private seq = 0;
  private leaseCount = 0;
  private readonly jobs = new Map<string, ModelJob>();
  /** Ids of jobs that ended, known until `until` (the dedup window): every model job has an id. */
  private readonly remembered = new Map<string, { until: number; state: 'completed' | 'failed' | 'removed' }>();
  private readonly groups = new Map<string, GroupFlags>();

  // prettier-ignore
  constructor(readonly config: ModelConfig, public now: number) {}

  /**
   * enqueue and enqueueBatch: an existing id is a duplicate and changes nothing (G4), and so is
   * the id of a job that ended within the dedup window, answering the state it ended in.
   */
  enqueue(inputs: EnqueueInput[]): { id: string; state: JobState | 'removed'; duplicate?: true }[] {
    return inputs.map(({ delayMs, ...input }) => {
      this.seq += 1;
      const existing = this.jobs.get(input.id);
      if (existing) return { id: input.id, state: existing.state, duplicate: true };
      const ended = this.remembered.get(input.id);
      if (ended && ended.until > this.now) return { id: input.id, state: ended.state, duplicate: true };
      const runAt = delayMs !== undefined ? this.now + delayMs : (input.runAt ?? 0);
      const state = runAt > this.now ? 'delayed' : 'waiting';
      this.flags(input.group);
      this.jobs.set(input.id, {
        ...input, orderMs: input.orderMs ?? this.now, seq: this.seq, createdAt: this.now, state, attempts: 0,
        runAt: state === 'delayed' ? runAt : undefined,
      });
      return { id: input.id, state };
    });
  }

  // ---- leases ----------------------------------------------------------------------------
  /** Ends each lease (fenced by its handle), then reserves up to `n` jobs. */
  settle(outcomes: Outcome[], n: number): { results: { id: string; state: EndState }[]; jobs: LeasedView[] } {
    const results = outcomes.map((o) => ({ id: o.id, state: this.endLease(o) }));
    return { results, jobs: this.reserve(n) };
  }

  /** complete and fail: a lost lease throws LEASE_LOST and changes nothing. */
  end(outcome: Outcome, reserveNext: number): { state: EndState; next: LeasedView[] } {
    if (!this.live(outcome.id, outcome.lease)) throwError('LEASE_LOST');
    const { results, jobs } = this.settle([outcome], reserveNext);
    return { state: results[0]!.state, next: jobs };
  }

  /** mirror: a lease stays live past its deadline until a tick expires it. */
  heartbeat(id: string, lease: number, extendMs?: number): { expiresAt: number } {
    const job = this.live(id, lease);
    if (!job) throw new ModelError('LEASE_LOST');
    job.deadline = this.now + Math.min(extendMs ?? this.timeoutOf(job), DAY_MS);
    return { expiresAt: job.deadline };
  }

  private live(id: string, lease: number): ModelJob | undefined {
    const job = this.jobs.get(id);
    return job && job.state === 'active' && job.lease === lease ? job : undefined;
  }

  private endLease(o: Outcome): EndState {
    const job = this.live(o.id, o.lease);
    if (!job) return 'LEASE_LOST';
    if (o.kind === 'fail') return this.failAttempt(job, o.error, o.retry !== false, o.retryAfterMs);
    // A completed job shows no error of an earlier attempt.
    Object.assign(job, { state: 'completed', attempts: job.attempts + 1, finishedAt: this.now, lease: undefined, error: undefined });
    if (o.result !== undefined) job.result = { value: o.result };
    this.remember(job.id, 'completed');
    return 'completed';
  }

  /** A failed attempt: retried in place, its group held for the backoff (G2), or failed for good. */
  private failAttempt(job: ModelJob, error: string, retry: boolean, retryAfterMs?: number): 'waiting' | 'failed' {
    Object.assign(job, { attempts: job.attempts + 1, error, lease: undefined, deadline: undefined });
    if (retry && job.attempts < this.maxAttemptsOf(job)) {
      job.startedAt = undefined; // the next attempt starts afresh
      job.state = 'waiting';
      job.runAt = this.now + Math.min(retryAfterMs ?? job.backoffMs ?? this.config.backoffMs, DAY_MS);
      if (job.runAt > this.now) this.flags(job.group).hold = { until: job.runAt, job: job.id };
      return 'waiting';
    }
    Object.assign(job, { state: 'failed', finishedAt: this.now });
    this.remember(job.id, 'failed');
    return 'failed';
  }

  private remember(id: string, state: 'completed' | 'failed' | 'removed'): void {
    if (this.config.dedupWindowMs > 0) this.remembered.set(id, { until: this.now + this.config.dedupWindowMs, state });
  }

  /** Oldest due group head first (G5), one per group (G1), within concurrency (G6). */
  private reserve(n: number): LeasedView[] {
    const room = Math.min(n, this.config.concurrency - this.inState('active').length);
    if (this.paused || room <= 0) return [];
    const out: LeasedView[] = [];
    for (const head of this.readyHeads()) {
      if (out.length === room || head.orderMs + this.config.orderingWindowMs > this.now) break;
      const flags = this.flags(head.group);
      // mirror: a group paused while its job ran is set aside when dispatching meets it next.
      if (flags.paused) {
        flags.parked = true;
        continue;
      }
      const deadline = this.now + this.timeoutOf(head) + LEASE_GRACE_MS;
      Object.assign(head, { state: 'active', lease: ++this.leaseCount, startedAt: this.now, deadline });
      out.push(this.leasedView(head));
    }
    return out;
  }

  // ---- scheduler -------------------------------------------------------------------------
  /** Promotes due delayed jobs, releases due holds, expires leases past their deadline. */
  tick(): { readyNow: boolean; nextDueAt: number | null } {
    for (const job of this.inState('delayed')) {
      if (job.runAt! <= this.now) Object.assign(job, { state: 'waiting', runAt: undefined });
    }
    for (const flags of this.groups.values()) {
      if (flags.hold && flags.hold.until <= this.now) flags.hold = null;
    }
    for (const job of this.inState('active')) {
      if (job.deadline! > this.now) continue;
      this.failAttempt(job, `lease expired: no answer within ${this.timeoutOf(job) + LEASE_GRACE_MS} ms`, true);
    }
    const window = this.config.orderingWindowMs;
    // mirror: a paused group's head not yet set aside still counts as ready work.
    const heads = this.readyHeads();
    const anyDue = heads.some((head) => head.orderMs + window <= this.now);
    const times = [
      ...this.inState('delayed').map((job) => job.runAt!),
      ...[...this.groups.values()].flatMap((f) => (f.hold && !f.parked ? [f.hold.until] : [])),
      ...this.inState('active').map((job) => job.deadline!),
      // mirror: with a head due now the tick says "drain" and leaves later heads still inside
      // their ordering window to the next tick.
      ...(anyDue ? [] : heads.map((head) => head.orderMs + window)),
    ];
    return { readyNow: !this.paused && anyDue, nextDueAt: times.length > 0 ? Math.min(...times) : null };
  }

  // ---- jobs by hand ----------------------------------------------------------------------
  removeJob(id: string): void {
    const job = this.existing(id);
    if (job.state === 'active') throw new ModelError('INVALID_STATE');
    if (job.state === 'waiting' || job.state === 'delayed') this.remember(id, 'removed'); // a finished one was remembered as it ended
    this.detach(job, () => this.jobs.delete(id));
  }

  promoteJob(id: string): JobView {
    const job = this.existing(id);
    if (job.state !== 'delayed') throw new ModelError('INVALID_STATE');
    Object.assign(job, { state: 'waiting', runAt: undefined });
    return this.view(job);
  }

  retryJob(id: string): JobView {
    const job = this.existing(id);
    if (job.state !== 'failed') throw new ModelError('INVALID_STATE');
    Object.assign(job, { state: 'waiting', attempts: 0, runAt: undefined, error: undefined, finishedAt: undefined });
    return this.view(job);
  }

  /** data and/or delayMs (from now) of a waiting or delayed job. */
  updateJob(id: string, patch: { data?: unknown; delayMs?: number }): JobView {
    const job = this.existing(id);
    if (job.state !== 'waiting' && job.state !== 'delayed') throw new ModelError('INVALID_STATE');
    if (patch.data !== undefined) job.data = patch.data;
    if (patch.delayMs !== undefined && patch.delayMs > 0) {
      this.detach(job, () => Object.assign(job, { state: 'delayed', runAt: this.now + patch.delayMs! }));
    } else if (patch.delayMs === 0 && job.state === 'delayed') {
      Object.assign(job, { state: 'waiting', runAt: undefined });
    }
    return this.view(job);
  }

  /** Takes a job out of its group (`leave`): a retry hold ends with the job it was for. */
  private detach(job: ModelJob, leave: () => void): void {
    if (job.state !== 'waiting') return void leave();
    const flags = this.flags(job.group);
    leave();
    if (flags.hold?.job === job.id) flags.hold = null;
    if (this.members(job.group).length === 0) Object.assign(flags, { hold: null, parked: false });
  }

  private existing(id: string): ModelJob {
    return this.jobs.get(id) ?? throwError('JOB_NOT_FOUND');
  }

  // ---- pausing ---------------------------------------------------------------------------
  setQueuePaused(paused: boolean): { paused: boolean } {
    this.paused = paused;
    return { paused };
  }

  /** An idle group is set aside at once; an active or held one when dispatching meets it next. */
  pauseGroup(group: string): { group: string; state: GroupState } {
    const flags = this.flags(group);
    if (this.isReady(group)) flags.parked = true;
    flags.paused = true;
    return { group, state: this.groupState(group) ?? 'paused' };
  }

  /** Pausing neither shortens nor lengthens a retry's backoff. */
  resumeGroup(group: string): { group: string; state: GroupState } {
    const flags = this.flags(group);
    flags.paused = false;
    flags.parked = false;
    if (flags.hold && flags.hold.until <= this.now) flags.hold = null; // released at once, no tick needed
    return { group, state: this.groupState(group) ?? 'ready' };
  }

  // ---- reads -----------------------------------------------------------------------------
  getJob(id: string): JobView {
    return this.view(this.existing(id));
  }

  /** Delayed by runAt, active by deadline, completed/failed newest first; waiting (HSCAN, no order) by id. */
  listJobs(state: JobState): JobView[] {
    const at = (job: ModelJob) =>
      state === 'delayed' ? job.runAt! : state === 'active' ? job.deadline! : state === 'waiting' ? 0 : -job.finishedAt!;
    const sign = state === 'completed' || state === 'failed' ? -1 : 1;
    return this.inState(state)
      .sort((a, b) => at(a) - at(b) || (a.id < b.id ? -sign : sign))
      .map((job) => this.view(job));
  }

  counts() {
    const states = ['waiting', 'delayed', 'active', 'completed', 'failed'] as const;
    // The model does not cancel jobs (test/engine/cancel.test.ts covers that).
    return { ...Object.fromEntries(states.map((s) => [s, this.inState(s).length])), cancelled: 0, expired: 0, groups: this.listGroups().length };
  }

  /** Groups holding a waiting or active job, by name. */
  listGroups(): GroupSummary[] {
    return [...this.groups.keys()].sort().flatMap((group) => {
      const members = this.members(group);
      const active = members.filter((job) => job.state === 'active').length;
      return members.length > 0 ? [{ group, waiting: members.length - active, active, state: this.groupState(group)!, concurrency: 1 }] : [];
    });
  }

  getGroup(group: string) {
    const state: GroupState = this.groupState(group) ?? throwError('GROUP_NOT_FOUND');
    const members = this.members(group);
    const active = members.filter((job) => job.state === 'active').length;
    return { group, state, limits: null, active, concurrency: 1, jobs: members.map((job) => this.view(job)) };
  }

  /** Every instant something falls due at (the test moves the clock onto these boundaries). */
  timers(): number[] {
    return [
      ...this.inState('delayed').map((job) => job.runAt!),
      ...this.inState('active').map((job) => job.deadline!),
      ...[...this.groups.values()].flatMap((f) => (f.hold ? [f.hold.until] : [])),
      ...this.inState('waiting').map((job) => job.orderMs + this.config.orderingWindowMs),
    ];
  }

  ids = () => [...this.jobs.keys()];
  pausedGroups = () => [...this.groups].filter(([, flags]) => flags.paused).map(([group]) => group);

  /** Leases the caller holds, as [job id, handle]. */
  leases(): [string, number][] {
    return this.inState('active').flatMap((job) => (job.lease! > 0 ? [[job.id, job.lease!] as [string, number]] : []));
  }

  // ---- groups ----------------------------------------------------------------------------
  private flags(group: string): GroupFlags {
    let flags = this.groups.get(group);
    if (!flags) this.groups.set(group, (flags = { paused: false, parked: false, hold: null }));
    return flags;
  }

  /** A group's waiting and active jobs in run order (G2: orderMs, then enqueue sequence). */
  private members(group: string): ModelJob[] {
    return [...this.jobs.values()]
      .filter((job) => job.group === group && (job.state === 'waiting' || job.state === 'active'))
      .sort(byOrder);
  }

  /** Idle: has jobs, none leased, not held, not set aside. */
  private isReady(group: string): boolean {
    const { hold, parked } = this.flags(group);
    const members = this.members(group);
    return members.length > 0 && !members.some((job) => job.state === 'active') && !hold && !parked;
  }

  private readyHeads(): ModelJob[] {
    return [...this.groups.keys()].filter((g) => this.isReady(g)).map((g) => this.members(g)[0]!).sort(byOrder);
  }

  /** The group's own state ('held': a backoff or the ordering window); a paused queue does not change it. */
  private groupState(group: string): GroupState | null {
    const members = this.members(group);
    const flags = this.flags(group);
    if (members.length === 0) return null;
    if (flags.paused) return 'paused';
    if (flags.hold) return 'held';
    if (members.some((job) => job.state === 'active')) return 'active';
    return members[0]!.orderMs + this.config.orderingWindowMs > this.now ? 'held' : 'ready';
  }

  // ---- views -----------------------------------------------------------------------------
  private inState = (state: JobState) => [...this.jobs.values()].filter((job) => job.state === state);
  private timeoutOf = (job: ModelJob) => job.timeoutMs ?? this.config.timeoutMs;
  private maxAttemptsOf = (job: ModelJob) => job.maxAttempts ?? this.config.maxAttempts;

  private view(job: ModelJob): JobView {
    const { id, group, data, state, orderMs, createdAt } = job;
    const attempts = state === 'active' ? job.attempts + 1 : job.attempts;
    const view: JobView = { id, group, data, state, orderMs, attempts, maxAttempts: this.maxAttemptsOf(job), createdAt, priority: 0 };
    if (job.runAt !== undefined && (state === 'waiting' || state === 'delayed')) view.runAt = job.runAt;
    if (job.startedAt !== undefined && state !== 'waiting' && state !== 'delayed') view.startedAt = job.startedAt;
    if (state === 'completed' || state === 'failed') view.finishedAt = job.finishedAt;
    if (state === 'active') view.leaseExpiresAt = job.deadline;
    if (job.result) view.result = job.result.value;
    if (job.error !== undefined) view.error = job.error;
    return view;
  }

  private leasedView(job: ModelJob): LeasedView {
    const { id, group, data, orderMs, createdAt } = job;
    const [attempt, maxAttempts, timeoutMs] = [job.attempts + 1, this.maxAttemptsOf(job), this.timeoutOf(job)];
    const rawData = JSON.stringify(data);
    return { id, group, data, rawData, attempt, maxAttempts, orderMs, createdAt, timeoutMs, expiresAt: job.deadline!, lease: job.lease! };
  }
}
