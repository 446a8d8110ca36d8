// Outcome callbacks, their Redis half (docs/delivery.md#outcome-callbacks): the scripts that end a job record
// its outcome and lease it to their caller (src/lua/includes/outcome.lua); this module settles
// attempts: delivered, failed and retried by the schedule in settle-outcomes.lua, or not sent
// (given back uncounted). Sending one is src/core/push/outcome-callback.ts.
import { scripts } from '../../lua/scripts.generated';
import type { EngineContext } from '../store/context';
import type { OutcomeToSend } from '../store/leased';
import { callScript } from '../store/scripts';

/**
 * How attempts went, all of partition `tag`, each fenced by the record's attempt and finishedAt
 * (settle-outcomes.lua): '' delivered, NOT_SENT never sent (no push slot in time), else the error.
 */
export async function settleOutcomes(
  ctx: EngineContext,
  tag: string,
  attempts: readonly { outcome: OutcomeToSend; error: string }[],
): Promise<void> {
  if (attempts.length === 0) return;
  const args: (string | number)[] = [ctx.now(), attempts.length];
  for (const { outcome, error } of attempts) args.push(outcome.id, outcome.record.n, outcome.record.f, error);
  await callScript(ctx, scripts.settleOutcomes, { queue: tag }, args); // lowers the due index to a retry's time
}
