// Batches as groupq sends them (docs/batches.md), for the receiver's batch tests: a body of n jobs
// of one group, each a single delivery's body with its own lease token and callback URLs, signed
// with the official `standardwebhooks` package under a `bat_` webhook-id; and a real loopback
// HTTP server standing in for groupq's callback routes. It records every callback and answers as
// groupq does: a heartbeat through a job not yet ended renews the batch's lease, complete and
// fail end the jobs in group order only (409 OUT_OF_ORDER otherwise), and a job once ended holds
// no lease (409 LEASE_LOST).
import { Buffer } from 'node:buffer';
import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { serve } from './support';

export const SECRET = `whsec_${Buffer.from('batches-signed-by-the-official-1').toString('base64')}`;
export const OTHER_SECRET = `whsec_${Buffer.from('another-secret-nobody-configured').toString('base64')}`;

/** A webhook-id as groupq makes them: the kind's prefix and 32 lowercase hex digits. */
export const webhookId = (prefix: 'msg_' | 'bat_' | 'out_') => `${prefix}${randomBytes(16).toString('hex')}`;

export interface BatchShape {
  /** Where the jobs' callback URLs point. @default https://groupq.example */
  origin?: string;
  /** The lease's length from now. @default 60 s: long enough that the handler answers synchronously */
  leaseMs?: number;
  /** Job i's data. @default { n: i } */
  data?: (index: number) => unknown;
}

/** The body of a batch of `size` jobs of group `user:42` in queue `emails`, as groupq builds it. */
export function batchBody(size: number, shape: BatchShape = {}) {
  const id = webhookId('bat_');
  const origin = shape.origin ?? 'https://groupq.example';
  const expiresAt = Date.now() + (shape.leaseMs ?? 60_000);
  const jobs = Array.from({ length: size }, (_, index) => {
    const url = (kind: string) => `${origin}/v1/queues/emails/jobs/job-${index}/${kind}`;
    return {
      id: `job-${index}`,
      queue: 'emails',
      group: 'user:42',
      data: shape.data ? shape.data(index) : { n: index },
      attempt: 1,
      maxAttempts: 3,
      orderMs: 1_764_000_000_000 + index,
      createdAt: 1_764_000_000_000,
      // Each job's own fencing token; one deadline for the whole batch.
      lease: { token: `lease-${index}-${randomBytes(4).toString('hex')}`, expiresAt },
      callbacks: { heartbeat: url('heartbeat'), complete: url('complete'), fail: url('fail'), progress: url('progress') },
    };
  });
  return { id, queue: 'emails', group: 'user:42', jobs };
}

export interface Signed {
  headers: Record<string, string>;
  body: string;
}

/** `body` as the official package signs it under `id` (at `at`, default now): the three webhook headers and the body. */
export function signedText(id: string, body: string, options: { secret?: string; at?: Date } = {}): Signed {
  const at = options.at ?? new Date();
  const signature = new Webhook(options.secret ?? SECRET).sign(id, at, body);
  return { body, headers: { 'webhook-id': id, 'webhook-timestamp': String(Math.floor(at.getTime() / 1000)), 'webhook-signature': signature } };
}

/** `payload` as JSON, signed as signedText signs it. */
export const signed = (id: string, payload: unknown, options: { secret?: string; at?: Date } = {}) => signedText(id, JSON.stringify(payload), options);

/**
 * A single job's delivery (`msg_`), signed: job `id` of `queue` (group `group`), attempt 1 of 3,
 * its lease 60 s long, its callbacks under `origin` (a callback stand-in's, or a made-up host).
 */
export function signedDelivery(data: unknown, job: { id: string; queue: string; group: string; origin?: string }): Signed {
  const base = `${job.origin ?? 'https://groupq.example'}/v1/queues/${job.queue}/jobs/${job.id}/`;
  return signed(webhookId('msg_'), {
    id: job.id,
    queue: job.queue,
    group: job.group,
    data,
    attempt: 1,
    maxAttempts: 3,
    orderMs: Date.now(),
    createdAt: Date.now(),
    lease: { token: '0123456789abcdef', expiresAt: Date.now() + 60_000 },
    callbacks: { heartbeat: `${base}heartbeat`, complete: `${base}complete`, fail: `${base}fail`, progress: `${base}progress` },
  });
}

/** A batch body signed under its own id, as groupq sends it. */
export const signedBatch = (batch: ReturnType<typeof batchBody>, options: { secret?: string; at?: Date } = {}) => signed(batch.id, batch, options);

/** The POST of a signed message to an endpoint. */
export const post = (message: Signed) => new Request('https://endpoint.example/jobs', { method: 'POST', headers: message.headers, body: message.body });

/** One callback as the stand-in received it. */
export interface Callback {
  /** The job's index in the batch (its id is `job-<index>`). */
  index: number;
  kind: string;
  body: Record<string, unknown>;
  status: number;
}

export interface CallbackServer {
  origin: string;
  calls: Callback[];
  close(): Promise<void>;
}

const refusal = (status: number, code: string, message: string) => Response.json({ error: { code, message } }, { status });

/**
 * The stand-in for groupq's callback routes. `delayMs` holds each complete and fail that long
 * before answering (so heartbeats fall between them); `refuse` may answer a callback instead.
 */
export async function callbackServer(options: { delayMs?: number; refuse?: (call: Omit<Callback, 'status'>) => Response | undefined } = {}): Promise<CallbackServer> {
  const calls: Callback[] = [];
  /** The jobs ended so far, from the first: the next one to end is this index. */
  let ended = 0;
  const answer = async (call: Omit<Callback, 'status'>): Promise<Response> => {
    const refused = options.refuse?.(call);
    if (refused) return refused;
    if (call.index < ended) return refusal(409, 'LEASE_LOST', `job-${call.index} has ended: its lease is gone`);
    if (call.kind === 'heartbeat') return Response.json({ expiresAt: Date.now() + Number(call.body.extendMs ?? 1_000) });
    if (call.kind === 'progress') return Response.json({});
    if (call.index !== ended) return refusal(409, 'OUT_OF_ORDER', `job-${call.index} ended before job-${ended}`);
    await new Promise((resolve) => setTimeout(resolve, options.delayMs ?? 0));
    ended = call.kind === 'complete' ? ended + 1 : Number.POSITIVE_INFINITY;
    return Response.json({ state: call.kind === 'complete' ? 'completed' : 'waiting' });
  };
  const server = await serve(async (request) => {
    const [, , , , , job, kind] = new URL(request.url).pathname.split('/');
    const call = { index: Number(job!.slice('job-'.length)), kind: kind!, body: (await request.json()) as Record<string, unknown> };
    const response = await answer(call);
    calls.push({ ...call, status: response.status });
    return response;
  });
  return { origin: new URL(server.url).origin, calls, close: () => server.close() };
}

/** Resolves once `done()` holds, checking every 20 ms; fails after `timeoutMs` naming `what`. */
export async function poll(done: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
