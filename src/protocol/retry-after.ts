// `Retry-After` (RFC 9110): delta seconds or an HTTP date. A plain module: the Worker reads it
// from endpoints' answers, the client from groupq's 503s.

/** `Retry-After` as milliseconds from `now` (never negative); undefined when absent or unreadable. */
export function parseRetryAfter(header: string | null, now: number): number | undefined {
  if (header === null || header.trim() === '') return undefined;
  const value = header.trim();
  const ms = /^\d+$/.test(value) ? Number(value) * 1000 : Date.parse(value) - now;
  if (Number.isNaN(ms)) return undefined;
  return Math.max(0, ms);
}
