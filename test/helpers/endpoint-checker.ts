// The delivery checker (checker.ts) fed from the endpoint's side, for end-to-end runs where no
// reservation is seen: pushes as they arrive, answers, lease callbacks, and attempts that end in
// silence; then the jobs' final states as the API lists them. The same checks run on that record.
//
// The bracketing of checker.ts holds here too. A push arrives after its lease began, and its
// attempt is in flight until the endpoint answers (stamped before the answer is written, or
// before a complete/fail callback is sent). An attempt never answered ends in Redis later than a
// known instant: the Worker gives up on a push at timeoutMs, that is no sooner than the lease's
// expiresAt - 5 s (a lease lasts timeoutMs + 5 s and begins before the push), and a lease left to
// expire ends no sooner than its expiresAt. Both processes read the machine's clock, so the
// attempt counts as in flight until the last event stamped before that instant (less a margin
// for clock skew): its end as observed lies inside the real lease, as every check requires.
import { type Accepted, type CheckedJob, type Delivery, DeliveryChecker, type Reservation, TERMINAL } from './checker';

/** A lease lasts timeoutMs + this (docs/http-api.md#queues); the Worker aborts its push at timeoutMs. */
const LEASE_MARGIN_MS = 5000;
/** How far workerd's clock and this process's may disagree. */
const CLOCK_SKEW_MS = 100;

export class EndpointChecker extends DeliveryChecker {
  /** Date.now() at each stamp of the logical clock. */
  private readonly walls: number[] = [0];
  /** Attempts never answered, and the instant before which their lease cannot have ended. */
  private readonly lapses = new Map<Delivery, number>();

  protected override next(): number {
    const at = super.next();
    this.walls[at] = Date.now();
    return at;
  }

  /** The last stamp taken before `wall` (epoch ms): an event sure to precede anything at `wall`. */
  private stampBefore(wall: number): number {
    let [lo, hi] = [0, this.walls.length - 1];
    while (lo < hi) {
      const mid = Math.ceil((lo + hi) / 2);
      if (this.walls[mid]! < wall) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }

  /** A push arrived, from the Worker named `pusher`; its lease began before this. */
  received(job: CheckedJob, pusher: string): Delivery {
    const receivedAt = this.next();
    const accepted = this.jobs.get(job.id);
    // The lease began after the enqueue was sent; conclude() raises this once the group's
    // previous attempt is known to have ended.
    const reservation: Reservation = { reserver: pusher, requestedAt: accepted?.sentAt ?? 0, receivedAt, deliveries: [] };
    const d: Delivery = { job, reserver: pusher, reservation, receivedAt };
    reservation.deliveries.push(d);
    this.reservations.push(reservation);
    if (accepted) accepted.deliveries.push(d);
    else this.strays.push(`G3: ${pusher} pushed job ${job.id}, which no producer enqueued`);
    return d;
  }

  /** The job's pushes so far, in the order they arrived. */
  deliveriesOf(id: string): Delivery[] {
    return this.jobs.get(id)?.deliveries ?? [];
  }

  /** A lease callback answered: the state the job entered. */
  settledAs(d: Delivery, state: string): void {
    d.state = state;
  }

  /** Whether the attempt is over as far as the endpoint is concerned (answered or given up). */
  ended(d: Delivery): boolean {
    return d.action !== undefined;
  }

  /** The push is never answered (a hang, or an answer too late): the Worker's timeout fails it. */
  timedOut(d: Delivery): void {
    this.lapse(d, d.job.lease.expiresAt - LEASE_MARGIN_MS);
  }

  /** Taken with 202 and left alone: the lease expires at `expiresAt` and a tick fails the attempt. */
  abandoned(d: Delivery, expiresAt: number): void {
    this.lapse(d, expiresAt);
  }

  /** The first end the endpoint learns of is the attempt's: a later one changes nothing. */
  private lapse(d: Delivery, notBefore: number): void {
    if (this.ended(d)) return;
    d.action = 'retry';
    this.lapses.set(d, notBefore);
  }

  /**
   * The run is over: `finalStates` holds every job the API lists as completed or failed. Fills
   * in what the endpoint could not see (when unanswered attempts ended, when each lease began
   * for sure, the state each attempt left its job in) so that violations() can judge the run.
   */
  conclude(finalStates: Map<string, string>): void {
    for (const [d, notBefore] of this.lapses) d.finishedAt = Math.max(d.receivedAt, this.stampBefore(notBefore - CLOCK_SKEW_MS));
    this.raiseLeaseStarts();
    for (const [id, state] of finalStates) {
      if (!this.jobs.has(id)) this.strays.push(`G3: the API lists ${id} as ${state}, a job no producer enqueued`);
    }
    for (const j of this.jobs.values()) this.concludeJob(j, finalStates.get(j.id));
  }

  /**
   * A group's attempts do not overlap (G1, checked on its own), so each lease began after the
   * group's previous attempt ended: a later bound than the enqueue, which G2 can decide more by.
   */
  private raiseLeaseStarts(): void {
    const last = new Map<string, Delivery>();
    for (const r of [...this.reservations].sort((a, b) => a.receivedAt - b.receivedAt)) {
      const d = r.deliveries[0]!;
      const prev = last.get(d.job.group);
      if (prev?.finishedAt !== undefined && prev.finishedAt < d.receivedAt) r.requestedAt = Math.max(r.requestedAt, prev.finishedAt);
      last.set(d.job.group, d);
    }
  }

  /**
   * An attempt followed by another left its job waiting; the last one left it in its final
   * state. allSettled() then checks each against what its outcome calls for.
   */
  private concludeJob(j: Accepted, final: string | undefined): void {
    if (final === undefined) this.strays.push(`G3: ${this.describe(j)} is neither completed nor failed`);
    j.deliveries.forEach((d, i) => {
      const inferred = i < j.deliveries.length - 1 ? 'waiting' : final;
      if (d.state === undefined) d.state = inferred;
      else if (inferred !== undefined && d.state !== inferred) {
        this.strays.push(`G3: ${j.id} attempt ${d.job.attempt}: its callback answered ${d.state}, but the job went on as ${inferred}`);
      }
    });
    if (final !== undefined && TERMINAL.has(final)) this.open--;
  }
}
