// Reads for the API: one job, a page of jobs by state, groups and one group.
import { scripts } from '../../lua/scripts.generated';
import { type EngineContext, parse, parseParam } from '../store/context';
import { type Listing, decodeCursor, encodeCursor } from '../store/cursors';
import { groupParamSchema, jobIdSchema, listJobsSchema, pageSchema } from '../../protocol/job-input';
import type { Job } from '../../protocol/api-types';
import { toJob, toOutcomeStatus } from '../store/job-records';
import { checkQueueName } from './queues';
import { callScript } from '../store/scripts';

/** The most jobs GET group returns. */
const GROUP_JOBS_LIMIT = 1000;

export async function getJob(ctx: EngineContext, queue: string, id: string): Promise<Job> {
  checkQueueName(queue);
  parseParam(jobIdSchema, id, 'id');
  const { view, callbackUrl, outcome } = await callScript(ctx, scripts.getJob, { queue }, [id]);
  const job = toJob(queue, view);
  if (callbackUrl !== null) job.callbackUrl = callbackUrl;
  if (outcome !== null) job.outcome = toOutcomeStatus(outcome);
  return job;
}

export async function listJobs(ctx: EngineContext, queue: string, query: unknown = {}) {
  checkQueueName(queue);
  const { state, group, limit, cursor } = parse(listJobsSchema, query);
  // With a group, waiting jobs are read from the group's zset (the script's optional last key).
  const inGroup = group !== undefined && state === 'waiting';
  const listing: Listing = inGroup ? 'group' : state;
  const at = decodeCursor(listing, cursor);
  const { next, views } = await callScript(ctx, scripts.listJobs, { queue, group: inGroup ? group : undefined }, [state, limit, group ?? '', ...at]);
  return { jobs: views.map((view) => toJob(queue, view)), cursor: encodeCursor(listing, next) };
}

export type { GroupSummary } from '../../protocol/api-types';

export async function listGroups(ctx: EngineContext, queue: string, query: unknown = {}) {
  checkQueueName(queue);
  const { limit, cursor } = parse(pageSchema, query);
  const at = decodeCursor('groups', cursor);
  // Two reads: the names (list-groups walks meta's group counters), then their state, which
  // needs each group's key declared.
  const { next, names } = await callScript(ctx, scripts.listGroups, { queue }, [limit, ...at]);
  const groups = names.length > 0 ? await callScript(ctx, scripts.groupInfo, { queue, groups: names }, [ctx.now(), ...names]) : [];
  return { groups, cursor: encodeCursor('groups', next) };
}

export async function getGroup(ctx: EngineContext, queue: string, group: string) {
  checkQueueName(queue);
  parseParam(groupParamSchema, group, 'group');
  const { state, views, limits, active, concurrency } = await callScript(ctx, scripts.getGroup, { queue, group }, [
    group, ctx.now(), GROUP_JOBS_LIMIT,
  ]);
  return { group, state, limits, active, concurrency, jobs: views.map((view) => toJob(queue, view)) };
}
