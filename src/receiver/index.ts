// groupq/receiver: what an endpoint needs to take jobs from groupq on any Fetch-API runtime
// (Workers, Node 20, Deno, Bun): verify a delivery, or wrap a job function into a whole handler;
// the same for batches (a queue with `batch` set) and for outcome callbacks, on the producer's side.
export { createHandler, type HandlerOptions, type JobFunction } from './handler';
export { type BatchContext, type BatchFunction, type BatchHandlerOptions, createBatchHandler } from './batch-handler';
export {
  type BatchVerifier,
  createBatchVerifier,
  createOutcomeVerifier,
  type DeliveryVerifyOptions,
  createVerifier,
  type OutcomeVerifier,
  type RawMessage,
  verifyBatch,
  verifyDelivery,
  verifyOutcome,
  type Verifier,
  type VerifyOptions,
} from './verify';
export { createOutcomeHandler, type OutcomeFunction, type OutcomeRequest } from './outcome-handler';
export { type TraceContext, traceContextOf } from './trace';
export { type SeenHook } from './replays';
export { type JobContext } from './lease';
export { type Endpoint, type RawResponse } from './endpoint';
export { CallbackError, type FetchLike } from './callbacks';
export {
  BatchError,
  DeliveryVerificationError,
  JobCancelledError,
  LeaseLostError,
  MaxDurationError,
  NonRetryableError,
  RetryAfterError,
  type VerificationFailure,
} from './errors';
export { type Delivery, deliveryBodySchema } from '../protocol/delivery-body';
export { type Batch, type BatchAnswer, batchBodySchema } from '../protocol/batch-body';
export { type OutcomeCallback, outcomeBodySchema } from '../protocol/outcome-body';
