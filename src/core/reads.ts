// Reads for the API: one job, a page of jobs by state, groups and one group.
import { scripts } from '../lua/scripts.generated';
import type { GroupState, GroupSummary } from './api-types';
import { type EngineContext, parse } from './context';
import { groupNameSchema, jobIdSchema, listJobsSchema, pageSchema } from './job-input';
import { type Job, toJob } from './job-view';
import { groupKey, queueKeys } from './keys';
import { checkQueueName } from './queues';
import { runScript } from './scripts';

/** The most jobs GET group returns. */
const GROUP_JOBS_LIMIT = 1000;

export async function getJob(ctx: EngineContext, queue: string, id: string): Promise<Job> {
  const k = queueKeys(checkQueueName(queue));
  parse(jobIdSchema, id);
  const reply = await runScript(ctx.redis, scripts.getJob, [k.meta, k.jobs, k.active], [id]);
  return toJob(queue, reply[1] as unknown[]);
}

export async function listJobs(ctx: EngineContext, queue: string, query: unknown = {}) {
  const k = queueKeys(checkQueueName(queue));
  const { state, group, limit, cursor } = parse(listJobsSchema, query);
  const keys = [k.meta, k.jobs, k.active, k.delayed, k.completed, k.failed];
  if (group !== undefined && state === 'waiting') keys.push(groupKey(queue, group));
  const reply = await runScript(ctx.redis, scripts.listJobs, keys, [state, limit, cursor ?? '', group ?? '']);
  const [, next, tuples] = reply as [number, string, unknown[][]];
  return { jobs: tuples.map((tuple) => toJob(queue, tuple)), cursor: next === '' ? null : next };
}

export type { GroupSummary } from './api-types';

export async function listGroups(ctx: EngineContext, queue: string, query: unknown = {}) {
  const k = queueKeys(checkQueueName(queue));
  const { limit, cursor } = parse(pageSchema, query);
  const reply = await runScript(
    ctx.redis,
    scripts.listGroups,
    [k.meta, k.jobs, k.ready, k.active, k.held, k.pausedGroups],
    [ctx.now(), limit, cursor ?? ''],
  );
  const [, next, rows] = reply as [number, string, [string, number, number, GroupState][]];
  const groups: GroupSummary[] = rows.map(([group, waiting, active, state]) => ({ group, waiting, active, state }));
  return { groups, cursor: next === '' ? null : next };
}

export async function getGroup(ctx: EngineContext, queue: string, group: string) {
  const k = queueKeys(checkQueueName(queue));
  parse(groupNameSchema, group);
  const reply = await runScript(
    ctx.redis,
    scripts.getGroup,
    [k.meta, k.jobs, k.ready, k.active, k.held, k.pausedGroups, groupKey(queue, group)],
    [group, ctx.now(), GROUP_JOBS_LIMIT],
  );
  const [, state, tuples] = reply as [number, GroupState, unknown[][]];
  return { group, state, jobs: tuples.map((tuple) => toJob(queue, tuple)) };
}
