// A groupq endpoint as a Cloudflare Worker. groupq pushes each job here as a signed POST;
// createHandler verifies the signature, checks the job's data with a zod schema, runs `digest`
// and answers with its result, which groupq stores as the job's result.
//   POST /        answers with the result; a job that would outlive groupq's wait (the queue's
//                 timeoutMs) gets 202 and finishes in the background through the lease callbacks
//   POST /async   always answers 202 at once and finishes in the background
// Background work is handed to ctx.waitUntil, so the Worker keeps running after the response.
import { createHandler, type Delivery, type JobContext } from 'groupq/receiver';
import { z } from 'zod';

export interface Env {
  /** The `whsec_...` secret groupq signs with. */
  GROUPQ_SIGNING_SECRET: string;
  /** The next secret while groupq's secret is being rotated (either one is accepted). */
  GROUPQ_SIGNING_SECRET_NEXT?: string;
}

/** A job's data. Anything else fails the job at once (400), without retries. */
const digestJob = z.object({
  text: z.string().max(10_000),
  /** How many times to hash: more rounds, a longer job. */
  rounds: z.number().int().min(1).max(1_000_000).default(1),
});
type DigestJob = z.infer<typeof digestJob>;

const hex = (bytes: Uint8Array) => Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');

/** Hashes the text `rounds` times with SHA-256, reporting progress every tenth of the way. */
async function digest(job: Delivery<DigestJob>, ctx: JobContext) {
  const { text, rounds } = job.data;
  let bytes = new TextEncoder().encode(text);
  const step = Math.max(1, Math.floor(rounds / 10));
  for (let round = 1; round <= rounds; round++) {
    // The lease was lost (the job timed out, or was taken away): its result would not count.
    ctx.signal.throwIfAborted();
    bytes = new Uint8Array(await crypto.subtle.digest('SHA-256', bytes));
    if (round % step === 0 && round < rounds) await ctx.progress(Math.floor((round / rounds) * 100));
  }
  return { sha256: hex(bytes), rounds };
}

export default {
  async fetch(request, env, ctx): Promise<Response> {
    if (request.method !== 'POST') return new Response('groupq endpoint: POST jobs here\n', { status: 405, headers: { allow: 'POST' } });
    const handle = createHandler(digest, {
      secret: env.GROUPQ_SIGNING_SECRET,
      nextSecret: env.GROUPQ_SIGNING_SECRET_NEXT,
      data: digestJob,
      async: new URL(request.url).pathname === '/async',
      // ctx belongs to this request, so the handler is made per request (that is cheap).
      waitUntil: (promise) => ctx.waitUntil(promise),
    });
    return handle(request);
  },
} satisfies ExportedHandler<Env>;
