// The drain loop: push leased jobs to their endpoint, at most six at once per invocation, and
// hand every lease back with settle, which also reserves the next jobs in the same round trip
// (complete-and-reserve-next: a busy group flows without a separate reserve). Deliveries that end
// while a settle is in flight are acked together by the next one. Capacity (G6) and one lease
// per group (G1) are enforced by the scripts, so concurrent drains never over-deliver.
// A round (one settle, at most six new pushes) is the most a drain does in one turn of the event
// loop: it yields after each, so the isolate's requests never wait behind a whole drain
// (docs/internals.md#sharing-the-isolate).
import { type DeliveryOptions, deliver } from '../push/delivery';
import { deliverBatch } from '../push/batch-delivery';
import { type OutcomeToSend, type PushTarget, deliveriesOf, pushTarget } from '../store/leased';
import { queueOfTag } from '../store/partitions';
import type { RunCalls } from '../engine';
import { QueueError } from '../../protocol/errors';
import { type Invocation, nextTurn } from './invocation';
import { type LeasedJob, type Settled, type Settlement, spotOf } from '../engine/leases';
import { NOT_SENT, lastStartAt, sendOutcome } from '../push/outcome-callback';
import type { Log } from '../log';
import { logDelivery, logOutcome } from './attempt-log';

export interface DrainReport {
  /** Pushes made. */
  delivered: number;
  /** Attempts that failed and will be retried: the queue has a new timer (the tick knows when). */
  retrying: number;
  /** The invocation's budget ran out while jobs may still be ready: the next trigger takes them. */
  cut: boolean;
}

/** What a run of the push layer works with in one invocation. */
export interface RunContext {
  /** The engine calls a run makes. */
  engine: RunCalls;
  invocation: Invocation;
  delivery: DeliveryOptions;
  /** The invocation's log, its lines carrying its requestId. */
  log: Log;
}

/** Jobs already leased by the call that started the drain (an enqueue, a callback), in slots it claimed. */
export interface Leased {
  jobs: LeasedJob[];
  /** Their queue's endpoint and signing secrets. */
  target: PushTarget;
  /** As many were leased as asked for: more may be ready. */
  more: boolean;
  /** Outcome callbacks the same call recorded, leased to this invocation to send. */
  outcomes?: OutcomeToSend[];
}

/**
 * Sends outcome callbacks this invocation holds leases for, all of partition `tag`, each in a
 * push slot (at most MAX_OUTCOME_FETCHES of the invocation's: deliveries always keep the others),
 * then settles them in one call. An attempt that got no slot while its lease could still cover it
 * is settled as not sent, and does not count. Never throws: an attempt that is not settled comes
 * round again through the tick when its lease ends.
 */
export async function sendOutcomes(d: RunContext, tag: string, outcomes: readonly OutcomeToSend[]): Promise<void> {
  if (outcomes.length === 0) return;
  const attempts = await Promise.all(
    outcomes.map(async (outcome) => {
      // The settle below is paid for whatever happens: takeOutcomeSlot keeps 2 subrequests.
      if (!(await d.invocation.takeOutcomeSlot(lastStartAt(outcome)))) {
        logOutcome(d.log, outcome, NOT_SENT, 0);
        return { outcome, error: NOT_SENT };
      }
      try {
        const start = Date.now();
        const error = await sendOutcome(outcome, d.delivery);
        logOutcome(d.log, outcome, error, Date.now() - start);
        return { outcome, error };
      } finally {
        d.invocation.outcomeEnded();
      }
    }),
  );
  try {
    await d.engine.settleOutcomes(tag, attempts);
  } catch (error) {
    d.log.error('settle_outcomes_failed', `settling outcome callbacks of queue ${tag} failed`, { queue: tag, error });
  }
}

const SETTLE_ATTEMPTS = 3;

/**
 * How long acks wait for the drain's other pushes to come back. Sent as each came back, the acks
 * of pushes that began together split into a call of one and a call of the rest, and the jobs
 * those two calls lease begin apart, so it goes on: two calls a round. Waiting for the rest puts
 * them in one call, and the jobs it leases begin together. A lone job waits for nothing.
 */
const LINGER_MS = 20;

async function settleWithRetry(d: RunContext, tag: string, settlements: Settlement[], reserve: number): Promise<Settled | null> {
  for (let attempt = 1; ; attempt++) {
    try {
      // A retry reserves nothing: if the lost answer had leased jobs, their leases lapse and the
      // tick retries them; settlements acked twice are LEASE_LOST the second time, harmless.
      return await d.engine.settle(tag, settlements, attempt === 1 ? reserve : 0);
    } catch (error) {
      d.log.error('settle_failed', `settle on queue ${tag} failed (attempt ${attempt})`, { queue: tag, attempt, error });
      // Unacked settlements are not lost: their leases lapse and the jobs are retried (G3). Only
      // an unreachable Redis, or a partition moving to another database, is worth another try (a
      // deleted queue or a bug stays as it is).
      const transient = error instanceof QueueError && (error.code === 'REDIS_UNAVAILABLE' || error.code === 'PARTITION_MOVING');
      if (!transient || attempt === SETTLE_ATTEMPTS) return null;
      await new Promise((resolve) => setTimeout(resolve, 200 * attempt));
    }
  }
}

/**
 * Drains one partition (`tag`: its queue's name when the queue has one) until nothing is ready,
 * or the invocation's budget is spent. The partitions of a queue take turns in an invocation, so
 * that each drain gets all its push slots and acks and leases them in a few calls rather than
 * many calls of one job each; a drain that holds jobs or outcome callbacks leased already starts
 * at once (their slots are claimed) and the turns after it wait for it. A drain cut by its budget
 * leaves the rest to the due index, as any drain does.
 */
export function drain(d: RunContext, tag: string, leased?: Leased): Promise<DrainReport> {
  if (queueOfTag(tag) === tag) return drainNow(d, tag, leased);
  const holds = (leased?.jobs.length ?? 0) > 0 || (leased?.outcomes?.length ?? 0) > 0;
  // A partition another drain of this isolate is on gets one more round from it instead: fewer
  // drains at once, each acking and leasing more jobs per call.
  const active = draining.get(tag);
  if (active && !holds) {
    active.again = true;
    return Promise.resolve({ delivered: 0, retrying: 0, cut: false });
  }
  const rounds = async () => {
    const total: DrainReport = { delivered: 0, retrying: 0, cut: false };
    const mine = { again: false };
    if (!active) draining.set(tag, mine);
    try {
      for (let first = true; first || mine.again; first = false) {
        mine.again = false;
        const report = await drainNow(d, tag, first ? leased : undefined);
        total.delivered += report.delivered;
        total.retrying += report.retrying;
        total.cut = report.cut;
        if (report.cut) break;
      }
      return total;
    } finally {
      if (draining.get(tag) === mine) draining.delete(tag);
    }
  };
  return d.invocation.inTurn(queueOfTag(tag), rounds, holds);
}

/** Per isolate: the partitions a drain is on, and whether another asked it for one more round. */
const draining = new Map<string, { again: boolean }>();

async function drainNow(d: RunContext, tag: string, leased?: Leased): Promise<DrainReport> {
  const { invocation } = d;
  const report: DrainReport = { delivered: 0, retrying: 0, cut: false };
  const settlements: Settlement[] = [];
  let mine = 0; // pushes of this drain in flight
  let mayHaveMore = leased?.more ?? true; // the last reservation was not short: more may be ready

  let ackOnly = false; // Redis failed us: ack what comes back, lease nothing more
  const sending = [sendOutcomes(d, tag, leased?.outcomes ?? [])]; // outcome callbacks, in the background
  // Each delivery's slot was claimed before its jobs were leased (Invocation.claim). On a batch
  // queue a delivery is a batch (docs/batches.md), whose jobs are settled in their order.
  const push = (jobs: LeasedJob[], target: PushTarget) => {
    mine++;
    report.delivered++;
    const start = Date.now();
    const sent = target.batch ? deliverBatch(jobs, target, d.delivery) : deliver(jobs[0]!, target, d.delivery).then((s) => s && [s]);
    void sent.then((ends) => {
      mine--;
      // 202: the endpoint holds the leases; the slot is free for the next delivery.
      if (ends) ends.forEach((settlement, i) => settlements.push({ ...settlement, spot: spotOf(jobs[i]!) }));
      else mayHaveMore = true;
      invocation.pushEnded();
      jobs.forEach((job, i) => logDelivery(d.log, job, ends?.[i] ?? null, Date.now() - start));
    });
  };

  for (const jobs of deliveriesOf(leased?.jobs ?? [])) push(jobs, leased!.target);
  let lingerUntil = 0; // acks that came back wait for this drain's other pushes until then
  for (;;) {
    if (settlements.length > 0 && mine > 0 && !ackOnly) {
      lingerUntil ||= invocation.now() + LINGER_MS;
      const left = lingerUntil - invocation.now();
      if (left > 0) {
        await invocation.changed(left);
        continue;
      }
    }
    lingerUntil = 0;
    const reserve = !ackOnly && (mayHaveMore || settlements.length > 0) ? invocation.claim() : 0;
    if (settlements.length > 0 || reserve > 0) {
      const batch = settlements.splice(0);
      const settled = await settleWithRetry(d, tag, batch, reserve);
      if (!settled) {
        // Those settlements' leases lapse and their jobs are retried (G3); finish what is open.
        invocation.release(reserve);
        ackOnly = true;
        continue;
      }
      const deliveries = deliveriesOf(settled.jobs);
      invocation.release(reserve - deliveries.length);
      sending.push(sendOutcomes(d, tag, settled.outcomes));
      report.retrying += settled.results.filter((r) => r.state === 'waiting').length;
      mayHaveMore = deliveries.length === reserve && reserve > 0;
      const target = pushTarget(settled.config);
      for (const jobs of deliveries) push(jobs, target);
      // The round's work is done and its pushes are on their way: what waits (a request, another
      // drain's answer) runs before this drain's next round.
      await nextTurn();
      continue;
    }
    // Nothing to ack and nothing to reserve: done once our pushes are back, unless jobs may be
    // waiting for a slot that another drain of this invocation holds.
    const slotElsewhere = !ackOnly && mayHaveMore && invocation.open > 0 && invocation.now() < invocation.deadline;
    if (mine === 0 && !slotElsewhere) {
      report.cut = mayHaveMore && !ackOnly && invocation.reservable() === 0;
      await Promise.all(sending);
      return report;
    }
    await invocation.changed();
  }
}
