// The recording checker of flow control (docs/flow-control.md), fed by a real endpoint: every
// delivery as it arrives and as it is answered, and every job as its producer enqueues it. Then
// checks on that record, each returning its violations (empty when the rule held):
//   - jobs of a group in flight at once, against the group's concurrency (fixed, or changed at
//     runtime) and the queue's;
//   - each group's first starts in its order;
//   - starts in any window of a rate limit, queue-wide or per group;
//   - every job completed exactly once.
//
// Two clocks, both the machine's. The endpoint stamps arrivals and answers in this process: a
// delivery is in flight from its arrival to its answer, which lies inside its real lease (the
// lease begins before the push and ends after the answer is acknowledged), so overlaps seen here
// are real. The engine's start of a delivery is its lease start, read from the push: the lease
// lasts timeoutMs + 5 s (docs/http-api.md#queues), so it began at expiresAt - timeoutMs - 5000, by the
// Worker's clock: the instant the engine counted for its rate windows. workerd's clock stands
// still between I/O events, so that instant is never later than the real start (a delivery
// started somewhere in [lease start, arrival]), but two reservations' times may disagree with
// the order Redis ran them in.
import type { Received } from './endpoint';

/** A lease lasts the job's timeoutMs + this (docs/http-api.md#queues). */
const LEASE_GRACE_MS = 5000;
/** Slack for comparing an instant of workerd's clock with one of this process's. */
const CLOCK_SLACK_MS = 5;
const MAX_REPORTED = 20;

export interface FlowDelivery {
  id: string;
  group: string;
  attempt: number;
  /** The engine's start: when the lease began (epoch ms, the Worker's clock). */
  startedAt: number;
  /** Logical stamps of arrival and answer (one counter for the whole record). */
  arrived: number;
  answered?: number;
  /** Date.now() at arrival and answer. */
  arrivedWall: number;
  answeredWall?: number;
  /** The HTTP status the endpoint answered. */
  status?: number;
}

interface Enqueued {
  id: string;
  group: string;
  /** Place in its group's order, (orderMs, sequence): the test enqueues each group in order. */
  rank: number;
  deliveries: FlowDelivery[];
}

/** A group limit changed at runtime: in force from some instant in [sentWall, returnedWall]. */
interface LimitChange {
  limit: number;
  sentWall: number;
  returnedWall: number;
}

function capped(violations: string[]): string[] {
  if (violations.length <= MAX_REPORTED) return violations;
  return [...violations.slice(0, MAX_REPORTED), `... and ${violations.length - MAX_REPORTED} more`];
}

function groupBy<T>(items: Iterable<T>, key: (item: T) => string): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const item of items) {
    const list = out.get(key(item)) ?? [];
    list.push(item);
    out.set(key(item), list);
  }
  return out;
}

/** The most intervals [from, to) open at once, and the deliveries open at that moment. */
function peakOf(ds: FlowDelivery[]): { peak: number; at: FlowDelivery[] } {
  const events = ds.flatMap((d) => [
    { at: d.arrived, delta: 1, d },
    { at: d.answered ?? Infinity, delta: -1, d },
  ]);
  events.sort((a, b) => a.at - b.at || a.delta - b.delta);
  const open = new Set<FlowDelivery>();
  let best: FlowDelivery[] = [];
  for (const e of events) {
    if (e.delta > 0) open.add(e.d);
    else open.delete(e.d);
    if (open.size > best.length) best = [...open];
  }
  return { peak: best.length, at: best };
}

const label = (d: FlowDelivery) => `${d.id}#${d.attempt}`;

export class FlowChecker {
  private seq = 0;
  private readonly jobs = new Map<string, Enqueued>();
  private readonly ranks = new Map<string, number>();
  private readonly limits = new Map<string, LimitChange[]>();
  readonly deliveries: FlowDelivery[] = [];
  /** Jobs answered 2xx, by id: how many times. */
  readonly completions = new Map<string, number>();

  /** `timeoutMs` is the queue's: the lease of every delivery lasts it plus the grace. */
  constructor(private readonly timeoutMs: number) {}

  /**
   * A job about to be enqueued, in its group's order: call it for each job of a group in the
   * order the engine must start them (a producer enqueuing a group's jobs one after another,
   * with default or increasing orderMs, does exactly that).
   */
  enqueued(id: string, group: string): void {
    const rank = this.ranks.get(group) ?? 0;
    this.ranks.set(group, rank + 1);
    this.jobs.set(id, { id, group, rank, deliveries: [] });
  }

  /** A push arrived. */
  arrived(r: Received): FlowDelivery {
    const { id, group, attempt, lease } = r.job;
    const d: FlowDelivery = {
      id,
      group,
      attempt,
      startedAt: lease.expiresAt - this.timeoutMs - LEASE_GRACE_MS,
      arrived: ++this.seq,
      arrivedWall: Date.now(),
    };
    this.deliveries.push(d);
    this.jobs.get(id)?.deliveries.push(d);
    return d;
  }

  /** The endpoint answers `status` now (call it just before the answer is written). */
  answered(d: FlowDelivery, status: number): void {
    d.answered = ++this.seq;
    d.answeredWall = Date.now();
    d.status = status;
    if (status >= 200 && status < 300) this.completions.set(d.id, (this.completions.get(d.id) ?? 0) + 1);
  }

  /** Deliveries arrived and not answered yet. */
  inFlight(): number {
    return this.deliveries.filter((d) => d.answered === undefined).length;
  }

  /** The deliveries of one job, in arrival order. */
  of(id: string): FlowDelivery[] {
    return this.jobs.get(id)?.deliveries ?? [];
  }

  /** The most deliveries in flight at once: queue-wide, or of one group. */
  peakInFlight(group?: string): number {
    return peakOf(group === undefined ? this.deliveries : this.deliveries.filter((d) => d.group === group)).peak;
  }

  /** The largest peak of any group. */
  peakGroupInFlight(): number {
    return Math.max(0, ...[...groupBy(this.deliveries, (d) => d.group).values()].map((ds) => peakOf(ds).peak));
  }

  /** Never more than `limit` deliveries in flight at once (queue-wide `concurrency`). */
  queueConcurrency(limit: number): string[] {
    const { peak, at } = peakOf(this.deliveries);
    return peak <= limit ? [] : [`queue: ${peak} deliveries in flight at once (concurrency ${limit}): ${at.map(label).join(', ')}`];
  }

  /** Never more than `limit` of one group in flight at once (`groupConcurrency`). */
  groupConcurrency(limit: number): string[] {
    const out: string[] = [];
    for (const [group, ds] of groupBy(this.deliveries, (d) => d.group)) {
      const { peak, at } = peakOf(ds);
      if (peak > limit) out.push(`group ${group}: ${peak} in flight at once (limit ${limit}): ${at.map(label).join(', ')}`);
    }
    return capped(out);
  }

  /** The group's concurrency was changed by a request sent at `sentWall` that returned at `returnedWall`. */
  limitChanged(group: string, limit: number, sentWall: number, returnedWall: number): void {
    const list = this.limits.get(group) ?? [];
    list.push({ limit, sentWall, returnedWall });
    this.limits.set(group, list);
  }

  /**
   * The highest concurrency the group may have had at some instant of [from, to] (the Worker's
   * clock, then this process's): a change may have applied anywhere between its request's
   * sending and its answer. `initial` rules before the first change.
   */
  private limitDuring(group: string, initial: number, from: number, to: number): number {
    const changes = [{ limit: initial, sentWall: -Infinity, returnedWall: -Infinity }, ...(this.limits.get(group) ?? [])];
    let most = 0;
    changes.forEach((c, i) => {
      const next = changes[i + 1];
      const mayStart = c.sentWall <= to + CLOCK_SLACK_MS;
      const mayLast = !next || next.returnedWall >= from - CLOCK_SLACK_MS;
      if (mayStart && mayLast) most = Math.max(most, c.limit);
    });
    return most;
  }

  /**
   * With limits changed at runtime (limitChanged), each start of the group found fewer of its
   * jobs in flight than the limit then in force. A delivery Y really started somewhere in
   * [Y.startedAt, Y's arrival]; another delivery X certainly held its lease over all of that when
   * it arrived before Y.startedAt and was answered after Y arrived.
   */
  groupConcurrencyAtStarts(group: string, initial: number): string[] {
    const ds = this.deliveries.filter((d) => d.group === group);
    const out: string[] = [];
    for (const y of ds) {
      const holding = ds.filter(
        (x) => x !== y && x.arrivedWall < y.startedAt - CLOCK_SLACK_MS && (x.answered === undefined || x.answered > y.arrived),
      );
      const limit = this.limitDuring(group, initial, y.startedAt, y.arrivedWall);
      if (holding.length >= limit) {
        out.push(`group ${group}: ${label(y)} started at ${y.startedAt} while ${holding.map(label).join(', ')} were in flight (limit ${limit})`);
      }
    }
    return capped(out);
  }

  /**
   * Each group's jobs first start in the group's order: a job never starts before a job ahead
   * of it did. Lease starts do not order two reservations by themselves: a reservation reads
   * workerd's clock, which stands still until the next I/O, some time before Redis runs it, so
   * a later reservation may carry an earlier time. But a delivery started, for sure, before its
   * arrival and not before its lease start. So Y certainly started before X when Y arrived before
   * X's lease start; `decided` counts the pairs whose order is certain either way.
   */
  startOrder(): { violations: string[]; decided: number } {
    const out: string[] = [];
    let decided = 0;
    const before = (a: FlowDelivery, b: FlowDelivery) => a.arrivedWall < b.startedAt - CLOCK_SLACK_MS;
    for (const [group, jobs] of groupBy(this.jobs.values(), (j) => j.group)) {
      const sorted = [...jobs].sort((a, b) => a.rank - b.rank);
      sorted.forEach((x, i) => {
        const xFirst = x.deliveries[0];
        for (const y of sorted.slice(i + 1)) {
          const yFirst = y.deliveries[0];
          if (!yFirst) continue;
          if (xFirst && (before(xFirst, yFirst) || before(yFirst, xFirst))) decided++;
          if (!xFirst || before(yFirst, xFirst)) {
            out.push(
              `group ${group}: ${y.id} (#${y.rank} in order) arrived at ${yFirst.arrivedWall}, before ${x.id} (#${x.rank}) ` +
                `${xFirst ? `was leased, at ${xFirst.startedAt}` : 'ever started'}`,
            );
          }
        }
      });
    }
    return { violations: capped(out), decided };
  }

  /**
   * At most `max` starts in any window (t - periodMs, t], counting the deliveries `which`
   * selects (default all: the queue's). A delivery really started somewhere in [lease start,
   * arrival] (the lease start read from a clock that may lag, never lead), so deliveries
   * certainly started inside one window when the last of their arrivals is less than periodMs
   * after the first of their lease starts. Returns the most starts certainly inside one window
   * (the peak), and when that is over `max`, those starts.
   */
  startsPerWindow(max: number, periodMs: number, which: (d: FlowDelivery) => boolean = () => true): { violations: string[]; peak: number } {
    const starts = this.deliveries.filter(which).sort((a, b) => a.startedAt - b.startedAt);
    let fullest: FlowDelivery[] = [];
    starts.forEach((first, i) => {
      const inside = starts.slice(i).filter((d) => d.arrivedWall < first.startedAt + periodMs - CLOCK_SLACK_MS);
      if (inside.length > fullest.length) fullest = inside;
    });
    const peak = fullest.length;
    if (peak <= max) return { violations: [], peak };
    const from = fullest[0]!.startedAt;
    const shown = fullest.slice(0, MAX_REPORTED).map((d) => `${label(d)} leased ${d.startedAt - from}, arrived ${d.arrivedWall - from}`);
    const more = fullest.length > MAX_REPORTED ? ', ...' : '';
    return { violations: [`${peak} starts within ${periodMs} ms of ${from} (max ${max}), in ms after it: ${shown.join('; ')}${more}`], peak };
  }

  /** The same per group: no group's window holds more than `max` of its starts. */
  groupStartsPerWindow(max: number, periodMs: number): { violations: string[]; peak: number } {
    let peak = 0;
    const out: string[] = [];
    for (const group of groupBy(this.deliveries, (d) => d.group).keys()) {
      const r = this.startsPerWindow(max, periodMs, (d) => d.group === group);
      peak = Math.max(peak, r.peak);
      out.push(...r.violations.map((v) => `group ${group}: ${v}`));
    }
    return { violations: capped(out), peak };
  }

  /** Every enqueued job was answered 2xx exactly once, and nothing else was delivered. */
  completedOnce(): string[] {
    const out: string[] = [];
    for (const j of this.jobs.values()) {
      const n = this.completions.get(j.id) ?? 0;
      if (n !== 1) out.push(`${j.id} (group ${j.group}) completed ${n} times, in ${j.deliveries.length} deliveries`);
    }
    for (const d of this.deliveries) {
      if (!this.jobs.has(d.id)) out.push(`${label(d)} was delivered but never enqueued`);
    }
    return capped(out);
  }
}
