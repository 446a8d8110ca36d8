// What each invocation works with. Per isolate (reused across requests): the parsed settings, a
// Redis client per database of the pool and what is known of queues' placements, the signers
// (each queue's keys imported once) and what this isolate has learned of each partition's next
// timer. Per invocation: an engine context whose Redis calls count against the invocation's
// budgets, and the run context of the drains it starts; a request's routes get the engine
// context and the follow-ups of their writes (`c.var.ctx`, `c.var.followUps`, set by openScope).
import { createMiddleware } from 'hono/factory';
import { ConfigCache } from '../core/store/config-cache';
import type { RunContext } from '../core/run/dispatcher';
import { engineContext, runCalls } from '../core/engine';
import type { Log } from '../core/log';
import { Invocation } from '../core/run/invocation';
import { PartitionCounts, queueOfTag } from '../core/store/partitions';
import { Placements, poolRunner } from '../core/store/pool';
import { DueTimes } from '../core/run/due-times';
import { type FollowUps, createFollowUps } from '../core/run/follow-ups';
import type { EngineContext } from '../core/store/context';
import type { ScriptRunner } from '../core/store/scripts';
import { type Signers, createSigners } from '../core/push/signing';
import { toPublished } from '../core/events/wire';
import { runtimeOf } from './runtime';
import { type Settings, settingsOf } from './settings';

/** A drain started by a request may run this long: waitUntil lasts ~30 s after the response. */
export const REQUEST_DRAIN_MS = 25_000;

interface Isolate {
  settings: Settings;
  /** One client per database of the pool, database 0 first. */
  databases: ScriptRunner[];
  placements: Placements;
  /** What is known of queues' partition counts (src/core/engine/partitions.ts). */
  partitions: PartitionCounts;
  signers: Signers;
  due: DueTimes;
  /** Queues' configs as read a moment ago: what auth and CORS checks read. */
  configs: ConfigCache;
  /** The origin requests came in on: callback URLs for cron deliveries without GROUPQ_PUBLIC_URL (local development only). */
  lastOrigin: string | null;
}

const isolates = new WeakMap<object, Isolate>();

function isolateOf(env: Env): Isolate {
  let isolate = isolates.get(env);
  if (!isolate) {
    const settings = settingsOf(env);
    isolate = {
      settings,
      databases: settings.databases.map((database) => runtimeOf(env).connect(database)),
      placements: new Placements(settings.databases.length),
      partitions: new PartitionCounts(),
      signers: createSigners(settings.signingSecrets),
      due: new DueTimes(),
      configs: new ConfigCache(),
      lastOrigin: null,
    };
    isolates.set(env, isolate);
  }
  return isolate;
}

/**
 * Opens an invocation: its deadline for reserving, the origin for callback URLs, and its id and
 * log (what its pushes carry as groupq-request-id, and what its lines carry: docs/logs.md).
 */
export function openInvocation(
  env: Env,
  {
    deadline,
    origin,
    requestId,
    log,
    waitUntil,
  }: { deadline: number; origin: string | null; requestId: string; log: Log; waitUntil: (work: Promise<unknown>) => void },
): { settings: Settings; ctx: EngineContext; run: RunContext; due: DueTimes; configs: ConfigCache } {
  const isolate = isolateOf(env);
  const { settings } = isolate;
  if (origin) isolate.lastOrigin = origin;
  // Without GROUPQ_PUBLIC_URL only local development gets here (settingsOf refuses a deployed
  // Worker): a request's Host then names the Worker.
  const publicUrl = settings.publicUrl ?? origin ?? isolate.lastOrigin;
  if (publicUrl === null) log.warn('no_public_url', 'set GROUPQ_PUBLIC_URL: deliveries carry relative callback URLs');
  const invocation = new Invocation(deadline, settings.maxSubrequests, Date.now, settings.maxPushes);
  // Each database's calls count against the invocation's budgets. With one database the engine
  // gets its client as it is: no placement is read or written.
  const databases = isolate.databases.map((redis) => invocation.count(redis));
  const ctx = engineContext({
    redis: databases.length === 1 ? databases[0]! : poolRunner(databases, isolate.placements, settings.scriptKeyLocking),
    allowHttpLoopback: settings.allowHttpLoopback,
    keyLocking: settings.scriptKeyLocking,
    partitions: isolate.partitions,
    // Events go to their queue's hub after the response, one call per script call that had any,
    // each with its place in its partition's sequence: the hub orders them by it, so that calls
    // of several Workers (or two of this one) may arrive in any order (src/core/events/order.ts).
    onEvents: (tag, events, place) => {
      const hub = runtimeOf(env).hub(queueOfTag(tag));
      waitUntil(hub.publish(toPublished(tag, events, place)).catch((error: unknown) => log.warn('events_not_published', 'events did not reach their hub', { queue: queueOfTag(tag), error })));
    },
  });
  return {
    settings,
    ctx,
    due: isolate.due,
    configs: isolate.configs,
    run: {
      engine: runCalls(ctx),
      invocation,
      log,
      delivery: { signers: isolate.signers, publicUrl: publicUrl ?? '', now: Date.now, allowHttpLoopback: settings.allowHttpLoopback, requestId },
    },
  };
}

/** What a route reads of its request's scope. */
export interface ScopeVariables {
  settings: Settings;
  /** The engine's context: what a row's engine function is called with (src/handlers/operations.ts). */
  ctx: EngineContext;
  /** What must follow each write: drains, timers, config (src/core/run/follow-ups.ts). */
  followUps: FollowUps;
  /** Queues' configs as this isolate read them a moment ago: what auth and CORS read. */
  configs: ConfigCache;
  /** The request's id, echoed as x-request-id (set by requestLog, src/handlers/middleware/request-log.ts). */
  requestId: string;
  /** The request's log: each line carries its requestId. */
  log: Log;
}

export type AppEnv = { Bindings: Env; Variables: ScopeVariables };

/**
 * Opens the request's scope before its route runs. Opening costs no Redis command: the
 * isolate's client, signers and config cache are reused, and the invocation's context and
 * follow-ups are plain objects; Redis is reached only by what a route then calls. Work after
 * the response runs under its waitUntil.
 */
export const openScope = createMiddleware<AppEnv>(async function openScope(c, next) {
  const origin = new URL(c.req.url).origin;
  const waitUntil = (work: Promise<unknown>) => c.executionCtx.waitUntil(work);
  const { settings, ctx, run, due, configs } = openInvocation(c.env, {
    deadline: Date.now() + REQUEST_DRAIN_MS,
    origin,
    requestId: c.var.requestId,
    log: c.var.log,
    waitUntil,
  });
  c.set('settings', settings);
  c.set('ctx', ctx);
  c.set('configs', configs);
  c.set('followUps', createFollowUps({ run, due, waitUntil, configs }));
  await next();
});
