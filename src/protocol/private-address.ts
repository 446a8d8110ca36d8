// Whether a URL's host is one that a public service must not POST to on a stranger's say-so
// (docs/delivery.md#outcome-callbacks): an IP literal that is loopback, private, link-local,
// unique-local and the like, or a name that means this host or a private network. A callbackUrl
// comes from producers, publish tokens included; such a host would aim groupq's signed POSTs at
// the network it runs in. Hostnames are not resolved (a Worker cannot, and DNS can change after
// the check): literals are judged on the host as WHATWG URL normalizes it (`0x7f.1` and
// `2130706433` read as 127.0.0.1, IPv6 compressed and lower case), names by their suffix.

/** What a host is: loopback (allowed in local development), another internal range, or public. */
export type AddressKind = 'loopback' | 'internal' | 'public';

/** IPv4 ranges [first octets as a 32-bit number, prefix length, kind]. */
const V4_RANGES: readonly [number, number, AddressKind][] = [
  [0x7f000000, 8, 'loopback'], // 127/8
  [0x00000000, 8, 'internal'], // 0/8 "this network", 0.0.0.0 included
  [0x0a000000, 8, 'internal'], // 10/8 private
  [0x64400000, 10, 'internal'], // 100.64/10 carrier-grade NAT
  [0xa9fe0000, 16, 'internal'], // 169.254/16 link-local (cloud metadata services live here)
  [0xac100000, 12, 'internal'], // 172.16/12 private
  [0xc0000000, 24, 'internal'], // 192.0.0/24 protocol assignments
  [0xc0a80000, 16, 'internal'], // 192.168/16 private
  [0xc6120000, 15, 'internal'], // 198.18/15 benchmarking
  [0xe0000000, 3, 'internal'], // 224/4 multicast, 240/4 reserved, the broadcast address
];

function v4Kind(address: number): AddressKind {
  for (const [base, bits, kind] of V4_RANGES) {
    if ((address ^ base) >>> (32 - bits) === 0) return kind;
  }
  return 'public';
}

/** A dotted IPv4 literal as a 32-bit number, or null. */
function parseV4(host: string): number | null {
  const parts = host.split('.');
  if (parts.length !== 4 || !parts.every((part) => /^\d{1,3}$/.test(part) && Number(part) <= 255)) return null;
  return parts.reduce((sum, part) => sum * 256 + Number(part), 0);
}

/** An IPv6 literal (without brackets) as eight 16-bit groups, or null. */
export function parseV6(host: string): number[] | null {
  let text = host;
  const tail: number[] = [];
  const dotted = /^(.*:)(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const v4 = parseV4(dotted[2]!);
    if (v4 === null) return null;
    tail.push(v4 >>> 16, v4 & 0xffff);
    text = dotted[1]!.endsWith('::') ? dotted[1]! : dotted[1]!.slice(0, -1);
  }
  const halves = text.split('::');
  if (halves.length > 2) return null;
  const groups = (part: string) => (part === '' ? [] : part.split(':').map((g) => (/^[0-9a-f]{1,4}$/i.test(g) ? parseInt(g, 16) : NaN)));
  const head = groups(halves[0]!);
  const rest = halves.length === 2 ? groups(halves[1]!) : [];
  const known = head.length + rest.length + tail.length;
  if ([...head, ...rest].some(Number.isNaN) || known > 8 || (halves.length === 1 && known !== 8)) return null;
  return [...head, ...new Array<number>(8 - known).fill(0), ...rest, ...tail];
}

/** A tunnel's IPv4 end: any but a public one makes the whole address internal. */
function tunnelKind(...ends: number[]): AddressKind {
  return ends.every((end) => v4Kind(end >>> 0) === 'public') ? 'public' : 'internal';
}

function v6Kind(g: number[]): AddressKind {
  const zeroUpTo = (n: number) => g.slice(0, n).every((x) => x === 0);
  const embeddedV4 = () => v4Kind(g[6]! * 65536 + g[7]!);
  // 2002::/16 6to4 carries its IPv4 in groups 1-2; 2001:0::/32 Teredo its server's in groups 2-3
  // and its client's, inverted, in groups 6-7 (RFC 3056, RFC 4380).
  if (g[0] === 0x2002) return tunnelKind(g[1]! * 65536 + g[2]!);
  if (g[0] === 0x2001 && g[1] === 0) return tunnelKind(g[2]! * 65536 + g[3]!, ~(g[6]! * 65536 + g[7]!));
  if (zeroUpTo(7) && g[7] === 1) return 'loopback'; // ::1
  if (zeroUpTo(5) && g[5] === 0xffff) return embeddedV4(); // ::ffff:a.b.c.d, IPv4-mapped
  if (zeroUpTo(4) && g[4] === 0xffff && g[5] === 0) return embeddedV4(); // ::ffff:0:a.b.c.d, IPv4-translated
  if (zeroUpTo(6)) return g[6] === 0 && g[7]! <= 1 ? 'internal' : embeddedV4(); // ::, and ::a.b.c.d (IPv4-compatible)
  if (g[0] === 0x64 && g[1] === 0xff9b && g.slice(2, 6).every((x) => x === 0)) return embeddedV4(); // 64:ff9b::/96, NAT64
  if (g[0] === 0x64 && g[1] === 0xff9b && g[2] === 1) return 'internal'; // 64:ff9b:1::/48, local-use NAT64
  if ((g[0]! & 0xfe00) === 0xfc00) return 'internal'; // fc00::/7 unique-local
  if ((g[0]! & 0xffc0) === 0xfe80 || (g[0]! & 0xffc0) === 0xfec0) return 'internal'; // link-local, old site-local
  if ((g[0]! & 0xff00) === 0xff00) return 'internal'; // multicast
  return 'public';
}

/**
 * Names of private networks: special-use (RFC 6761, 6762 `.local`, 8375 `home.arpa`, ICANN's
 * `.internal`) and those RFC 6762 appendix G found in private use.
 */
const INTERNAL_SUFFIXES = ['local', 'internal', 'home.arpa', 'localdomain', 'intranet', 'private', 'corp', 'home', 'lan'];

/**
 * The kind of a URL's `hostname` (as `new URL()` gives it). `localhost` and `*.localhost` always
 * mean loopback; a name of one label (completed by a resolver's search domains) or under a
 * private network's suffix is internal; other names are public.
 */
export function addressKind(hostname: string): AddressKind {
  const host = hostname.toLowerCase().replace(/\.$/, '');
  if (host === 'localhost' || host.endsWith('.localhost')) return 'loopback';
  if (!host.startsWith('[') && parseV4(host) === null) {
    const internal = !host.includes('.') || INTERNAL_SUFFIXES.some((suffix) => host === suffix || host.endsWith(`.${suffix}`));
    return internal ? 'internal' : 'public';
  }
  if (host.startsWith('[') && host.endsWith(']')) {
    const groups = parseV6(host.slice(1, -1));
    return groups ? v6Kind(groups) : 'internal'; // a bracketed host URL accepted but we cannot read: refuse
  }
  const v4 = parseV4(host);
  return v4 === null ? 'public' : v4Kind(v4);
}
