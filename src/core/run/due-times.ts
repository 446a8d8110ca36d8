// What an isolate has learned of when each partition next needs a tick: its copy of the due
// index (gq:due), lowered by the writes it makes and set by the ticks it runs, so a request's
// follow-up ticks only when a timer is due, and one follow-up per partition sleeps for it.
// A partition is named by its tag: its queue's name when the queue has one partition.

/**
 * Per isolate: when each partition next needs a tick, as last learned (this isolate's view of
 * what the due index holds). Unknown means now.
 */
export class DueTimes {
  private readonly at = new Map<string, number | null>();
  private readonly sleeping = new Set<string>();

  isDue(tag: string, now: number): boolean {
    const at = this.at.get(tag);
    return at === undefined || (at !== null && at <= now);
  }

  set(tag: string, at: number | null): void {
    this.at.set(tag, at);
  }

  /** A timer at `at` exists (a delayed job, a retry): tick by then. */
  lower(tag: string, at: number): void {
    const current = this.at.get(tag);
    if (current === null || (current !== undefined && at < current)) this.at.set(tag, at);
  }

  /** One request follow-up per isolate and partition sleeps for the next due time; false if one does. */
  claimSleep(tag: string): boolean {
    if (this.sleeping.has(tag)) return false;
    this.sleeping.add(tag);
    return true;
  }

  releaseSleep(tag: string): void {
    this.sleeping.delete(tag);
  }
}
