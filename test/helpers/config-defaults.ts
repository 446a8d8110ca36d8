// The README's queue defaults (HTTP API, Queues) as GET shows them (publish tokens as a count), written out by hand:
// the engine and HTTP suites check the code against this, not against the code's own schema.
export const CONFIG_DEFAULTS = {
  concurrency: 10,
  timeoutMs: 30_000,
  maxAttempts: 3,
  backoff: { type: 'exponential', delayMs: 1000, maxDelayMs: 3_600_000, jitter: true },
  orderingWindowMs: 0,
  keepCompleted: 0,
  keepFailed: 1000,
  groupConcurrency: 1,
  rateLimit: null,
  groupRateLimit: null,
  dedupWindowMs: 300_000,
  backpressure: 'job',
  maxPayloadBytes: 262_144,
  allowedOrigins: [],
  publishTokens: 0,
};
