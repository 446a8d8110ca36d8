// groupq/receiver: what an endpoint needs to take jobs from groupq on any Fetch-API runtime
// (Workers, Node 20, Deno, Bun): verify a delivery, or wrap a job function into a whole handler;
// and the same for outcome callbacks, on the producer's side.
export { createHandler, type HandlerOptions, type JobFunction } from './handler';
export {
  createOutcomeVerifier,
  type DeliveryVerifyOptions,
  createVerifier,
  type OutcomeVerifier,
  type RawMessage,
  verifyDelivery,
  verifyOutcome,
  type Verifier,
  type VerifyOptions,
} from './verify';
export { createOutcomeHandler, type OutcomeFunction, type OutcomeRequest } from './outcome-handler';
export { type TraceContext, traceContextOf } from './trace';
export { type SeenHook } from './replays';
export { type JobContext } from './lease';
export { CallbackError, type FetchLike } from './callbacks';
export {
  DeliveryVerificationError,
  JobCancelledError,
  LeaseLostError,
  MaxDurationError,
  NonRetryableError,
  RetryAfterError,
  type VerificationFailure,
} from './errors';
export { type Delivery, deliveryBodySchema } from '../protocol/delivery-body';
export { type OutcomeCallback, outcomeBodySchema } from '../protocol/outcome-body';
