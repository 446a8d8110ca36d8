// What each invocation works with. Per isolate (reused across requests): the parsed settings,
// the Redis client, the signers (each queue's keys imported once) and what this isolate has learned of each queue's next timer.
// Per invocation: an engine whose Redis calls count against the invocation's budgets, and a
// dispatcher for the drains it starts; a request gets them as the service its routes call, its
// config reads served from the isolate's ConfigCache.
import type { Context } from 'hono';
import { ConfigCache } from '../core/store/config-cache';
import type { Dispatcher } from '../core/run/dispatcher';
import { createEngine } from '../core/engine';
import { Invocation } from '../core/run/invocation';
import { ScriptRefusal } from '../core/store/refusals';
import { createRedis } from '../core/store/redis';
import { DueTimes } from '../core/run/runner';
import { type Service, createService } from '../core/run/service';
import { type Signers, createSigners } from '../core/push/signing';
import { type Settings, settingsOf } from './settings';

/** A drain started by a request may run this long: waitUntil lasts ~30 s after the response. */
export const REQUEST_DRAIN_MS = 25_000;

interface Isolate {
  settings: Settings;
  redis: ReturnType<typeof createRedis>;
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
      redis: createRedis(settings.redis),
      signers: createSigners(settings.signingSecrets),
      due: new DueTimes(),
      configs: new ConfigCache(),
      lastOrigin: null,
    };
    isolates.set(env, isolate);
  }
  return isolate;
}

/** Opens an invocation: its deadline for reserving, and the origin for callback URLs. */
export function openInvocation(
  env: Env,
  { deadline, origin }: { deadline: number; origin: string | null },
): { settings: Settings; dispatcher: Dispatcher; due: DueTimes; configs: ConfigCache } {
  const isolate = isolateOf(env);
  const { settings } = isolate;
  if (origin) isolate.lastOrigin = origin;
  // Without GROUPQ_PUBLIC_URL only local development gets here (settingsOf refuses a deployed
  // Worker): a request's Host then names the Worker.
  const publicUrl = settings.publicUrl ?? origin ?? isolate.lastOrigin;
  if (publicUrl === null) console.warn('groupq: set GROUPQ_PUBLIC_URL: deliveries carry relative callback URLs');
  const invocation = new Invocation(deadline, settings.maxSubrequests);
  const engine = createEngine({
    redis: invocation.count(isolate.redis),
    allowHttpLoopback: settings.allowHttpLoopback,
    keyLocking: settings.scriptKeyLocking,
  });
  return {
    settings,
    due: isolate.due,
    configs: isolate.configs,
    dispatcher: { engine, invocation, delivery: { signers: isolate.signers, publicUrl: publicUrl ?? '', now: Date.now, allowHttpLoopback: settings.allowHttpLoopback } },
  };
}

export interface Scope {
  settings: Settings;
  /** Every operation a route calls; writes start their own follow-ups (src/core/run/service.ts). */
  service: Service;
}

export type AppEnv = { Bindings: Env; Variables: { scope: Scope } };

/** The request's scope, opened on first use; work after the response runs under its waitUntil. */
export function scopeOf(c: Context<AppEnv>): Scope {
  let scope = c.get('scope') as Scope | undefined;
  if (!scope) {
    const origin = new URL(c.req.url).origin;
    const { settings, dispatcher, due, configs } = openInvocation(c.env, { deadline: Date.now() + REQUEST_DRAIN_MS, origin });
    const waitUntil = (work: Promise<unknown>) => c.executionCtx.waitUntil(work);
    scope = { settings, service: withConfigCache(createService({ dispatcher, due, waitUntil }), configs) };
    c.set('scope', scope);
  }
  return scope;
}

/**
 * The service, its config reads served from the isolate's cache (a missing queue too), and its
 * config writes forgetting the cached config once they end, so they take effect at once here.
 */
function withConfigCache(service: Service, configs: ConfigCache): Service {
  const changing =
    <A extends unknown[], R>(op: (queue: string, ...rest: A) => Promise<R>) =>
    async (queue: string, ...rest: A): Promise<R> => {
      try {
        return await op(queue, ...rest);
      } finally {
        configs.forget(queue);
      }
    };
  return {
    ...service,
    async getStoredConfig(queue: string) {
      const config = await configs.get(queue, () => service.getStoredConfig(queue));
      if (config === null) throw new ScriptRefusal('QUEUE_NOT_FOUND');
      return config;
    },
    putQueue: changing(service.putQueue),
    deleteQueue: changing(service.deleteQueue),
  };
}
