// What each invocation works with. Per isolate (reused across requests): the parsed settings,
// the Redis client, the signer and what this isolate has learned of each queue's next timer.
// Per invocation: an engine whose Redis calls count against the invocation's budgets, and a
// dispatcher for the drains it starts; a request gets them as the service its routes call.
import type { Context } from 'hono';
import type { Dispatcher } from '../core/dispatcher';
import { createEngine } from '../core/engine';
import { Invocation } from '../core/invocation';
import { createRedis } from '../core/redis';
import { DueTimes } from '../core/runner';
import { type Service, createService } from '../core/service';
import { type Signer, createSigner } from '../core/signing';
import { type Settings, settingsOf } from './settings';

/** A drain started by a request may run this long: waitUntil lasts ~30 s after the response. */
export const REQUEST_DRAIN_MS = 25_000;

interface Isolate {
  settings: Settings;
  redis: ReturnType<typeof createRedis>;
  signer: Signer;
  due: DueTimes;
  /** The origin requests came in on: callback URLs for cron deliveries without GROUPQ_PUBLIC_URL. */
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
      signer: createSigner(settings.signingSecrets),
      due: new DueTimes(),
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
): { settings: Settings; dispatcher: Dispatcher; due: DueTimes } {
  const isolate = isolateOf(env);
  const { settings } = isolate;
  if (origin) isolate.lastOrigin = origin;
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
    dispatcher: { engine, invocation, delivery: { signer: isolate.signer, publicUrl: publicUrl ?? '', now: Date.now } },
  };
}

export interface Scope {
  settings: Settings;
  /** Every operation a route calls; writes start their own follow-ups (src/core/service.ts). */
  service: Service;
}

export type AppEnv = { Bindings: Env; Variables: { scope: Scope } };

/** The request's scope, opened on first use; work after the response runs under its waitUntil. */
export function scopeOf(c: Context<AppEnv>): Scope {
  let scope = c.get('scope') as Scope | undefined;
  if (!scope) {
    const origin = new URL(c.req.url).origin;
    const { settings, dispatcher, due } = openInvocation(c.env, { deadline: Date.now() + REQUEST_DRAIN_MS, origin });
    const waitUntil = (work: Promise<unknown>) => c.executionCtx.waitUntil(work);
    scope = { settings, service: createService({ dispatcher, due, waitUntil }) };
    c.set('scope', scope);
  }
  return scope;
}
