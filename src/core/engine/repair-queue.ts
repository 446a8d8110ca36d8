// POST /v1/queues/{q}/repair: brings back jobs that scripts failing half way left in no index
// (src/lua/repair.lua; docs/http-api.md#repair). It pages the `jobs` hash; a page whose waiting records
// belong to groups not declared yet is done again with their keys declared (Upstash key locking:
// a script touches only keys it was given).
import { scripts } from '../../lua/scripts.generated';
import { checkQueueName } from '../../protocol/parse';
import type { EngineContext, QueueRef } from '../store/context';
import { QueueError } from '../../protocol/errors';
import { onEachPartition } from './partitions';
import { callScript } from '../store/scripts';

/** Records per page: each page is one script call of bounded work (its groups declared). */
const REPAIR_STEP = 100;
/** Calls for one page: a page whose records moved between calls names its new groups again. */
const TRIES_PER_PAGE = 5;

export interface RepairReport {
  /** Job records put back into the index they were missing from. */
  reindexed: number;
  /** Groups whose next job was offered again (a group nothing would ever have dispatched). */
  offered: number;
}

/** Repairs every partition of the queue (one by one); the report adds theirs up. */
export async function repairQueue(ctx: EngineContext, { queue }: QueueRef): Promise<RepairReport> {
  checkQueueName(queue);
  const reports = await onEachPartition(ctx, queue, (tag) => repairAt(ctx, tag));
  return reports.reduce((sum, report) => ({ reindexed: sum.reindexed + report.reindexed, offered: sum.offered + report.offered }));
}

async function repairAt(ctx: EngineContext, queue: string): Promise<RepairReport> {
  const report: RepairReport = { reindexed: 0, offered: 0 };
  let cursor = '0';
  let groups: string[] = [];
  let tries = 0;
  for (;;) {
    const step = await callScript(ctx, scripts.repair, { queue, groups }, [ctx.now(), cursor, REPAIR_STEP, ...groups]);
    if (step.groups.length > 0) {
      if (++tries > TRIES_PER_PAGE) throw new QueueError('INTERNAL', 'repair: a page kept naming new groups');
      groups = step.groups;
      continue;
    }
    report.reindexed += step.reindexed;
    report.offered += step.offered;
    if (step.cursor === '0') return report;
    ({ cursor } = step);
    groups = [];
    tries = 0;
  }
}
