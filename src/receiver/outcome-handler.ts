// createOutcomeHandler: a whole endpoint for outcome callbacks (docs/delivery.md#outcome-callbacks) from
// one function. It verifies the callback (401 if not genuine, 413 past maxBodyBytes), runs the
// function with the outcome, and answers 204 once it returned, or 500 with its error's message,
// which groupq retries by its schedule. Outcomes come at least once: dedupe on `webhook-id`
// (`out_` and 32 hex digits, the same on every attempt, unique per outcome). Like createHandler
// it takes a Web Request (answered with a Response) or `{ headers, body }` as Express, Fastify and
// Lambda hold a request (answered with `{ status, headers, body }`).
import type { OutcomeCallback } from '../protocol/outcome-body';
import { type Endpoint, endpointOf, verifiedOrRefused } from './endpoint';
import { type RawMessage, headerOf } from './message';
import { capture, errorText, textResponse } from './run-end';
import { type TraceContext, traceContextOf } from './trace';
import { type VerifyOptions, createOutcomeVerifier } from './verify';

/**
 * The function that takes a job's outcome; a throw (or a rejection) asks groupq to send it again.
 * `request`: the callback's webhook-id, and the job's trace context (docs/tracing.md), each field
 * undefined when the producer sent none.
 */
export type OutcomeFunction = (outcome: OutcomeCallback, request: OutcomeRequest) => unknown;

/** What createOutcomeHandler tells its function of the callback besides the outcome. */
export interface OutcomeRequest extends TraceContext {
  webhookId: string;
}

/**
 * Builds an endpoint for outcome callbacks, as createHandler's: `(request) => Promise<Response>`
 * for any Fetch-API host, and `({ headers, body }) => Promise<{ status, headers, body }>` for a
 * framework that holds the raw body (examples/frameworks/express.ts).
 */
export function createOutcomeHandler(fn: OutcomeFunction, options: VerifyOptions): Endpoint {
  const verify = createOutcomeVerifier(options);
  return endpointOf(async function handleOutcome(message: Request | RawMessage): Promise<Response> {
    // An outcome verifier has no replay check, so the refusals are 401 and 413 alone.
    const outcome = await verifiedOrRefused(verify, message);
    if (outcome instanceof Response) return outcome;
    const { traceparent, tracestate } = traceContextOf(message);
    // The verifier checked webhook-id (signed, `out_`): it is there.
    const webhookId = headerOf(message, 'webhook-id')!;
    const run = await capture(() => fn(outcome, { webhookId, traceparent, tracestate }));
    return run.ok ? new Response(null, { status: 204 }) : textResponse(500, errorText(run.error));
  });
}
