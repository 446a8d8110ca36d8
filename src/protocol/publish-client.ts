// Who a publish token's enqueue comes from: the client whose publishRateLimit window it spends
// (docs/security.md#what-a-client-is). Only Cloudflare's edge can say: it sets CF-Connecting-IP
// to the address the connection came from, replacing whatever the client sent. Nothing else
// can: workerd in local development (`npm run dev`, `wrangler dev`, the tests) passes on a
// client's own CF-Connecting-IP, and a client's own `MF-CF-Blob` header even makes its
// `request.cf`. So the header is read only where the Worker is deployed and the request came
// through Cloudflare (it has `request.cf`); local development (GROUPQ_ALLOW_HTTP_LOOPBACK=true,
// which a deployed Worker does not set) keys every client as one, `local`, which no header moves.
import { parseV6 } from './private-address';

/** An address as Cloudflare gives it (IPv4 or IPv6); anything else is not one. */
const ADDRESS = /^[0-9A-Fa-f:.]{2,45}$/;
const V4 = /^\d{1,3}(\.\d{1,3}){3}$/;

/** What publishClient reads of a request and of its queue. */
export interface ClientSource {
  /** The CF-Connecting-IP header, if any. */
  address: string | undefined;
  /** Whether the request carries `request.cf` (Cloudflare's runtime, the edge or workerd). */
  hasCf: boolean;
  /** Local development: GROUPQ_ALLOW_HTTP_LOOPBACK=true. */
  local: boolean;
  /** The queue's publishIpv6Prefix, 48-64: the bits of an IPv6 address that name its client. */
  ipv6Prefix: number;
  /** The publish token's SHA-256, for a request that names no address. */
  tokenHash: string;
}

/** The first `bits` bits of eight 16-bit groups, as `ip6:<groups>::/<bits>`. */
function v6Prefix(groups: number[], bits: number): string {
  const kept = groups.slice(0, Math.ceil(bits / 16)).map((group, i) => {
    const spare = Math.max(0, (i + 1) * 16 - bits); // bits of this group past the prefix
    return ((group >> spare) << spare).toString(16);
  });
  return `ip6:${kept.join(':')}::/${bits}`;
}

/**
 * The client key: `local` in local development; `ip:<IPv4>` (an IPv4-mapped IPv6 address is its
 * IPv4); `ip6:<prefix>::/<bits>`, an IPv6 address by the queue's prefix; else, on the edge
 * without an address (it always sends one), `token:<SHA-256>`.
 */
export function publishClient({ address, hasCf, local, ipv6Prefix, tokenHash }: ClientSource): string {
  if (local) return 'local';
  if (!hasCf || address === undefined || !ADDRESS.test(address)) return `token:${tokenHash}`;
  if (V4.test(address)) return `ip:${address}`;
  const v6 = parseV6(address);
  if (v6 === null) return `token:${tokenHash}`;
  if (v6.slice(0, 5).every((group) => group === 0) && v6[5] === 0xffff) {
    return `ip:${v6[6]! >> 8}.${v6[6]! & 255}.${v6[7]! >> 8}.${v6[7]! & 255}`;
  }
  return v6Prefix(v6, ipv6Prefix);
}
