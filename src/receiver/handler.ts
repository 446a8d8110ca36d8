// createHandler: a whole endpoint from one job function. It verifies the delivery (401 if not
// genuine, 409 if a replayed copy, 413 past maxBodyBytes), parses the job's data (400, no
// retries, if it does not fit), runs the function, and answers with its result (200) or error
// (500). A job that runs asynchronously (`async: true`, or one about to outlive the
// dispatcher's wait) gets 202 instead and finishes in the background: heartbeats keep its
// lease, then the complete or fail callback reports how it ended. A function that has not
// ended after `maxDurationMs` is given up: the attempt fails and ctx.signal aborts. It takes a
// Web Request (answered with a Response) or `{ headers, body }` as Express, Fastify and Lambda
// hold a request (answered with `{ status, headers, body }`): recipes in examples/frameworks/.
import type { Delivery } from '../protocol/delivery-body';
import { leaseCalls } from './callbacks';
import { type Endpoint, type RunOptions, answerRun, endpointOf, leaseOf, runSetup, verifiedOrRefused } from './endpoint';
import type { JobContext } from './lease';
import { endOf, parseErrorText, responseOf, textResponse } from './run-end';
import { type RawMessage, createVerifier } from './verify';

export interface HandlerOptions<T> extends RunOptions {
  /** Parses the job's data, e.g. a zod schema; a throw answers 400 and fails the job without retries. */
  data?: { parse(value: unknown): T };
  /** Where trouble in the background goes (a callback that could not be sent). @default console.error */
  onError?: (error: unknown, job: Delivery<T>) => void;
}

/** The job function: gets the job and its context, returns the result (any JSON value). */
export type JobFunction<T, R = unknown> = (job: Delivery<T>, ctx: JobContext) => R | Promise<R>;

/**
 * Builds an endpoint: `(request) => Promise<Response>` for any Fetch-API host (a Worker's fetch,
 * Deno.serve, Bun.serve, a Next.js route handler), and `({ headers, body }) => Promise<{ status,
 * headers, body }>` for a framework that holds the raw body (Express, Fastify, Lambda; see
 * examples/frameworks/).
 */
export function createHandler<T = unknown, R = unknown>(fn: JobFunction<T, R>, options: HandlerOptions<T>): Endpoint {
  const { now, fetch } = runSetup(options);
  const verify = createVerifier(options);
  const report = (job: Delivery<T>) => (error: unknown) =>
    options.onError ? options.onError(error, job) : console.error(`groupq: job ${job.id} (${job.queue}):`, error);

  return endpointOf(async function handleDelivery(message: Request | RawMessage): Promise<Response> {
    const delivery = await verifiedOrRefused(verify, message);
    if (delivery instanceof Response) return delivery;
    let job: Delivery<T>;
    try {
      job = { ...delivery, data: options.data ? options.data.parse(delivery.data) : (delivery.data as T) };
    } catch (error) {
      return textResponse(400, `the job's data is not valid: ${parseErrorText(error)}`, { 'groupq-retry': 'false' });
    }
    const onError = report(job);
    const lease = leaseOf(job, leaseCalls(job, fetch), message, now, onError);
    return answerRun(lease, (signal) => fn(job, lease.context(signal)), options, {
      respond: responseOf,
      finish: (run) => lease.finish(endOf(run)),
      onError,
    });
  });
}
