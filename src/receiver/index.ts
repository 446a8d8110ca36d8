// groupq/receiver: what an endpoint needs to take jobs from groupq on any Fetch-API runtime
// (Workers, Node 20, Deno, Bun): verify a delivery, or wrap a job function into a whole handler.
export { createHandler, type HandlerOptions, type JobFunction } from './handler';
export { createVerifier, verifyDelivery, type Verifier, type VerifyOptions } from './verify';
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
export { type Delivery, deliveryBodySchema } from '../core/delivery-body';
