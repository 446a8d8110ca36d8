// The work that must follow a write in the same invocation, so that no route can forget delivery.
// An operation's row names the follow-up it needs (src/handlers/operations.ts):
// - leasing: a write that leases ready jobs in its own script call (enqueue, complete, fail)
//   claims their push slots first and hands what it leased to a drain after the response;
// - thenDrain: a write that makes jobs ready (resume a queue or group, retry, promote, cancel: the
//   group's next job) starts a drain;
// - noteTimer: a write that adds a timer this isolate has not seen (a delayed job, a repeat's next
//   run) lowers the partition's due time, so the follow-up ticks when it is due;
// - changingConfig: a config write forgets the isolate's cached config, so it takes effect at once.
// Work after the response goes through `waitUntil`, the one thing core takes of the runtime.
import type { KeepGoing } from '../engine/bulk';
import { type OutcomeToSend, deliveryCount } from '../store/leased';
import type { ConfigCache } from '../store/config-cache';
import type { QueueRef } from '../store/context';
import { type Leased, type RunContext, sendOutcomes } from './dispatcher';
import type { DueTimes } from './due-times';
import { followUp } from './runner';

/** The follow-ups a row may name; leasing is its routes' own (src/handlers/enqueue.ts, callbacks.ts). */
export type FollowUp = 'thenDrain' | 'noteTimer' | 'changingConfig';

export interface FollowUpDeps {
  run: RunContext;
  /** What this isolate has learned of each partition's next timer. */
  due: DueTimes;
  /** Keeps work alive after the response (a Worker's `ctx.waitUntil`). */
  waitUntil: (work: Promise<unknown>) => void;
  /** Queues' configs as this isolate read them a moment ago: what auth and CORS checks read. */
  configs: ConfigCache;
}

/** What a write's answer may say of where it made jobs ready or added a timer. */
interface Written {
  group?: string;
  state?: string;
  runAt?: number;
  /** A repeat's first run. */
  nextRunAt?: number | null;
  /** A bulk action's count: 0 made nothing ready. */
  count?: number;
  /** Outcome callbacks the write recorded, leased to this invocation to send; never answered. */
  outcomes?: OutcomeToSend[];
}

/** A write's result without the job events it may carry (src/core/store/events.ts): they are no answer. */
function withoutEvents(done: unknown): unknown {
  if (done === null || typeof done !== 'object' || !('events' in done)) return done;
  const { events: _events, ...answer } = done as { events?: unknown };
  return answer;
}

/**
 * A bulk action's budget: it stops between steps after this long, or once it has spent half the
 * invocation's subrequests (the drain after a retry needs the rest), and says it is not done.
 */
const BULK_BUDGET_MS = 10_000;

export function createFollowUps({ run, due, waitUntil, configs }: FollowUpDeps) {
  const { engine, invocation } = run;

  /** After the response: drain, then tick the partition `tag` if this isolate knows it is due (followUp). */
  const deliverLater = (tag: string, start: Leased | 'drain') => waitUntil(followUp(run, due, tag, start));

  /** A timer due at `at` (null: none) that this isolate has not seen: tick the partition by then. */
  const noteTimer = (tag: string, at: number | null) => {
    if (at !== null) due.lower(tag, at);
  };

  /** The partitions a write touched: its group's (the answer's, else the input's), or every one of the queue. */
  const partitionsOf = ({ queue, group }: QueueRef & { group?: string }, done: Written) => {
    const of = done.group ?? group;
    return of === undefined ? engine.tagsOf(queue) : [engine.tagOfGroup(queue, of)];
  };

  /** Drains what the write made ready, and sends the outcome callbacks it recorded; answers the rest. */
  function thenDrain(input: QueueRef & { group?: string }, { outcomes, ...answer }: Written): unknown {
    if (answer.count !== 0) for (const tag of partitionsOf(input, answer)) deliverLater(tag, 'drain');
    if (outcomes && outcomes.length > 0) waitUntil(sendOutcomes(run, outcomes[0]!.tag, outcomes));
    return answer;
  }

  /** A repeat's first run (any partition's follow-up may look for it), or a delayed job's start. */
  function noteTimerOf(input: QueueRef, done: Written): void {
    if (done.nextRunAt !== undefined) {
      for (const tag of engine.tagsOf(input.queue)) noteTimer(tag, done.nextRunAt);
    } else if (done.state === 'delayed') {
      for (const tag of partitionsOf(input, done)) noteTimer(tag, done.runAt ?? invocation.now());
    }
  }

  return {
    /** Runs the follow-up a row names once its write is done, and answers what the write returned. */
    async follow(kind: FollowUp | undefined, input: QueueRef & { group?: string }, write: Promise<unknown>): Promise<unknown> {
      if (kind === 'changingConfig') {
        // Forgotten whether or not it was written: a failed write may have written part.
        return write.finally(() => configs.forget(input.queue));
      }
      const done = withoutEvents(await write);
      // A write that answers nothing (a 204) made ready what its input names.
      if (kind === 'thenDrain') return thenDrain(input, (done ?? {}) as Written);
      if (kind === 'noteTimer') noteTimerOf(input, done as Written);
      return done;
    },

    /**
     * Runs a write that leases up to `reserve` ready jobs in the same script call. Their push
     * slots are claimed before it is sent, because the drains of this invocation reserve at the
     * same time (Invocation.claim); slots it left empty are given back, and a drain pushes what
     * it leased after the response, one per partition it wrote to (`partsOf`). The timer it
     * added (`timerOf`) is noted first: the follow-up reads it.
     */
    async leasing<T>(
      write: (reserve: number) => Promise<T>,
      partsOf: (done: T, reserve: number) => (Leased & { tag: string })[],
      timerOf: (done: T) => number | null,
    ): Promise<T> {
      const reserve = invocation.claim();
      let parts: (Leased & { tag: string })[] | undefined;
      let done: T;
      try {
        done = await write(reserve);
        parts = partsOf(done, reserve);
      } finally {
        invocation.release(reserve - (parts?.reduce((sum, part) => sum + deliveryCount(part.jobs), 0) ?? 0));
      }
      // The drains that hold jobs first: they start at once, and the others wait for their turns.
      parts.sort((a, b) => b.jobs.length - a.jobs.length);
      for (const { tag, ...leased } of parts) {
        noteTimer(tag, timerOf(done));
        deliverLater(tag, leased);
      }
      return done;
    },

    /** The budget of one bulk action (BULK_BUDGET_MS), asked between its steps. */
    bulkBudget(): KeepGoing {
      const until = invocation.now() + BULK_BUDGET_MS;
      const floor = invocation.subrequestsLeft / 2;
      return () => invocation.now() < until && invocation.subrequestsLeft > floor;
    },

    /** The invocation's clock. */
    now: () => invocation.now(),
  };
}

export type FollowUps = ReturnType<typeof createFollowUps>;
