// W3C Trace Context (Level 1, https://www.w3.org/TR/trace-context-1/): the rules for the
// `traceparent` and `tracestate` headers a producer may send with an enqueue, which groupq keeps
// with the job and forwards on every delivery and outcome callback (docs/tracing.md). The Worker
// reads them at enqueue and the receiver reads them again on arrival: headers are not covered by
// the signature, so each side treats them as untrusted input. Plain module: no dependencies.

export const TRACEPARENT = 'traceparent';
export const TRACESTATE = 'tracestate';

/** A job's trace context as stored and forwarded; either field absent when none was given. */
export interface TraceContext {
  /** `00-<trace-id>-<parent-id>-<flags>`, 55 characters. */
  traceparent?: string;
  /** The vendors' list, at most 32 members and 512 characters. */
  tracestate?: string;
}

/** What groupq keeps of a tracestate: the spec asks for at least this much to be propagated. */
export const MAX_TRACESTATE_CHARS = 512;
const MAX_TRACESTATE_MEMBERS = 32;
/** When a tracestate must be cut, members longer than this go first (the spec's order). */
const LONG_MEMBER_CHARS = 128;

const VERSION_00 = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;
/** A later version: its first three fields as version 00 has them, then its own, after a dash. */
const LATER_VERSION = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;
const ALL_ZERO = /^0+$/;

/**
 * A traceparent header's value as groupq stores it, or undefined for one that is not valid (the
 * spec says to ignore it). Version 00 is kept exactly; a later version (not ff) is read as the
 * spec says, its first fields only, and kept as the version 00 it downgrades to (the only
 * version groupq knows, as the spec asks of a forwarder). The header has no optional whitespace.
 */
export function parseTraceparent(value: string | null | undefined): string | undefined {
  if (typeof value !== 'string') return undefined;
  const v00 = VERSION_00.exec(value);
  if (v00) return ALL_ZERO.test(v00[1]!) || ALL_ZERO.test(v00[2]!) ? undefined : value;
  const later = value.length > 55 ? LATER_VERSION.exec(value) : null;
  if (!later || later[1] === '00' || later[1] === 'ff') return undefined;
  const traceId = later[2]!;
  const parentId = later[3]!;
  if (ALL_ZERO.test(traceId) || ALL_ZERO.test(parentId)) return undefined;
  // Of a later version's flags, only the sampled bit is known; the others must be zero in 00.
  return `00-${traceId}-${parentId}-0${Number.parseInt(later[4]!, 16) & 1}`;
}

// Level 1's keys: a simple key, or a multi-tenant key `tenant@system`.
const KEY_CHAR = '[a-z0-9_\\-*/]';
const KEY = new RegExp(`^(?:[a-z]${KEY_CHAR}{0,255}|[a-z0-9]${KEY_CHAR}{0,240}@[a-z]${KEY_CHAR}{0,13})$`);
/** Printable ASCII but `,` and `=`, at most 256, not ending in a space. */
const VALUE = /^[\x20-\x2b\x2d-\x3c\x3e-\x7e]{0,255}[\x21-\x2b\x2d-\x3c\x3e-\x7e]$/;

/**
 * A tracestate header's value as groupq stores it, or undefined when there is none to keep:
 * absent, empty, or not valid (a member that is no `key=value`, a key twice, more than 32
 * members), which the spec leaves to the receiver to drop without touching the traceparent.
 * Optional whitespace and empty members are left out; a list longer than 512 characters loses
 * whole members as the spec says: those over 128 characters first, then from the end.
 */
export function parseTracestate(value: string | null | undefined): string | undefined {
  if (typeof value !== 'string') return undefined;
  const members: string[] = [];
  const keys = new Set<string>();
  for (const part of value.split(',')) {
    const member = part.replace(/^[ \t]+|[ \t]+$/g, '');
    if (member === '') continue;
    const eq = member.indexOf('=');
    if (eq < 0) return undefined;
    const key = member.slice(0, eq);
    if (!KEY.test(key) || !VALUE.test(member.slice(eq + 1)) || keys.has(key)) return undefined;
    keys.add(key);
    members.push(member);
  }
  if (members.length === 0 || members.length > MAX_TRACESTATE_MEMBERS) return undefined;
  const size = (list: string[]) => list.join(',').length;
  let kept = members;
  if (size(kept) > MAX_TRACESTATE_CHARS) kept = kept.filter((member) => member.length <= LONG_MEMBER_CHARS);
  while (size(kept) > MAX_TRACESTATE_CHARS) kept = kept.slice(0, -1);
  return kept.length > 0 ? kept.join(',') : undefined;
}

/**
 * The trace context of a message's two headers (a `get` by name: a Headers, or a lookup over
 * any other shape). A tracestate counts only with a valid traceparent: the spec forbids reading
 * one without the other.
 */
export function parseTraceContext(header: (name: string) => string | null | undefined): TraceContext {
  const traceparent = parseTraceparent(header(TRACEPARENT));
  if (traceparent === undefined) return {};
  const tracestate = parseTracestate(header(TRACESTATE));
  return tracestate === undefined ? { traceparent } : { traceparent, tracestate };
}

/** The headers that carry a stored trace context onward; none for a job that has none. */
export function traceHeaders({ traceparent, tracestate }: TraceContext): Record<string, string> {
  if (traceparent === undefined) return {};
  return tracestate === undefined ? { [TRACEPARENT]: traceparent } : { [TRACEPARENT]: traceparent, [TRACESTATE]: tracestate };
}
