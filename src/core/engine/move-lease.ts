// One move of a partition at a time (docs/scaling-out.md#one-move-at-a-time): a move holds a
// lease on the control database (move-lock.lua, in gq:moves) from its first step to its last,
// and renews it as it goes. Another move of the same partition meanwhile is refused with 409
// MOVE_IN_PROGRESS rather than joined: joining would keep a second request open polling for the
// first one's end, and the call is safe to make again once it has ended. A move cut off (its
// Worker died) keeps the lease only until it runs out; the next call then takes it over and
// finishes what was left (move.ts).
import { scripts } from '../../lua/scripts.generated';
import { QueueError } from '../../protocol/errors';
import { randomSeed } from '../../protocol/ids';
import { callScript, type ScriptContext } from '../store/scripts';

/** How long a move holds the partition without renewing: what a move cut off blocks the next call for, at most. */
export const MOVE_LEASE_MS = 30_000;

/** `database`: where the other move goes; -1 when unknown (the lease of a move taken over was ended since). */
function inProgress(tag: string, database: number): QueueError {
  if (database < 0) return new QueueError('MOVE_IN_PROGRESS', `another move of partition ${tag} took this one's lease over`);
  return new QueueError('MOVE_IN_PROGRESS', `another move of partition ${tag} to database ${database} is under way: call again once it has ended`, { database });
}

export class MoveLease {
  private renewedAt: number;

  private constructor(
    private readonly control: ScriptContext,
    readonly tag: string,
    /** This move's own id: the lease and the placement switch check it (move-place.lua). */
    readonly owner: string,
    private readonly now: () => number,
  ) {
    this.renewedAt = now();
  }

  /** Takes the lease of `tag`'s moves for a move to `database`, or throws MOVE_IN_PROGRESS while another move holds it. */
  static async take(control: ScriptContext, tag: string, database: number, now: () => number): Promise<MoveLease> {
    const lease = new MoveLease(control, tag, randomSeed(), now);
    const at = now();
    const other = await callScript(control, scripts.moveLock, {}, ['take', tag, lease.owner, at, at + MOVE_LEASE_MS, database]);
    if (other !== null) throw inProgress(tag, other);
    return lease;
  }

  /**
   * Renews the lease once a third of it has passed, so a move that goes on holds it; throws
   * MOVE_IN_PROGRESS when another move took it over (this one stalled past its end): then this
   * one writes nothing more. Called before each write of the move.
   */
  async keep(): Promise<void> {
    const at = this.now();
    if (at - this.renewedAt < MOVE_LEASE_MS / 3) return;
    const other = await callScript(this.control, scripts.moveLock, {}, ['renew', this.tag, this.owner, at, at + MOVE_LEASE_MS, '']);
    if (other !== null) throw inProgress(this.tag, other);
    this.renewedAt = at;
  }

  /** Ends the lease, if it is still this move's. */
  async end(): Promise<void> {
    await callScript(this.control, scripts.moveLock, {}, ['end', this.tag, this.owner, this.now(), '', '']);
  }
}
