// Asking a queue's scripts for the job events they cause (src/lua/includes/events.lua): until the
// time given, every script that changes a job returns its events in its reply, at no command of
// their own; before and after, replies are as they always were. Whoever may listen (a stream that
// opens) asks first, since only events that happen after the ask are returned.
import * as z from 'zod';
import { scripts } from '../../lua/scripts.generated';
import { epochMsSchema } from '../../protocol/job-input';
import { checkQueueName, parse } from '../../protocol/parse';
import type { EngineContext, QueueRef } from '../store/context';
import { callScript } from '../store/scripts';
import { onEachPartition } from './partitions';

const untilSchema = z.object({ until: epochMsSchema });

/**
 * Events of `queue` are wanted until `until` (epoch ms): meta's `ev` in each partition, one
 * script call each (want-events.lua: an HMGET of meta, and an HSET when the time moves later).
 * A time earlier than the one stored keeps the stored one. Answers the time now stored, the
 * earliest of the partitions' (they agree unless callers raced).
 */
export async function wantEvents(ctx: EngineContext, { queue, until }: QueueRef & { until: number }): Promise<{ until: number }> {
  checkQueueName(queue);
  const at = parse(untilSchema, { until }).until;
  const stored = await onEachPartition(ctx, queue, (tag) => callScript(ctx, scripts.wantEvents, { queue: tag }, [at]));
  return { until: Math.min(...stored) };
}
