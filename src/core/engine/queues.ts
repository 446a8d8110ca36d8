// Queue administration: create/replace, read, list, delete in bounded steps, pause and resume
// the queue or one group.
import { scripts } from '../../lua/scripts.generated';
import type { QueueInfo, QueueSummary } from '../../protocol/api-types';
import { type StoredConfig, queueConfigSchema, toPublicConfig, toStoredConfig } from '../../protocol/config';
import { type EngineContext, parse, parseParam } from '../store/context';
import { QueueError } from '../../protocol/errors';
import { isRefusal } from '../store/refusals';
import { groupParamSchema, isQueueName, queueNameSchema } from '../../protocol/job-input';
import { dropDue } from '../store/due-index';
import { randomSeed } from '../../protocol/ids';
import type { PoolRunner } from '../store/pool';
import { callScript } from '../store/scripts';

export type { GroupState, QueueCounts, QueueInfo } from '../../protocol/api-types';

const DELETE_STEP = 200;

export function checkQueueName(name: string): string {
  // zod only for a name it refuses (its message): the check runs on every settle of a drain.
  return isQueueName(name) ? name : parseParam(queueNameSchema, name, 'queue');
}

export async function putQueue(ctx: EngineContext, name: string, input: unknown): Promise<QueueInfo> {
  checkQueueName(name);
  const stored = await toStoredConfig(parse(queueConfigSchema(ctx.options), input));
  // In a pool, placed before anything is written, and before it is registered (a registered
  // queue without a placement is one from before the pool: database 0).
  if ('place' in ctx.redis) await (ctx.redis as PoolRunner).place(name);
  // Registered first: a registered name without a queue is skipped by GET /v1/queues, while a
  // queue missing from the list would be invisible.
  await callScript(ctx, scripts.registry, {}, ['add', name]);
  const put = () => callScript(ctx, scripts.putQueue, { queue: name }, [ctx.now(), JSON.stringify(stored), randomSeed()]);
  try {
    await put();
  } catch (error) {
    // A deletion that was cut off still holds the name: finish it, then create.
    if (!isRefusal(error, 'QUEUE_DELETING')) throw error;
    await deleteQueue(ctx, name);
    await callScript(ctx, scripts.registry, {}, ['add', name]);
    await put();
  }
  return getQueue(ctx, name);
}

/**
 * The stored config (publish token hashes included): what auth and CORS checks read, through
 * the Worker's per-isolate cache (src/core/store/config-cache.ts).
 */
export async function getStoredConfig(ctx: EngineContext, name: string): Promise<StoredConfig> {
  return callScript(ctx, scripts.queueConfig, { queue: checkQueueName(name) }, []);
}

export async function getQueue(ctx: EngineContext, name: string): Promise<QueueInfo> {
  checkQueueName(name);
  const { config, paused, counts } = await callScript(ctx, scripts.queueInfo, { queue: name }, []);
  return { name, config: toPublicConfig(config), paused, counts };
}

/** How many queues exist: a cheap call that proves Redis answers. */
export async function countQueues(ctx: EngineContext): Promise<number> {
  return callScript(ctx, scripts.registry, {}, ['count']);
}

export async function listQueueNames(ctx: EngineContext): Promise<string[]> {
  return (await callScript(ctx, scripts.registry, {}, ['list'])).sort();
}

export async function listQueues(ctx: EngineContext): Promise<QueueSummary[]> {
  const names = await listQueueNames(ctx);
  const infos = await Promise.all(
    names.map((name) =>
      getQueue(ctx, name).catch((error: unknown) => {
        if (error instanceof QueueError && error.code === 'QUEUE_NOT_FOUND') return null;
        throw error;
      }),
    ),
  );
  return infos.filter((info) => info !== null).map(({ name, paused, counts }) => ({ name, paused, counts }));
}

/** Removes every key of the queue, in bounded script steps. */
export async function deleteQueue(ctx: EngineContext, name: string): Promise<void> {
  checkQueueName(name);
  await callScript(ctx, scripts.registry, {}, ['remove', name]);
  // Each step removes the groups the previous one named (their keys declared) and names more.
  let cursor = '0';
  let groups: string[] = [];
  for (;;) {
    const step = await callScript(ctx, scripts.deleteQueue, { queue: name, groups }, [DELETE_STEP, cursor, ...groups]);
    if (step.finished) break;
    ({ cursor, groups } = step);
  }
  await dropDue(ctx, name);
}

export async function setQueuePaused(ctx: EngineContext, name: string, paused: boolean) {
  const pausedNow = await callScript(ctx, scripts.pauseQueue, { queue: checkQueueName(name) }, [paused ? '1' : '0', ctx.now()]);
  return { name, paused: pausedNow };
}

export async function setGroupPaused(ctx: EngineContext, name: string, group: string, paused: boolean) {
  checkQueueName(name);
  parseParam(groupParamSchema, group, 'group');
  const state = await callScript(ctx, scripts.pauseGroup, { queue: name, group }, [group, paused ? '1' : '0', ctx.now()]);
  // A paused group without jobs is still paused (its next job will wait): say so.
  return { group, state: state ?? (paused ? 'paused' : 'ready') };
}
