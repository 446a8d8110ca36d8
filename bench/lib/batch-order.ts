// The batch order checker of the batch rows (bench/lib/batch.ts), over the deliveries the
// endpoint recorded (batch-endpoint.ts). The endpoint answers every delivery 200 with no body,
// which completes every job of it, so a job is complete from the moment its delivery was
// answered. Replaying arrivals and answers in time order, per group, it counts:
//   - inversions: a job delivered for the first time while a job ahead of it in its group had
//     not completed and was not ahead of it in the same batch (a batch must start at its group's
//     head and hold the jobs right behind it, in group order);
//   - overlaps: a batch of a group that arrived before the group's previous one was answered;
//   - deliveries of a job again: before it completed (a lease that lapsed), or after (a duplicate).
// Also what else the records tell of a run: the deliveries by size, and the stalls.
// Group order is what the run says it is (each job's group and index in it): the runs enqueue a
// group's jobs in one request, or one request after another, so it is the enqueue order.
import type { DeliveryRecord } from './batch-endpoint';

/** A job's place: its group and its index in the group's order. */
export interface JobPlace {
  group: string;
  index: number;
}

export interface OrderCheck {
  /** Deliveries recorded (batches, or single jobs on a queue without `batch`). */
  deliveries: number;
  /** Distinct jobs delivered. */
  jobs: number;
  /** Jobs of the run never delivered (must be 0). */
  notDelivered: number;
  /** Jobs delivered first out of group order (must be 0). */
  inversions: number;
  /** Batches of a group that arrived while the group's previous one was still out (must be 0). */
  overlaps: number;
  /** Deliveries of a job again before it completed (a lapsed lease; none expected with 200 answers). */
  redeliveries: number;
  /** Deliveries of a job that had already completed (duplicates; none expected). */
  afterCompletion: number;
  /** Deliveries never answered (the endpoint answers every one: must be 0). */
  unanswered: number;
  /** The first few problems, for a reader. */
  examples: string[];
}

const MAX_EXAMPLES = 5;

interface GroupState {
  /** Index of the first job of the group not completed yet. */
  next: number;
  completed: Set<number>;
  /** Deliveries of the group out (arrived, not answered). */
  out: number;
}

type Event = { at: number; answer: boolean; record: DeliveryRecord };

/** Checks `records` (in any order) against the group order `places` of the run's jobs. */
export function checkOrder(records: readonly DeliveryRecord[], places: ReadonlyMap<string, JobPlace>): OrderCheck {
  const check: OrderCheck = { deliveries: 0, jobs: 0, notDelivered: 0, inversions: 0, overlaps: 0, redeliveries: 0, afterCompletion: 0, unanswered: 0, examples: [] };
  const note = (problem: string) => {
    if (check.examples.length < MAX_EXAMPLES) check.examples.push(problem);
  };
  const events: Event[] = [];
  for (const record of records) {
    if (!record.ids.some((id) => places.has(id))) continue; // not this run's (warm-up)
    check.deliveries++;
    events.push({ at: record.arrivedAt, answer: false, record });
    if (record.answeredAt === undefined) check.unanswered++;
    else events.push({ at: record.answeredAt, answer: true, record });
  }
  // An answer and an arrival at the same instant: the answer first (the next batch of a group
  // cannot be leased before the Worker had the answer to the previous one, over the network).
  events.sort((a, b) => a.at - b.at || Number(b.answer) - Number(a.answer));
  const groups = new Map<string, GroupState>();
  const stateOf = (group: string) => {
    let state = groups.get(group);
    if (!state) groups.set(group, (state = { next: 0, completed: new Set(), out: 0 }));
    return state;
  };
  const delivered = new Set<string>();
  for (const { answer, record } of events) {
    const state = stateOf(record.group);
    if (answer) {
      state.out--;
      for (const id of record.ids) {
        const place = places.get(id);
        if (place && place.group === record.group) state.completed.add(place.index);
      }
      while (state.completed.has(state.next)) state.next++;
      continue;
    }
    if (state.out > 0) {
      check.overlaps++;
      note(`group ${record.group}: ${record.webhookId} arrived while ${state.out} delivery(ies) of the group were out`);
    }
    state.out++;
    // Job i's place behind the head: the jobs ahead of it in the batch, less any that had completed (counted apart).
    let behind = 0;
    for (const id of record.ids) {
      const place = places.get(id);
      if (!place || place.group !== record.group) {
        check.inversions++;
        note(`group ${record.group}: ${record.webhookId} holds ${id}, ${place ? `a job of group ${place.group}` : 'not a job of the run'}`);
        continue;
      }
      if (state.completed.has(place.index)) {
        check.afterCompletion++;
        continue;
      }
      const i = behind++;
      const again = delivered.has(id);
      if (again) check.redeliveries++;
      delivered.add(id);
      // The batch starts at the group's head, and its i-th job not completed is i places behind.
      if (!again && place.index !== state.next + i) {
        check.inversions++;
        note(`group ${record.group}: ${id} (index ${place.index}) was job ${i} of ${record.webhookId} while the group's head was index ${state.next}`);
      }
    }
  }
  check.jobs = delivered.size;
  check.notDelivered = [...places.keys()].filter((id) => !delivered.has(id)).length;
  return check;
}

/** Sums checks of several runs (examples: the first few of all). */
export function sumChecks(checks: readonly OrderCheck[]): OrderCheck {
  const total: OrderCheck = { deliveries: 0, jobs: 0, notDelivered: 0, inversions: 0, overlaps: 0, redeliveries: 0, afterCompletion: 0, unanswered: 0, examples: [] };
  for (const c of checks) {
    for (const key of ['deliveries', 'jobs', 'notDelivered', 'inversions', 'overlaps', 'redeliveries', 'afterCompletion', 'unanswered'] as const) total[key] += c[key];
    total.examples.push(...c.examples.slice(0, MAX_EXAMPLES - total.examples.length));
  }
  return total;
}

/** A gap this long with no delivery out is a stall (a delivery's round trip here is well under it). */
const STALL_GAP_MS = 1_000;

/** The sum of the gaps of STALL_GAP_MS or more between deliveries, when none was out. */
export function stalledOf(records: readonly DeliveryRecord[]): number {
  const sorted = [...records].sort((a, b) => a.arrivedAt - b.arrivedAt);
  let stalled = 0;
  let outUntil = sorted[0]?.arrivedAt ?? 0;
  for (const record of sorted) {
    if (record.arrivedAt - outUntil >= STALL_GAP_MS) stalled += record.arrivedAt - outUntil;
    outUntil = Math.max(outUntil, record.answeredAt ?? record.arrivedAt);
  }
  return stalled;
}

/** How many deliveries held each number of jobs. */
export function sizesOf(records: readonly DeliveryRecord[]): Record<string, number> {
  const sizes: Record<string, number> = {};
  for (const record of records) sizes[record.ids.length] = (sizes[record.ids.length] ?? 0) + 1;
  return sizes;
}
