// Events URLs (issue 30): a job's stream route with a capability in its query string,
// `/v1/queues/{queue}/jobs/{id}/events?cap=<capability>` (src/core/events/capability.ts), so that
// a browser's EventSource, which cannot send an Authorization header, follows one job. An enqueue
// answers one to a publish token for each new job (enqueue.ts), and the admin mints one for any
// job (POST .../jobs/{id}/events-url), so a backend can hand a page a link.
//
// The capability opens that job's stream and its GET, and nothing else: it is no bearer token,
// and every other route answers 401 to a request without one. A request that sends an
// Authorization header is authorized by it alone (the admin token), whatever `cap` it carries.
//
// CORS: a request made with a capability is answered to any origin (`Access-Control-Allow-Origin:
// *`), refusals included, so that a page can read why. The capability in the URL is the whole
// credential and no cookie is ever read (and `*` keeps browsers from sending any), so an origin
// check would protect nothing: whoever holds the URL reads the same answer with curl. The queue's
// allowedOrigins say who may enqueue with its public token; a link the backend minted may go to a
// page on any origin. EventSource asks no preflight (it sends Last-Event-ID without one), and a
// fetch-based reader resumes with ?lastEventId= instead of the header, a request that needs none:
// these routes answer no OPTIONS.
import type { Context, Handler } from 'hono';
import { cors } from 'hono/cors';
import { createMiddleware } from 'hono/factory';
import * as z from 'zod';
import { getJob } from '../core/engine/reads';
import { waitForJob } from '../core/engine/wait-job';
import {
  CAPABILITY_MAX_TTL_MS, CAPABILITY_TTL_MS, type CapabilitySee, capabilityKey, checkCapability, mintCapability,
} from '../core/events/capability';
import { capabilityView } from '../core/events/redact';
import { parse } from '../protocol/parse';
import { checkAdmin } from './middleware/auth';
import { readJson } from './middleware/body';
import type { AppEnv } from './scope';

/** The query parameter that carries a capability. */
export const CAP_PARAM = 'cap';

/** Who reads a job: the admin, or the holder of a capability to that job, who sees `see`. */
export type JobReader = { kind: 'admin' } | { kind: 'capability'; see: CapabilitySee };

/** A request made with a capability: `?cap=` and no Authorization header. */
function byCapability(c: Context<AppEnv>): boolean {
  return c.req.header('authorization') === undefined && c.req.query(CAP_PARAM) !== undefined;
}

/** Hono's CORS for any origin, without credentials: a page reads the answer and its request id. */
const anyOrigin = cors({ origin: '*', exposeHeaders: ['x-request-id'] });

/**
 * CORS of the two routes a capability opens, before auth, so that refusals carry it too (an
 * expired capability's 401 says so to the page). Requests with the admin token get none, as
 * every other route.
 */
export const capabilityCors = createMiddleware<AppEnv>(async function capabilityCors(c, next) {
  if (byCapability(c)) return anyOrigin(c, next);
  await next();
});

/**
 * Who asks for job `id` of `queue` (the path's parameters as sent): the admin token when the
 * request has an Authorization header or no capability, else the capability, checked against
 * this very job. Either refusal is 401 UNAUTHORIZED; no check costs a Redis command.
 */
export async function readerOf(c: Context<AppEnv>, queue: string, id: string): Promise<JobReader> {
  const token = c.req.query(CAP_PARAM);
  if (c.req.header('authorization') !== undefined || token === undefined) {
    await checkAdmin(c);
    return { kind: 'admin' };
  }
  const key = await capabilityKey(c.var.settings.adminToken);
  const { see } = await checkCapability({ key, token, queue, id, now: Date.now() });
  return { kind: 'capability', see };
}

/**
 * The events URL of job `id` of `queue`: absolute, under GROUPQ_PUBLIC_URL or else the request's
 * origin (as deliveries' callback URLs are), with a capability that sees `see` until `expiresAt`.
 */
export async function eventsUrlOf(c: Context<AppEnv>, queue: string, id: string, see: CapabilitySee, expiresAt: number): Promise<string> {
  const key = await capabilityKey(c.var.settings.adminToken);
  const cap = await mintCapability({ key, queue, id, see, expiresAt });
  const origin = c.var.settings.publicUrl ?? new URL(c.req.url).origin;
  // The capability is base64url and a dot: nothing in it needs escaping in a query.
  return `${origin}/v1/queues/${encodeURIComponent(queue)}/jobs/${encodeURIComponent(id)}/events?${CAP_PARAM}=${cap}`;
}

/** GET of one job: the admin's whole job, or what a capability's holder sees of it (redact.ts). */
export const getJobRoute: Handler<AppEnv> = async (c) => {
  const queue = c.req.param('queue') ?? '';
  const id = c.req.param('id') ?? '';
  const reader = await readerOf(c, queue, id);
  // The capability is the request's credential, not a parameter of the read.
  const { [CAP_PARAM]: _cap, ...query } = c.req.query();
  const job = await waitForJob(c.var.ctx, { queue, id, query });
  return c.json(reader.kind === 'admin' ? job : capabilityView(job, reader.see), 200);
};

/** The admin's mint's body; every field has a default, so it may be left out. */
export const mintInputSchema = z
  .object({
    ttlMs: z
      .int()
      .min(1000)
      .max(CAPABILITY_MAX_TTL_MS)
      .default(CAPABILITY_TTL_MS)
      .describe('How long the URL opens the job, in ms: 1 s to 24 h; 15 minutes by default. A stream opened in time runs on after it.'),
    see: z
      .enum(['state', 'result'])
      .default('state')
      .describe("What its holder sees: the job's states, attempts and progress, or those and its result and error too."),
  })
  .strict();

/** The body is left out: no content-type, and no length (a body without a content-type is 415, as anywhere). */
function noBody(c: Context<AppEnv>): boolean {
  const length = c.req.header('content-length');
  return c.req.header('content-type') === undefined && (length === undefined || length === '0');
}

/** POST .../jobs/{id}/events-url (admin): an events URL of a job that exists now. */
export const mintEventsUrl: Handler<AppEnv> = async (c) => {
  const queue = c.req.param('queue') ?? '';
  const id = c.req.param('id') ?? '';
  const { ttlMs, see } = parse(mintInputSchema, noBody(c) ? {} : await readJson(c));
  // The job must exist (404 otherwise): a link to nothing would only fail later, in a browser.
  await getJob(c.var.ctx, { queue, id });
  const expiresAt = Date.now() + ttlMs;
  return c.json({ eventsUrl: await eventsUrlOf(c, queue, id, see, expiresAt), expiresAt }, 200);
};
