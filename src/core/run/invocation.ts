// One Worker invocation's budgets, shared by everything it runs: a deadline after which no new
// job is reserved, a count of subrequests (each Redis call and each push is one), a count of
// pushes (GROUPQ_MAX_PUSHES: what bounds a drain's CPU, docs/internals.md#sharing-the-isolate),
// and at most six pushes open at once (Workers' limit on simultaneous connections), of which
// outcome callbacks hold at most two.
import type { ScriptRunner } from '../store/scripts';

/** Pushes open at once per invocation. */
export const MAX_OPEN_FETCHES = 6;
/** Of those, outcome callbacks may hold at most this many: slow callback URLs never starve deliveries. */
export const MAX_OUTCOME_FETCHES = 2;

/**
 * Resolves on a later turn of the event loop, after the I/O that is waiting: a drain runs in
 * waitUntil on the thread that answers the isolate's requests, and awaits this between rounds so
 * that no request waits for more than one round (docs/internals.md#sharing-the-isolate).
 * setTimeout is what Workers and Node both have (Workers' scheduler.wait is the same timer).
 */
export function nextTurn(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
}

export class Invocation {
  /** Pushes open now (or claimed for a reservation in flight), across every drain of this invocation. */
  open = 0;
  /** Of `open`, the slots outcome callbacks hold. */
  outcomesOpen = 0;
  private waiters: (() => void)[] = [];
  /** Per key, the end of the last work given to inTurn. */
  private readonly turns = new Map<string, Promise<unknown>>();

  constructor(
    /** Epoch ms after which nothing new is reserved. */
    readonly deadline: number,
    /** Subrequests still allowed. */
    public subrequestsLeft: number,
    readonly now: () => number = Date.now,
    /** Pushes still allowed (job deliveries and outcome callbacks): GROUPQ_MAX_PUSHES. */
    public pushesLeft: number = Number.POSITIVE_INFINITY,
  ) {}

  get freeSlots(): number {
    return Math.max(0, MAX_OPEN_FETCHES - this.open);
  }

  /** How many more jobs may be reserved now: each costs a push and a share of a settle. */
  reservable(): number {
    if (this.now() >= this.deadline) return 0;
    return Math.max(0, Math.min(this.freeSlots, this.pushesLeft, Math.floor((this.subrequestsLeft - 2) / 2)));
  }

  /** Past the deadline, or out of subrequests or pushes: what is left waits for the next trigger. */
  spent(): boolean {
    return this.now() >= this.deadline || this.subrequestsLeft <= 2 || this.pushesLeft <= 0;
  }

  /**
   * Claims push slots (and their subrequests) for a reserving call before it is sent, so that
   * drains reserving at the same time never lease more than the invocation may push at once.
   * Returns how many; give back what was not leased with `release`.
   */
  claim(): number {
    const n = this.reservable();
    this.open += n;
    this.subrequestsLeft -= n;
    this.pushesLeft -= n;
    return n;
  }

  /** Returns claimed slots that no leased job took. */
  release(n: number): void {
    if (n <= 0) return;
    this.open -= n;
    this.subrequestsLeft += n;
    this.pushesLeft += n;
    this.notify();
  }

  /**
   * Takes a push slot for an outcome callback (a send that leases no job), waiting until one is
   * free and fewer than MAX_OUTCOME_FETCHES are outcomes'; false when none came by `until`
   * (epoch ms), or when the subrequest or push budget cannot pay for the send (and its settle).
   * Give it back with `outcomeEnded`.
   */
  async takeOutcomeSlot(until: number): Promise<boolean> {
    while ((this.freeSlots === 0 || this.outcomesOpen >= MAX_OUTCOME_FETCHES) && this.pushesLeft > 0) {
      const waitMs = until - this.now();
      if (waitMs < 0) return false;
      await this.changed(waitMs + 1);
    }
    if (this.now() > until || this.subrequestsLeft <= 2 || this.pushesLeft <= 0) return false;
    this.open++;
    this.outcomesOpen++;
    this.subrequestsLeft--;
    this.pushesLeft--;
    return true;
  }

  /** An outcome callback's send ended: its slot is free. */
  outcomeEnded(): void {
    this.outcomesOpen--;
    this.pushEnded();
  }

  /** A push ended: its slot is free for the next job. */
  pushEnded(): void {
    this.open--;
    this.notify();
  }

  /** Resolves at the next change of `open` (a push started or ended), or after `withinMs` when given. */
  async changed(withinMs?: number): Promise<void> {
    const change = new Promise<void>((resolve) => this.waiters.push(resolve));
    if (withinMs === undefined) return change;
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([change, new Promise<void>((resolve) => (timer = setTimeout(resolve, withinMs)))]);
    clearTimeout(timer);
  }

  notify(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const wake of waiters) wake();
  }

  /**
   * Runs `work` once the work given before it for `key` has ended: one at a time per key.
   * `now`: it starts at once (it holds leased jobs in claimed slots), and the work given after it
   * waits for it all the same.
   */
  inTurn<T>(key: string, work: () => Promise<T>, now = false): Promise<T> {
    const before = this.turns.get(key) ?? Promise.resolve();
    const mine = now ? work() : before.then(work);
    const end = Promise.all([before, mine]).catch(() => undefined);
    this.turns.set(key, end);
    void end.then(() => {
      if (this.turns.get(key) === end) this.turns.delete(key);
    });
    return mine;
  }

  /** The Redis client, counting each call against the subrequest budget. */
  count(redis: ScriptRunner): ScriptRunner {
    const counted = <K extends keyof ScriptRunner>(name: K): ScriptRunner[K] =>
      ((...args: unknown[]) => {
        this.subrequestsLeft--;
        return (redis[name] as (...a: unknown[]) => unknown).apply(redis, args);
      }) as ScriptRunner[K];
    return {
      evalsha: counted('evalsha'),
      eval: counted('eval'),
      zadd: counted('zadd'),
      zrange: counted('zrange'),
      zrem: counted('zrem'),
      hget: counted('hget'),
    };
  }
}
