// Queue administration: create/replace, read, list, delete in bounded steps, pause and resume
// the queue or one group.
import { scripts } from '../lua/scripts.generated';
import type { GroupState, QueueInfo, QueueSummary } from './api-types';
import { type StoredConfig, queueConfigSchema, toPublicConfig, toStoredConfig } from './config';
import { type EngineContext, parse } from './context';
import { QueueError, isRefusal } from './errors';
import { groupNameSchema, queueNameSchema } from './job-input';
import { dropDue, noteDue } from './due-index';
import { randomSeed } from './ids';
import { callScript } from './scripts';

export type { GroupState, QueueCounts, QueueInfo } from './api-types';

const DELETE_STEP = 200;

export function checkQueueName(name: string): string {
  return parse(queueNameSchema, name);
}

export async function putQueue(ctx: EngineContext, name: string, input: unknown): Promise<QueueInfo> {
  checkQueueName(name);
  const stored = await toStoredConfig(parse(queueConfigSchema(ctx.options), input));
  // Registered first: a registered name without a queue is skipped by GET /v1/queues, while a
  // queue missing from the list would be invisible.
  await callScript(ctx, scripts.registry, {}, ['add', name]);
  const put = () => callScript(ctx, scripts.putQueue, { queue: name }, [ctx.now(), JSON.stringify(stored), randomSeed()]);
  let reply;
  try {
    reply = await put();
  } catch (error) {
    // A deletion that was cut off still holds the name: finish it, then create.
    if (!isRefusal(error, 'QUEUE_DELETING')) throw error;
    await deleteQueue(ctx, name);
    await callScript(ctx, scripts.registry, {}, ['add', name]);
    reply = await put();
  }
  await noteDue(ctx, name, reply[3]);
  const previous = reply[2] === '' ? [] : (JSON.parse(reply[2] as string) as StoredConfig).publishTokenHashes;
  await indexPublishTokens(ctx, name, previous, stored.publishTokenHashes);
  return getQueue(ctx, name);
}

function indexPublishTokens(ctx: EngineContext, name: string, drop: string[], add: string[]) {
  const stale = drop.filter((hash) => !add.includes(hash));
  if (stale.length === 0 && add.length === 0) return;
  return callScript(ctx, scripts.publishTokens, {}, ['set', name, stale.length, ...stale, ...add]);
}

/** The queue a publish token (by its SHA-256) was issued for, if any. */
export async function queueOfPublishToken(ctx: EngineContext, tokenHash: string): Promise<string | null> {
  const reply = await callScript(ctx, scripts.publishTokens, {}, ['lookup', tokenHash]);
  return reply[1] === '' ? null : (reply[1] as string);
}

/** The stored config (publish token hashes included): what auth and CORS checks read. */
export async function getStoredConfig(ctx: EngineContext, name: string): Promise<StoredConfig> {
  const reply = await callScript(ctx, scripts.queueConfig, { queue: checkQueueName(name) }, []);
  return JSON.parse(reply[1] as string) as StoredConfig;
}

export async function getQueue(ctx: EngineContext, name: string): Promise<QueueInfo> {
  checkQueueName(name);
  const reply = await callScript(ctx, scripts.queueInfo, { queue: name }, []);
  const [, configJson, paused, waiting, delayed, active, completed, failed, groups, cancelled] = reply as [
    number, string, number, number, number, number, number, number, number, number,
  ];
  return {
    name,
    config: toPublicConfig(JSON.parse(configJson) as StoredConfig),
    paused: paused === 1,
    counts: { waiting, delayed, active, completed, failed, cancelled, groups },
  };
}

/** How many queues exist: a cheap call that proves Redis answers. */
export async function countQueues(ctx: EngineContext): Promise<number> {
  const reply = await callScript(ctx, scripts.registry, {}, ['count']);
  return reply[1] as number;
}

export async function listQueueNames(ctx: EngineContext): Promise<string[]> {
  const reply = await callScript(ctx, scripts.registry, {}, ['list']);
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
  checkQueueName(name);
  const tokens = await getStoredConfig(ctx, name).then(
    (config) => config.publishTokenHashes,
    (error: unknown) => {
      // Gone already, or a deletion under way: its tokens were unindexed then.
      if (error instanceof QueueError && error.code === 'QUEUE_NOT_FOUND') return [];
      throw error;
    },
  );
  await callScript(ctx, scripts.registry, {}, ['remove', name]);
  await indexPublishTokens(ctx, name, tokens, []);
  // Each step removes the groups the previous one named (their keys declared) and names more.
  let cursor = '0';
  let groups: string[] = [];
  for (;;) {
    const reply = await callScript(ctx, scripts.deleteQueue, { queue: name, groups }, [DELETE_STEP, cursor, ...groups]);
    if (reply[1] === 1) break;
    [cursor, groups] = [reply[2] as string, reply[3] as string[]];
  }
  await dropDue(ctx, name);
}

export async function setQueuePaused(ctx: EngineContext, name: string, paused: boolean) {
  const reply = await callScript(ctx, scripts.pauseQueue, { queue: checkQueueName(name) }, [paused ? '1' : '0', ctx.now()]);
  await noteDue(ctx, name, reply[2]);
  return { name, paused: reply[1] === 1 };
}

export async function setGroupPaused(ctx: EngineContext, name: string, group: string, paused: boolean) {
  checkQueueName(name);
  parse(groupNameSchema, group);
  const reply = await callScript(ctx, scripts.pauseGroup, { queue: name, group }, [group, paused ? '1' : '0', ctx.now()]);
  await noteDue(ctx, name, reply[2]);
  const state = reply[1] as string;
  // A paused group without jobs is still paused (its next job will wait): say so.
  return { group, state: (state === '' ? (paused ? 'paused' : 'ready') : state) as GroupState };
}
