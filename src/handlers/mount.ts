// Serves an operation's row (src/handlers/operations.ts): auth by its access, its input read once
// (the path parameters, the query, and the JSON body when the row takes one), its engine function
// called with the engine's context, the follow-up the row names, and the answer with the row's
// status. A row that needs more than that brings its own handlers instead (enqueue, lease
// callbacks, the pages), and they are mounted as they are.
import type { Context, Handler, Hono, MiddlewareHandler } from 'hono';
import type { KeepGoing } from '../core/engine/bulk';
import type { FollowUp } from '../core/run/follow-ups';
import type { EngineContext } from '../core/store/context';
import type { Operation } from '../protocol/api/operation';
import { adminAuth } from './middleware/auth';
import { readJson } from './middleware/body';
import type { AppEnv } from './scope';

/**
 * What a route passes its engine function: every path parameter by its name (a route has those
 * its path names), the query, the body, and the budget of a bulk action.
 */
export interface RouteInput {
  queue: string;
  id: string;
  group: string;
  key: string;
  partition: string;
  query: Record<string, string>;
  body: unknown;
  keepGoing: KeepGoing;
}

/** A row served by its engine function. */
export interface Calls {
  call: (ctx: EngineContext, input: RouteInput) => Promise<unknown>;
  /** What must follow the write (src/core/run/follow-ups.ts); none by default. */
  then?: FollowUp;
  /** The answer made of what the call returned; what it returned by default. */
  answer?: (done: never) => unknown;
}

/** A row served by handlers of its own. */
export interface Handles {
  handle: [...MiddlewareHandler<AppEnv>[], Handler<AppEnv>];
}

export type Row = Operation & (Calls | Handles);

/** Mounts `row` on `app` at its path (OpenAPI's `{param}` is Hono's `:param`). */
export function mount(app: Hono<AppEnv>, row: Row): void {
  const path = row.path.replace(/\{(\w+)\}/g, ':$1');
  if ('handle' in row) {
    app.on(row.method.toUpperCase(), [path], ...row.handle);
    return;
  }
  // A capability's check needs the route's queue and job and shapes its answer: handlers of its own.
  if (row.access === 'capability') throw new Error(`${row.id}: a route a capability opens has handlers of its own`);
  const auth: MiddlewareHandler<AppEnv>[] = row.access === 'admin' ? [adminAuth] : [];
  app.on(row.method.toUpperCase(), [path], ...auth, (c) => serve(c, row));
}

/** One request of a row that calls its engine function: read, call, follow up, answer. */
async function serve(c: Context<AppEnv>, row: Operation & Calls): Promise<Response> {
  const { ctx, followUps } = c.var;
  const body = row.body ? await readJson(c) : undefined;
  const params = c.req.param() as Record<string, string>;
  const input = { ...params, query: c.req.query(), body, keepGoing: followUps.bulkBudget() } as RouteInput;
  const done = await followUps.follow(row.then, input, row.call(ctx, input));
  const status = Number(Object.keys(row.ok)[0]);
  if (status === 204) return c.body(null, 204);
  return c.json(row.answer ? row.answer(done as never) : done, status as 200);
}
