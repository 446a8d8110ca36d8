// Queue administration: create/replace, read, list, delete in bounded steps, pause and resume
// the queue or one group.
import { scripts } from '../lua/scripts.generated';
import { type QueueConfig, type StoredConfig, queueConfigSchema, toPublicConfig, toStoredConfig } from './config';
import { type EngineContext, parse } from './context';
import { QueueError } from './errors';
import { groupNameSchema, queueNameSchema } from './job-input';
import { REGISTRY_KEY, groupKey, queueKeys } from './keys';
import { runScript } from './scripts';

export interface QueueCounts {
  waiting: number;
  delayed: number;
  active: number;
  completed: number;
  failed: number;
  /** Groups holding a waiting or active job. */
  groups: number;
}

export interface QueueInfo {
  name: string;
  config: QueueConfig;
  paused: boolean;
  counts: QueueCounts;
}

export type GroupState = 'ready' | 'active' | 'held' | 'paused';

const DELETE_STEP = 200;

export function checkQueueName(name: string): string {
  return parse(queueNameSchema, name);
}

export async function putQueue(ctx: EngineContext, name: string, input: unknown): Promise<QueueInfo> {
  checkQueueName(name);
  const stored = await toStoredConfig(parse(queueConfigSchema(ctx.options), input));
  const keys = queueKeys(name);
  // Registered first: a queue the cron does not walk would never have its timers run, while a
  // registered name without a queue is skipped.
  await runScript(ctx.redis, scripts.registry, [REGISTRY_KEY], ['add', name]);
  const put = () => runScript(ctx.redis, scripts.putQueue, [keys.meta, keys.ready], [ctx.now(), JSON.stringify(stored)]);
  try {
    await put();
  } catch (error) {
    // A deletion that was cut off still holds the name: finish it, then create.
    if (!(error instanceof QueueError && error.code === 'INVALID_STATE')) throw error;
    await deleteQueue(ctx, name);
    await runScript(ctx.redis, scripts.registry, [REGISTRY_KEY], ['add', name]);
    await put();
  }
  return getQueue(ctx, name);
}

export async function getQueue(ctx: EngineContext, name: string): Promise<QueueInfo> {
  checkQueueName(name);
  const k = queueKeys(name);
  const reply = await runScript(
    ctx.redis,
    scripts.queueInfo,
    [k.meta, k.jobs, k.ready, k.active, k.held, k.delayed, k.completed, k.failed],
    [],
  );
  const [, configJson, paused, waiting, delayed, active, completed, failed, groups] = reply as [
    number, string, number, number, number, number, number, number, number,
  ];
  return {
    name,
    config: toPublicConfig(JSON.parse(configJson) as StoredConfig),
    paused: paused === 1,
    counts: { waiting, delayed, active, completed, failed, groups },
  };
}

/** How many queues exist: a cheap call that proves Redis answers. */
export async function countQueues(ctx: EngineContext): Promise<number> {
  const reply = await runScript(ctx.redis, scripts.registry, [REGISTRY_KEY], ['count']);
  return reply[1] as number;
}

export async function listQueueNames(ctx: EngineContext): Promise<string[]> {
  const reply = await runScript(ctx.redis, scripts.registry, [REGISTRY_KEY], ['list']);
  return [...(reply[1] as string[])].sort();
}

export async function listQueues(ctx: EngineContext): Promise<Omit<QueueInfo, 'config'>[]> {
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
  const k = queueKeys(checkQueueName(name));
  const keys = [
    k.meta, k.jobs, k.ready, k.active, k.held, k.delayed, k.completed, k.failed,
    k.pausedGroups, k.repeats, k.repeatDue,
  ];
  await runScript(ctx.redis, scripts.registry, [REGISTRY_KEY], ['remove', name]);
  for (;;) {
    const [, done] = await runScript(ctx.redis, scripts.deleteQueue, keys, [DELETE_STEP]);
    if (done === 1) return;
  }
}

export async function setQueuePaused(ctx: EngineContext, name: string, paused: boolean) {
  const k = queueKeys(checkQueueName(name));
  const reply = await runScript(ctx.redis, scripts.pauseQueue, [k.meta, k.ready], [paused ? '1' : '0', ctx.now()]);
  return { name, paused: reply[1] === 1 };
}

export async function setGroupPaused(ctx: EngineContext, name: string, group: string, paused: boolean) {
  const k = queueKeys(checkQueueName(name));
  parse(groupNameSchema, group);
  const reply = await runScript(
    ctx.redis,
    scripts.pauseGroup,
    [k.meta, k.jobs, k.ready, k.active, k.held, k.pausedGroups, groupKey(name, group)],
    [group, paused ? '1' : '0', ctx.now()],
  );
  const state = reply[1] as string;
  // A paused group without jobs is still paused (its next job will wait): say so.
  return { group, state: (state === '' ? (paused ? 'paused' : 'ready') : state) as GroupState };
}
