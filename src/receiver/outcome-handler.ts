// createOutcomeHandler: a whole endpoint for outcome callbacks (docs/delivery.md#outcome-callbacks) from
// one function. It verifies the callback (401 if not genuine, 413 past maxBodyBytes), runs the
// function with the outcome, and answers 204 once it returned, or 500 with its error's message,
// which groupq retries by its schedule. Outcomes come at least once: dedupe on `webhook-id`
// (`out_` and 32 hex digits, the same on every attempt, unique per outcome).
import type { OutcomeCallback } from '../protocol/outcome-body';
import { DeliveryVerificationError } from './errors';
import { capture, errorText, refusalStatus, textResponse } from './run-end';
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
 * Builds an endpoint for outcome callbacks: `(request) => Promise<Response>`, for any Fetch-API
 * host, like createHandler's.
 */
export function createOutcomeHandler(fn: OutcomeFunction, options: VerifyOptions): (request: Request) => Promise<Response> {
  const verify = createOutcomeVerifier(options);
  return async function handleOutcome(request: Request): Promise<Response> {
    let outcome: OutcomeCallback;
    try {
      outcome = await verify(request);
    } catch (error) {
      if (error instanceof DeliveryVerificationError) return textResponse(refusalStatus(error), error.message);
      throw error;
    }
    const { traceparent, tracestate } = traceContextOf(request);
    const run = await capture(() => fn(outcome, { webhookId: request.headers.get('webhook-id')!, traceparent, tracestate }));
    return run.ok ? new Response(null, { status: 204 }) : textResponse(500, errorText(run.error));
  };
}
