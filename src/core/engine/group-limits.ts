// One group's limits at runtime (docs/flow-control.md#group-limits-at-runtime): set them, or delete them to fall back on
// the queue's groupConcurrency and groupRateLimit. The group's next start obeys them, no deploy
// needed; they are kept while the group has no jobs and deleted with the queue.
import { scripts } from '../../lua/scripts.generated';
import { checkQueueName, parse, parseParam } from '../../protocol/parse';
import { type GroupLimits, groupLimitsSchema } from '../../protocol/config';
import type { Body, EngineContext, GroupRef } from '../store/context';
import { groupParamSchema } from '../../protocol/job-input';
import { onGroup } from './partitions';
import { callScript } from '../store/scripts';

/** Writes `limits` as JSON ('' deletes them) once queue and group names are checked. */
async function writeLimits(ctx: EngineContext, queue: string, group: string, limits: string) {
  return onGroup(ctx, queue, group, (tag) => callScript(ctx, scripts.groupLimits, { queue: tag, group }, [ctx.now(), group, limits]));
}

function checkTarget(queue: string, group: string): void {
  checkQueueName(queue);
  parseParam(groupParamSchema, group, 'group');
}

/** Replaces the group's limits with `input` ({concurrency?, rateLimit?}: at least one). */
export async function setGroupLimits(ctx: EngineContext, { queue, group, body: input }: GroupRef & Body): Promise<{ group: string; limits: GroupLimits }> {
  checkTarget(queue, group);
  const limits = parse(groupLimitsSchema, input);
  return { group, limits: (await writeLimits(ctx, queue, group, JSON.stringify(limits)))! };
}

/** Deletes the group's limits: the queue's defaults apply again. */
export async function clearGroupLimits(ctx: EngineContext, { queue, group }: GroupRef): Promise<void> {
  checkTarget(queue, group);
  await writeLimits(ctx, queue, group, '');
}
