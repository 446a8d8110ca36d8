// One group's limits at runtime (README, Flow control): set them, or delete them to fall back on
// the queue's groupConcurrency and groupRateLimit. The group's next start obeys them, no deploy
// needed; they are kept while the group has no jobs and deleted with the queue.
import { scripts } from '../../lua/scripts.generated';
import { type GroupLimits, groupLimitsSchema } from '../../protocol/config';
import { type EngineContext, parse, parseParam } from '../store/context';
import { noteDue } from '../store/due-index';
import { groupParamSchema } from '../../protocol/job-input';
import { checkQueueName } from './queues';
import { callScript } from '../store/scripts';

/** Writes `limits` as JSON ('' deletes them) once queue and group names are checked. */
async function writeLimits(ctx: EngineContext, queue: string, group: string, limits: string) {
  const reply = await callScript(ctx, scripts.groupLimits, { queue, group }, [ctx.now(), group, limits]);
  await noteDue(ctx, queue, reply.dueAt);
  return reply.limits;
}

function checkTarget(queue: string, group: string): void {
  checkQueueName(queue);
  parseParam(groupParamSchema, group, 'group');
}

/** Replaces the group's limits with `input` ({concurrency?, rateLimit?}: at least one). */
export async function setGroupLimits(ctx: EngineContext, queue: string, group: string, input: unknown): Promise<{ group: string; limits: GroupLimits }> {
  checkTarget(queue, group);
  const limits = parse(groupLimitsSchema, input);
  return { group, limits: (await writeLimits(ctx, queue, group, JSON.stringify(limits)))! };
}

/** Deletes the group's limits: the queue's defaults apply again. */
export async function clearGroupLimits(ctx: EngineContext, queue: string, group: string): Promise<void> {
  checkTarget(queue, group);
  await writeLimits(ctx, queue, group, '');
}
