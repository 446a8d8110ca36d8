// Records every enqueue and every lease of a run, then checks the engine's guarantees on that
// record (G1 one in flight per group, G2 order per group, G3 nothing lost, G4 duplicates,
// G5 oldest first, G6 bounded). Each check returns a list of violations, empty when it holds.
//
// Time here is logical: one counter shared by every producer and reserver of the run. Each
// observed event brackets the real one in Redis. A lease starts in Redis before its reserver
// receives it (`receivedAt`) and ends after the reserver decides its outcome (`finishedAt`), so
// [receivedAt, finishedAt] lies inside the real lease; a job is in Redis before its producer
// gets the answer (`acceptedAt`) and not before the request is sent (`sentAt`). Every check
// only blames the engine when the bracketing proves it, never for a race of the test itself.
// Reservers should hold each job a few event-loop turns so that a real overlap shows.
import type { LeasedJob } from '../../src/core/engine/leases';
import type { EnqueueResult } from '../../src/core/engine/producer';

/** What a reserver does with a delivery: complete it, fail it for a retry, fail it for good. */
export type Action = 'complete' | 'retry' | 'fail';

/** A job as the test means it: `orderMs` is the order key the engine must use. */
export interface JobSpec {
  id: string;
  group: string;
  orderMs: number;
  maxAttempts: number;
}

export interface Accepted extends JobSpec {
  index: number; // enqueue order as the checker saw it (for messages)
  batch: number; // jobs of one batch are written atomically, in their order
  pos: number;
  sentAt: number;
  acceptedAt: number;
  deliveries: Delivery[];
}

/** What the checks read of a leased job: a reserver's LeasedJob, or a push as an endpoint got it. */
export type CheckedJob = Pick<LeasedJob, 'id' | 'group' | 'attempt' | 'maxAttempts' | 'orderMs' | 'lease'>;

export interface Delivery {
  job: CheckedJob;
  reserver: string;
  reservation: Reservation;
  receivedAt: number;
  finishedAt?: number;
  action?: Action;
  retryAfterMs?: number;
  settledIn?: Reservation;
  state?: string;
}

export interface Reservation {
  reserver: string;
  requestedAt: number;
  receivedAt: number;
  deliveries: Delivery[];
}

/** What settle, complete and fail answer, in one shape. */
export interface Exchange {
  results: { id: string; state: string }[];
  jobs: LeasedJob[];
}

export const TERMINAL = new Set(['completed', 'failed']);
const MAX_REPORTED = 20;

function expectedState(d: Delivery): string {
  if (d.action === 'complete') return 'completed';
  if (d.action === 'fail') return 'failed';
  return d.job.attempt < d.job.maxAttempts ? 'waiting' : 'failed';
}

/** Retried with no delay, a job's group is offered again at once; a backoff holds it until a tick. */
function releasesGroup(d: Delivery): boolean {
  return d.state === 'completed' || d.state === 'failed' || (d.state === 'waiting' && d.retryAfterMs === 0);
}

function capped(violations: string[]): string[] {
  if (violations.length <= MAX_REPORTED) return violations;
  return [...violations.slice(0, MAX_REPORTED), `... and ${violations.length - MAX_REPORTED} more`];
}

export class DeliveryChecker {
  private seq = 0;
  private batches = 0;
  protected readonly jobs = new Map<string, Accepted>();
  protected readonly reservations: Reservation[] = [];
  protected readonly strays: string[] = []; // violations seen while recording
  protected open = 0; // accepted jobs not yet completed or failed
  /** How many comparisons G2 and G5 could decide (a check that decided nothing proved nothing). */
  readonly decided = { groupOrder: 0, oldestFirst: 0 };

  protected next(): number {
    return ++this.seq;
  }

  /** Accepted jobs that have not reached completed or failed yet. */
  pending(): number {
    return this.open;
  }

  /** All accepted jobs. */
  accepted(): JobSpec[] {
    return [...this.jobs.values()];
  }

  /**
   * Runs one enqueue (single or batch) of `specs` and records which jobs it created (G4). New
   * ids are registered before the request goes out: a reserver may get a job before its
   * producer gets the answer.
   */
  async enqueue(specs: JobSpec[], send: () => Promise<EnqueueResult[]>): Promise<EnqueueResult[]> {
    const sentAt = this.next();
    const batch = ++this.batches;
    const fresh = specs.map((spec, pos) => {
      if (this.jobs.has(spec.id)) return undefined;
      const job: Accepted = { ...spec, index: this.jobs.size, batch, pos, sentAt, acceptedAt: Infinity, deliveries: [] };
      this.jobs.set(spec.id, job);
      this.open++;
      return job;
    });
    const results = await send();
    const acceptedAt = this.next();
    results.forEach((result, pos) => {
      const spec = specs[pos]!;
      const job = fresh[pos];
      if (result.id !== spec.id) this.strays.push(`enqueue answered id ${result.id} for ${spec.id}`);
      else if (result.duplicate && job) this.strays.push(`G4: new job ${spec.id} reported as a duplicate`);
      else if (!result.duplicate && !job) this.strays.push(`G4: enqueue of existing id ${spec.id} created it again`);
      if (job) job.acceptedAt = acceptedAt;
    });
    return results;
  }

  /** The reserver decided what to do with a delivery; from here on it no longer holds the job. */
  finish(d: Delivery, action: Action, retryAfterMs?: number): void {
    d.finishedAt = this.next();
    d.action = action;
    d.retryAfterMs = retryAfterMs;
  }

  /**
   * Runs one settle/complete/fail/reserve round trip. `ended` are finished deliveries whose
   * outcomes lead the request, in order. Returns the new deliveries and the raw answer.
   */
  async exchange(reserver: string, ended: Delivery[], send: () => Promise<Exchange>) {
    const requestedAt = this.next();
    const answer = await send();
    const reservation: Reservation = { reserver, requestedAt, receivedAt: this.next(), deliveries: [] };
    ended.forEach((d, i) => {
      const result = answer.results[i];
      if (result?.id !== d.job.id) throw new Error(`result ${i} is for ${result?.id}, expected ${d.job.id}`);
      d.state = result.state;
      d.settledIn = reservation;
      if (TERMINAL.has(result.state)) this.open--;
    });
    for (const job of answer.jobs) {
      const d: Delivery = { job, reserver, reservation, receivedAt: reservation.receivedAt };
      reservation.deliveries.push(d);
      const accepted = this.jobs.get(job.id);
      if (accepted) accepted.deliveries.push(d);
      else this.strays.push(`G3: ${reserver} got job ${job.id}, which no producer enqueued`);
    }
    this.reservations.push(reservation);
    return { deliveries: reservation.deliveries, answer };
  }

  protected describe(j: Accepted): string {
    return `${j.id} (group ${j.group}, orderMs ${j.orderMs}, enqueued #${j.index})`;
  }

  /** Y's sequence is below X's for sure: same batch and earlier, or stored before X was sent. */
  private seqBefore(y: Accepted, x: Accepted): boolean {
    return (y.batch === x.batch && y.pos < x.pos) || y.acceptedAt < x.sentAt;
  }

  /** Y sorts before X by (orderMs, enqueue sequence), for sure. */
  private keyBefore(y: Accepted, x: Accepted): boolean {
    return y.orderMs < x.orderMs || (y.orderMs === x.orderMs && this.seqBefore(y, x));
  }

  private byGroup(): Map<string, Accepted[]> {
    const groups = new Map<string, Accepted[]>();
    for (const j of this.jobs.values()) {
      const list = groups.get(j.group) ?? [];
      list.push(j);
      groups.set(j.group, list);
    }
    return groups;
  }

  private deliveriesByGroup(): Map<string, Delivery[]> {
    const groups = new Map<string, Delivery[]>();
    for (const r of this.reservations) {
      for (const d of r.deliveries) {
        const list = groups.get(d.job.group) ?? [];
        list.push(d);
        groups.set(d.job.group, list);
      }
    }
    for (const list of groups.values()) list.sort((a, b) => a.receivedAt - b.receivedAt);
    return groups;
  }

  /** G1: a group's leases never overlap, and every lease has a token of its own. */
  oneInFlightPerGroup(): string[] {
    const out: string[] = [];
    for (const [group, ds] of this.deliveriesByGroup()) {
      for (let i = 1; i < ds.length; i++) {
        const a = ds[i - 1]!;
        const b = ds[i]!;
        if (a.finishedAt === undefined || a.finishedAt > b.receivedAt) {
          out.push(
            `G1 group ${group}: ${b.reserver} got ${b.job.id} (attempt ${b.job.attempt}) at ${b.receivedAt} while ` +
              `${a.reserver} held ${a.job.id} (attempt ${a.job.attempt}, from ${a.receivedAt} to ${a.finishedAt ?? 'never released'})`,
          );
        }
      }
    }
    const tokens = new Map<string, Delivery>();
    for (const r of this.reservations) {
      for (const d of r.deliveries) {
        const first = tokens.get(d.job.lease.token);
        if (first) out.push(`G1: lease token of ${d.job.id} attempt ${d.job.attempt} reused from ${first.job.id} attempt ${first.job.attempt}`);
        else tokens.set(d.job.lease.token, d);
      }
    }
    return capped(out);
  }

  /**
   * G2: within a group, a job starts only after every job that sorts before it and was already
   * stored ended for good (completed or failed; a retried job keeps its place at the head).
   */
  groupOrder(): string[] {
    const out: string[] = [];
    for (const [group, jobs] of this.byGroup()) {
      for (const x of jobs) {
        const first = x.deliveries[0];
        if (!first) continue; // never ran: allSettled reports it
        for (const y of jobs) {
          if (y === x || !this.keyBefore(y, x)) continue;
          if (!this.seqBefore(y, x) && y.acceptedAt >= first.reservation.requestedAt) continue; // maybe not stored yet
          this.decided.groupOrder++;
          const last = y.deliveries.at(-1);
          const endedAt = last && last.state && TERMINAL.has(last.state) ? last.finishedAt! : undefined;
          if (endedAt !== undefined && endedAt < first.receivedAt) continue;
          out.push(
            `G2 group ${group}: ${this.describe(x)} started at ${first.receivedAt} before ${this.describe(y)}, ` +
              `which sorts first, had ended (${endedAt === undefined ? 'it never ended' : `it ended later, at ${endedAt}`})`,
          );
        }
      }
    }
    return capped(out);
  }

  /**
   * G3: every accepted job was delivered as enqueued, with attempts 1, 2, ... each answered
   * with the state its outcome calls for, and ended completed or failed exactly once, last.
   */
  allSettled(): string[] {
    const out = [...this.strays];
    for (const j of this.jobs.values()) {
      const ds = j.deliveries;
      if (ds.length === 0) out.push(`G3: ${this.describe(j)} was never delivered`);
      ds.forEach((d, i) => {
        const what = `${j.id} attempt ${d.job.attempt}`;
        if (d.job.attempt !== i + 1) out.push(`G3: ${what} was delivery ${i + 1} of the job`);
        if (d.job.group !== j.group || d.job.orderMs !== j.orderMs || d.job.maxAttempts !== j.maxAttempts) {
          out.push(
            `G3: ${what} delivered as group ${d.job.group}, orderMs ${d.job.orderMs}, maxAttempts ${d.job.maxAttempts}; ` +
              `enqueued as group ${j.group}, orderMs ${j.orderMs}, maxAttempts ${j.maxAttempts}`,
          );
        }
        if (d.finishedAt === undefined) out.push(`G3: ${what} (to ${d.reserver}) was never finished`);
        else if (d.state === undefined) out.push(`G3: ${what} was finished (${d.action}) but never settled`);
        else if (d.state !== expectedState(d)) out.push(`G3: ${what} ${d.action}: engine answered ${d.state}, expected ${expectedState(d)}`);
        else if (TERMINAL.has(d.state) !== (i === ds.length - 1)) {
          out.push(`G3: ${what} ended ${d.state} but has ${ds.length - i - 1} later deliveries`);
        }
      });
      const last = ds.at(-1);
      if (last?.state === 'waiting') out.push(`G3: ${j.id} was left waiting after attempt ${last.job.attempt}`);
    }
    return capped(out);
  }

  /** The most leases held at once by the reservers (observed intervals). */
  maxInFlight(): number {
    return this.inFlightPeak().peak;
  }

  private inFlightPeak() {
    const events: [number, number][] = [];
    for (const r of this.reservations) {
      for (const d of r.deliveries) events.push([d.receivedAt, 1], [d.finishedAt ?? Infinity, -1]);
    }
    events.sort((a, b) => a[0] - b[0] || b[1] - a[1]);
    let now = 0;
    let peak = 0;
    let peakAt = 0;
    for (const [at, delta] of events) {
      now += delta;
      if (now > peak) [peak, peakAt] = [now, at];
    }
    return { peak, peakAt };
  }

  /** G6: never more than `limit` leases held at once. */
  boundedInFlight(limit: number): string[] {
    const { peak, peakAt } = this.inFlightPeak();
    if (peak <= limit) return [];
    const held = this.reservations
      .flatMap((r) => r.deliveries)
      .filter((d) => d.receivedAt <= peakAt && (d.finishedAt ?? Infinity) > peakAt)
      .map((d) => `${d.job.id}@${d.reserver}`);
    return [`G6: ${peak} leases held at ${peakAt} with concurrency ${limit}: ${held.join(', ')}`];
  }

  /**
   * G5: a reservation never takes a job while another group was idle (its earlier leases ended
   * before the reservation started), its head was stored, and that head sorts before the job.
   * Only meaningful when every job is due (orderMs <= now, no ordering window, no pauses). In a
   * partitioned queue, only within a partition (`partitionOf` a group): each is its own queue.
   */
  oldestFirst(partitionOf: (group: string) => number = () => 0): string[] {
    const out: string[] = [];
    const groups = this.deliveriesByGroup();
    for (const r of this.reservations) {
      if (r.deliveries.length === 0) continue;
      const served = new Set(r.deliveries.map((d) => d.job.group));
      for (const [group, ds] of groups) {
        if (served.has(group)) continue;
        const at = ds.findIndex((d) => d.receivedAt > r.receivedAt);
        const next = ds[at];
        if (!next || next.reservation.requestedAt <= r.receivedAt) continue; // raced with r
        const earlier = ds.slice(0, at);
        const idle = earlier.every((d) => d.settledIn === r || (d.settledIn && d.settledIn.receivedAt < r.requestedAt));
        if (!idle) continue;
        const last = earlier.at(-1);
        if (last && !releasesGroup(last)) continue; // held by a backoff until some tick
        const head = this.jobs.get(next.job.id);
        if (!head || head.acceptedAt >= r.requestedAt) continue; // maybe not stored yet
        for (const d of r.deliveries) {
          const taken = this.jobs.get(d.job.id);
          if (partitionOf(d.job.group) !== partitionOf(group)) continue;
          if (!taken || !(this.keyBefore(head, taken) || this.keyBefore(taken, head))) continue; // a tie we cannot order
          this.decided.oldestFirst++;
          if (this.keyBefore(head, taken)) {
            out.push(
              `G5: ${r.reserver} got ${this.describe(taken)} at ${r.receivedAt} while group ${group} was idle ` +
                `with the older head ${this.describe(head)} (reserved later, at ${next.receivedAt})`,
            );
          }
        }
      }
    }
    return capped(out);
  }

  /** Every check that applies: G1, G2, G3/G4, plus G6 and G5 when asked for. */
  violations(options: { concurrency?: number; oldestFirst?: boolean; partitionOf?: (group: string) => number } = {}): string[] {
    return [
      ...this.oneInFlightPerGroup(),
      ...this.groupOrder(),
      ...this.allSettled(),
      ...(options.concurrency === undefined ? [] : this.boundedInFlight(options.concurrency)),
      ...(options.oldestFirst ? this.oldestFirst(options.partitionOf) : []),
    ];
  }

  /** Jobs that ended completed and failed (by their last delivery), and jobs delivered more than once. */
  totals(): { completed: number; failed: number; retried: number } {
    let completed = 0;
    let failed = 0;
    let retried = 0;
    for (const j of this.jobs.values()) {
      if (j.deliveries.length > 1) retried++;
      const state = j.deliveries.at(-1)?.state;
      if (state === 'completed') completed++;
      if (state === 'failed') failed++;
    }
    return { completed, failed, retried };
  }
}
