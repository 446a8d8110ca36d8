// Queue administration: create/replace, read, list, delete in bounded steps, pause and resume
// the queue or one group.
import { scripts } from '../lua/scripts.generated';
import type { GroupState, QueueInfo, QueueSummary } from './api-types';
import { type StoredConfig, queueConfigSchema, toPublicConfig, toStoredConfig } from './config';
import { type EngineContext, parse } from './context';
import { QueueError } from './errors';
import { groupNameSchema, queueNameSchema } from './job-input';
import { PUBLISH_TOKENS_KEY, REGISTRY_KEY, groupKey, queueKeys } from './keys';
import { runScript } from './scripts';

export type { GroupState, QueueCounts, QueueInfo } from './api-types';

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
  let reply;
  try {
    reply = await put();
  } catch (error) {
    // A deletion that was cut off still holds the name: finish it, then create.
    if (!(error instanceof QueueError && error.code === 'INVALID_STATE')) throw error;
    await deleteQueue(ctx, name);
    await runScript(ctx.redis, scripts.registry, [REGISTRY_KEY], ['add', name]);
    reply = await put();
  }
  const previous = reply[2] === '' ? [] : (JSON.parse(reply[2] as string) as StoredConfig).publishTokenHashes;
  await indexPublishTokens(ctx, name, previous, stored.publishTokenHashes);
  return getQueue(ctx, name);
}

function indexPublishTokens(ctx: EngineContext, name: string, drop: string[], add: string[]) {
  const stale = drop.filter((hash) => !add.includes(hash));
  if (stale.length === 0 && add.length === 0) return;
  return runScript(ctx.redis, scripts.publishTokens, [PUBLISH_TOKENS_KEY], ['set', name, stale.length, ...stale, ...add]);
}

/** The queue a publish token (by its SHA-256) was issued for, if any. */
export async function queueOfPublishToken(ctx: EngineContext, tokenHash: string): Promise<string | null> {
  const reply = await runScript(ctx.redis, scripts.publishTokens, [PUBLISH_TOKENS_KEY], ['lookup', tokenHash]);
  return reply[1] === '' ? null : (reply[1] as string);
}

/** The stored config (publish token hashes included): what auth and CORS checks read. */
export async function getStoredConfig(ctx: EngineContext, name: string): Promise<StoredConfig> {
  const reply = await runScript(ctx.redis, scripts.queueConfig, [queueKeys(checkQueueName(name)).meta], []);
  return JSON.parse(reply[1] as string) as StoredConfig;
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
  const k = queueKeys(checkQueueName(name));
  const keys = [
    k.meta, k.jobs, k.ready, k.active, k.held, k.delayed, k.completed, k.failed,
    k.pausedGroups, k.repeats, k.repeatDue, k.tickLock, k.metrics,
  ];
  const tokens = await getStoredConfig(ctx, name).then(
    (config) => config.publishTokenHashes,
    (error: unknown) => {
      // Gone already, or a deletion under way: its tokens were unindexed then.
      if (error instanceof QueueError && error.code === 'QUEUE_NOT_FOUND') return [];
      throw error;
    },
  );
  await runScript(ctx.redis, scripts.registry, [REGISTRY_KEY], ['remove', name]);
  await indexPublishTokens(ctx, name, tokens, []);
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
