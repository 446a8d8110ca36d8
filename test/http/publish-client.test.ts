// What a client is (docs/security.md#what-a-client-is), as publishClient derives it from a
// request: the edge's CF-Connecting-IP, an IPv6 address cut to the queue's prefix (any length
// from 48 to 64, not only whole groups), and nothing a request says in local development. The
// HTTP suite (publish-limits.test.ts) checks the same through the Worker in workerd.
import { describe, expect, it } from 'vitest';
import { publishClient } from '../../src/protocol/publish-client';

const edge = { hasCf: true, local: false, ipv6Prefix: 56, tokenHash: 'abc' };

describe('publishClient', () => {
  it('IPv4 by address; an IPv4-mapped IPv6 address as its IPv4', () => {
    expect(publishClient({ ...edge, address: '203.0.113.7' })).toBe('ip:203.0.113.7');
    expect(publishClient({ ...edge, address: '::ffff:203.0.113.7' })).toBe('ip:203.0.113.7');
    expect(publishClient({ ...edge, address: '::ffff:cb00:7107' })).toBe('ip:203.0.113.7');
  });

  it('IPv6 by its first publishIpv6Prefix bits, whole groups or not', () => {
    const at = (address: string, ipv6Prefix: number) => publishClient({ ...edge, address, ipv6Prefix });
    expect(at('2001:db8:0:1ff:1:2:3:4', 64)).toBe('ip6:2001:db8:0:1ff::/64');
    expect(at('2001:db8:0:1ff:1:2:3:4', 56)).toBe('ip6:2001:db8:0:100::/56');
    expect(at('2001:db8:0:1ff:1:2:3:4', 60)).toBe('ip6:2001:db8:0:1f0::/60');
    expect(at('2001:db8:abcd:1ff::1', 50)).toBe('ip6:2001:db8:abcd:0::/50');
    expect(at('2001:db8:ffff:c1ff::1', 50)).toBe('ip6:2001:db8:ffff:c000::/50');
    expect(at('2001:db8:abcd:1ff::1', 48)).toBe('ip6:2001:db8:abcd::/48');
    expect(at('2001:DB8::1', 56)).toBe(at('2001:db8:0:0::2', 56));
  });

  it('without an address, or one that is none, the token', () => {
    expect(publishClient({ ...edge, address: undefined })).toBe('token:abc');
    expect(publishClient({ ...edge, address: 'not-an-address' })).toBe('token:abc');
    expect(publishClient({ ...edge, address: '1:2:3' })).toBe('token:abc');
  });

  it('never from the header off the edge: local development is one client; no request.cf, the token', () => {
    for (const address of ['203.0.113.7', '2001:db8::1', undefined]) {
      expect(publishClient({ ...edge, local: true, address })).toBe('local');
      expect(publishClient({ ...edge, hasCf: false, address })).toBe('token:abc');
    }
  });
});
