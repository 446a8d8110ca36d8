// What an isolate has learned of when each partition next needs a tick: its copy of the due
// index (gq:due), lowered by the writes it makes and set by the ticks it runs, so a request's
// follow-up ticks only when a timer is due, and one follow-up per partition sleeps for it.

/**
 * Per isolate: when each queue next needs a tick, as last learned (this isolate's view of what
 * the due index holds). Unknown means now.
 */
export class DueTimes {
  private readonly at = new Map<string, number | null>();
  private readonly sleeping = new Set<string>();

  isDue(queue: string, now: number): boolean {
    const at = this.at.get(queue);
    return at === undefined || (at !== null && at <= now);
  }

  set(queue: string, at: number | null): void {
    this.at.set(queue, at);
  }

  /** A timer at `at` exists (a delayed job, a retry): tick by then. */
  lower(queue: string, at: number): void {
    const current = this.at.get(queue);
    if (current === null || (current !== undefined && at < current)) this.at.set(queue, at);
  }

  /** One request follow-up per isolate and queue sleeps for the next due time; false if one does. */
  claimSleep(queue: string): boolean {
    if (this.sleeping.has(queue)) return false;
    this.sleeping.add(queue);
    return true;
  }

  releaseSleep(queue: string): void {
    this.sleeping.delete(queue);
  }
}
