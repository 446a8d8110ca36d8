// The order checker for batches (docs/batches.md), fed from the endpoint's side: every batch as
// it arrives at a real HTTP endpoint, how each of its jobs ended (the endpoint's answer, or its
// callbacks after a 202, or a timeout), then the final states the API lists. It keeps a model of
// every job (attempts used, ended or not) and checks, as things happen and at the end:
//   - B1 no two batches of a group overlap: the next one arrives after the previous ended (its
//     answer was stamped, the last of its leases was ended by a callback, or it timed out or
//     lapsed, which cannot happen before a known instant, see below);
//   - B2 a batch starts at its group's head (the first job not yet ended) and holds the jobs right
//     behind it, consecutive in group order: none skipped, none twice;
//   - B3 each delivery's attempt is the job's attempts used + 1: a job left untouched (a partial
//     answer, a failure or 429 ahead of it) comes back with the same attempt number;
//   - B4 jobs end in group order (first successes follow it, G2), each exactly once, and only as
//     the endpoint said: the API's final state and attempts of every job are the model's;
//   - B5 the same jobs sent again carry the same webhook-id, and two different batches never do.
// Group order is the order in which the test registers a group's jobs (`enqueued`): a test that
// wants it exact sends each group's jobs one request after another, with no explicit orderMs.
//
// Time is one counter of this process (stamps), as in checker.ts. A batch the Worker gave up on
// (no answer within its first job's timeoutMs) cannot end before its lease's expiresAt - 5 s (the
// lease lasts timeoutMs + 5 s and began before the push), and one left after a 202 not before its
// expiresAt: for those the next arrival is compared by the wall clock, less a margin for skew.
import type { DeliveredJob, Received } from './endpoint';

/** How one job of a batch ended: completed, its attempt failed (retried by the backoff, or for good), or left untouched. */
export type JobEnd = 'complete' | 'fail' | 'failNow' | 'left';

/** A batch delivery's body (src/protocol/batch-body.ts). */
export interface BatchBody {
  id: string;
  queue: string;
  group: string;
  jobs: DeliveredJob[];
}

export interface BatchDelivery {
  body: BatchBody;
  received: Received;
  receivedAt: number;
  /** Date.now() at arrival. */
  receivedWall: number;
  /** Per job, how it ended (undefined: not yet). */
  ends: (JobEnd | undefined)[];
  /** The stamp at which its last job's end was decided (before the answer or callback went out). */
  endedAt?: number;
  /** Timed out or lapsed: the wall-clock instant before which it cannot have ended. */
  notBefore?: number;
}

interface Tracked {
  id: string;
  group: string;
  /** Position in its group's order. */
  index: number;
  maxAttempts: number;
  /** Attempts used, as the model counts them. */
  attempts: number;
  /** How the job's last delivery left it, for messages. */
  last?: JobEnd;
  ended?: { state: 'completed' | 'failed'; at: number };
  deliveries: BatchDelivery[];
}

/** A lease lasts timeoutMs + this (docs/http-api.md#queues); the Worker aborts its push at timeoutMs. */
const LEASE_MARGIN_MS = 5000;
/** How far workerd's clock and this process's may disagree. */
const CLOCK_SKEW_MS = 100;
const MAX_REPORTED = 20;

export function batchOf(r: Received): BatchBody {
  return JSON.parse(r.rawBody) as BatchBody;
}

export class BatchChecker {
  private seq = 0;
  private readonly jobs = new Map<string, Tracked>();
  private readonly groups = new Map<string, Tracked[]>();
  private readonly lastOf = new Map<string, BatchDelivery>();
  private readonly idsOfJobs = new Map<string, string>();
  private readonly jobsOfId = new Map<string, string>();
  readonly deliveries: BatchDelivery[] = [];
  private readonly problems: string[] = [];

  /** `maxSize`: the queue's batch.maxSize, which no batch may exceed. */
  constructor(private readonly options: { maxSize?: number } = {}) {}

  private stamp(): number {
    return ++this.seq;
  }

  /** Registers a job at the end of its group's order; call before its enqueue is sent. */
  enqueued(group: string, id: string, maxAttempts: number): void {
    const list = this.groups.get(group) ?? [];
    const job: Tracked = { id, group, index: list.length, maxAttempts, attempts: 0, deliveries: [] };
    list.push(job);
    this.groups.set(group, list);
    this.jobs.set(id, job);
  }

  /** A batch arrived: checks B1, B2, B3 and B5 against the model as it stands. */
  received(r: Received): BatchDelivery {
    const body = batchOf(r);
    const d: BatchDelivery = { body, received: r, receivedAt: this.stamp(), receivedWall: Date.now(), ends: body.jobs.map(() => undefined) };
    this.deliveries.push(d);
    const what = `batch ${body.id} of group ${body.group} (${body.jobs.map((j) => `${j.id}#${j.attempt}`).join(' ')})`;
    if (!/^bat_[0-9a-f]{32}$/.test(body.id) || r.headers['webhook-id'] !== body.id) {
      this.problems.push(`${what}: id ${body.id}, webhook-id ${String(r.headers['webhook-id'])}`);
    }
    if (this.options.maxSize !== undefined && body.jobs.length > this.options.maxSize) {
      this.problems.push(`${what}: ${body.jobs.length} jobs, more than maxSize ${this.options.maxSize}`);
    }
    this.checkSameId(body, what);
    const previous = this.lastOf.get(body.group);
    if (previous && !this.endedBefore(previous, d)) {
      this.problems.push(`B1 ${what} arrived while batch ${previous.body.id} (${previous.ends.join(',')}) of the group was still out`);
    }
    this.lastOf.set(body.group, d);
    const list = this.groups.get(body.group) ?? [];
    const head = list.find((j) => !j.ended);
    body.jobs.forEach((job, i) => {
      const t = this.jobs.get(job.id);
      if (!t || t.group !== body.group || job.group !== body.group) {
        this.problems.push(`${what}: job ${job.id} (group ${job.group}) is not a job of the group`);
        return;
      }
      t.deliveries.push(d);
      if (t.ended) this.problems.push(`B4 ${what}: ${job.id} delivered after it ended ${t.ended.state}`);
      const expectedIndex = (head?.index ?? Number.NaN) + i;
      if (t.index !== expectedIndex) {
        const expected = list[expectedIndex]?.id ?? 'nothing';
        this.problems.push(`B2 ${what}: place ${i} holds ${job.id} (#${t.index} of the group), expected ${expected}`);
      }
      if (job.attempt !== t.attempts + 1) {
        const why = t.last === 'left' ? ', though its last batch left it untouched' : '';
        this.problems.push(`B3 ${what}: ${job.id} came as attempt ${job.attempt} after ${t.attempts} attempts used${why}`);
      }
    });
    return d;
  }

  /** B5: one webhook-id per list of jobs, and the reverse. */
  private checkSameId(body: BatchBody, what: string): void {
    const key = body.jobs.map((j) => j.id).join(' ');
    const id = this.idsOfJobs.get(key);
    const jobs = this.jobsOfId.get(body.id);
    if (id !== undefined && id !== body.id) this.problems.push(`B5 ${what}: the same jobs went before as ${id}`);
    if (jobs !== undefined && jobs !== key) this.problems.push(`B5 ${what}: its id went before with the jobs ${jobs}`);
    this.idsOfJobs.set(key, body.id);
    this.jobsOfId.set(body.id, key);
  }

  /** Whether `prev` (same group) is known to have ended before `next` arrived. */
  private endedBefore(prev: BatchDelivery, next: BatchDelivery): boolean {
    if (prev.notBefore !== undefined) return prev.notBefore - CLOCK_SKEW_MS <= next.receivedWall;
    return prev.endedAt !== undefined && prev.endedAt < next.receivedAt;
  }

  /** Whether every job of the batch has its end (the endpoint is done with it). */
  ended(d: BatchDelivery): boolean {
    return d.ends.every((e) => e !== undefined);
  }

  /**
   * Job `i` of the batch ends as `end` (before the answer or callback that says so goes out).
   * A failure ends the jobs behind it too: they go back untouched. Returns the state the job
   * should be in now: completed, waiting (retried, or left) or failed.
   */
  end(d: BatchDelivery, i: number, end: JobEnd): string {
    const job = d.body.jobs[i]!;
    const t = this.jobs.get(job.id);
    if (d.ends[i] !== undefined) this.problems.push(`test: ${job.id} of batch ${d.body.id} ended twice (${d.ends[i]}, ${end})`);
    d.ends[i] = end;
    let state: 'completed' | 'failed' | 'waiting' = 'waiting';
    // Only the job's latest delivery can end it: one delivered again before this one ended broke B1.
    if (t && t.deliveries.at(-1) === d) {
      t.last = end;
      if (end !== 'left') t.attempts++;
      if (end === 'complete') state = 'completed';
      else if (end === 'failNow' || (end === 'fail' && t.attempts >= t.maxAttempts)) state = 'failed';
      if (state !== 'waiting') this.finish(t, state, d);
    }
    if (end === 'fail' || end === 'failNow') for (let k = i + 1; k < d.ends.length; k++) if (d.ends[k] === undefined) this.end(d, k, 'left');
    if (this.ended(d) && d.endedAt === undefined) d.endedAt = this.stamp();
    return state;
  }

  /** B4: a job ends once, after every job ahead of it in its group. */
  private finish(t: Tracked, state: 'completed' | 'failed', d: BatchDelivery): void {
    if (t.ended) {
      this.problems.push(`B4 ${t.id} ended ${state} in batch ${d.body.id} after it had ended ${t.ended.state}`);
      return;
    }
    t.ended = { state, at: this.stamp() };
    const open = this.groups.get(t.group)!.find((j) => j.index < t.index && !j.ended);
    if (open) this.problems.push(`B4 ${t.id} (#${t.index} of group ${t.group}) ended ${state} before ${open.id} (#${open.index})`);
  }

  /** A 2xx answer that completes every job (no body, {"results": [...]}, or k >= n). */
  completeAll(d: BatchDelivery): void {
    d.body.jobs.forEach((_, i) => this.end(d, i, 'complete'));
  }

  /** `{"completed": k, ...}` with k < n: jobs before k complete, job k fails, the rest are left. */
  partial(d: BatchDelivery, k: number, retry: boolean): void {
    if (k >= d.body.jobs.length) return this.completeAll(d);
    for (let i = 0; i < k; i++) this.end(d, i, 'complete');
    this.end(d, k, retry ? 'fail' : 'failNow');
  }

  /** A non-2xx answer (not 429): job 0's attempt fails, the rest are left. */
  failFirst(d: BatchDelivery, retry = true): void {
    this.end(d, 0, retry ? 'fail' : 'failNow');
  }

  /** 429: job 0 held with no attempt used, the rest left: no job's attempt counts. */
  throttled(d: BatchDelivery): void {
    d.body.jobs.forEach((_, i) => this.end(d, i, 'left'));
  }

  /** No answer (a hang, or one too late): the Worker's timeout fails job 0, at expiresAt - 5 s at the soonest. */
  timedOut(d: BatchDelivery): void {
    this.lapse(d, d.body.jobs[0]!.lease.expiresAt - LEASE_MARGIN_MS);
  }

  /** Taken with 202 and left alone: the lease lapses at `expiresAt` and a tick fails job 0. */
  abandoned(d: BatchDelivery, expiresAt = d.body.jobs[0]!.lease.expiresAt): void {
    this.lapse(d, expiresAt);
  }

  private lapse(d: BatchDelivery, notBefore: number): void {
    if (this.ended(d)) return;
    d.notBefore = notBefore;
    const first = d.ends.findIndex((e) => e === undefined);
    this.end(d, first, 'fail');
  }

  /** What a callback (or the API) answered for job `i`, against what the model expects. */
  answered(d: BatchDelivery, i: number, expected: string, status: number, state: unknown): void {
    if (status !== 200 || state !== expected) {
      this.problems.push(`callback for ${d.body.jobs[i]!.id} of batch ${d.body.id}: ${status} ${String(state)}, expected 200 ${expected}`);
    }
  }

  /** A problem the test saw itself (an unexpected callback answer, a cron failure). */
  note(problem: string): void {
    this.problems.push(problem);
  }

  /** The violations seen so far, while the run goes on (a run that never ends says them). */
  seenSoFar(): string[] {
    return this.problems.slice(0, MAX_REPORTED);
  }

  /** Registered jobs not yet completed or failed, as the model has it. */
  pending(): number {
    let open = 0;
    for (const t of this.jobs.values()) if (!t.ended) open++;
    return open;
  }

  /**
   * Every violation of the run, given the API's final word on each job that ended
   * (`final`: id -> state and attempts, from listing completed and failed jobs).
   */
  violations(final: Map<string, { state: string; attempts: number }>): string[] {
    const out = [...this.problems];
    for (const d of this.deliveries) if (!this.ended(d)) out.push(`batch ${d.body.id} of group ${d.body.group} never ended`);
    for (const [id, f] of final) if (!this.jobs.has(id)) out.push(`the API lists ${id} as ${f.state}, a job the test never enqueued`);
    for (const t of this.jobs.values()) {
      const f = final.get(t.id);
      const model = t.ended?.state ?? 'not ended';
      if (!f || f.state !== model || f.attempts !== t.attempts) {
        const api = f ? `${f.state} after ${f.attempts} attempts` : 'not ended';
        out.push(`B4 ${t.id} (group ${t.group} #${t.index}): the API says ${api}, the endpoint made it ${model} after ${t.attempts}`);
      }
    }
    return out.length <= MAX_REPORTED ? out : [...out.slice(0, MAX_REPORTED), `... and ${out.length - MAX_REPORTED} more`];
  }

  /** What the run did, to assert that it exercised what it claims. */
  stats() {
    const ends: Record<JobEnd, number> = { complete: 0, fail: 0, failNow: 0, left: 0 };
    for (const d of this.deliveries) for (const e of d.ends) if (e) ends[e]++;
    const sizes = this.deliveries.map((d) => d.body.jobs.length);
    const retried = [...this.jobs.values()].filter((t) => t.deliveries.length > 1).length;
    return { deliveries: this.deliveries.length, largest: Math.max(0, ...sizes), multi: sizes.filter((n) => n > 1).length, retried, ends };
  }
}
