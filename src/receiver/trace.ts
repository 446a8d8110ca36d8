// The W3C trace context a delivery or an outcome callback carries (docs/tracing.md): the
// producer's `traceparent` and `tracestate`, sent on unchanged, for the endpoint to continue its
// trace. Headers are not signed: they are checked again here, by the rules the Worker stored
// them by, and one that does not pass is absent.
import { type TraceContext, parseTraceContext } from '../protocol/trace-context';
import { type RawMessage, headerOf } from './verify';

export type { TraceContext } from '../protocol/trace-context';

/**
 * The trace context of a delivery or outcome callback (a Web `Request` or a RawMessage): each
 * field undefined when absent or not valid W3C Trace Context. For endpoints that verify with
 * verifyDelivery or verifyOutcome themselves; createHandler's ctx has it already.
 */
export function traceContextOf(message: Request | RawMessage): TraceContext {
  return parseTraceContext((name) => headerOf(message, name));
}
