// The ids groupq makes (src/protocol/ids.ts randomId: the Worker's job ids, a partitioned queue's
// newJobId, the client's minted ids): 16 URL-safe characters, never led by '-', which a command
// line would read as a flag (`groupq job orders -lxi…`), with the other 63 first characters
// all in use, and no two alike.
import { describe, expect, test } from 'vitest';
import { newJobId } from '../../src/core/engine/partitions';
import { randomId } from '../../src/protocol/ids';

/** Enough ids that, were 1 in 64 led by '-' as plain base64url is, some 600 would be. */
const MANY = 40_000;

describe('randomId', () => {
  test("16 URL-safe characters, never led by '-', every other first character seen, none repeated", () => {
    const ids = Array.from({ length: MANY }, () => randomId());
    for (const id of ids) expect(id).toMatch(/^[A-Za-z0-9_][A-Za-z0-9_-]{15}$/);
    expect(new Set(ids).size).toBe(MANY);
    const firsts = new Set(ids.map((id) => id[0]));
    expect(firsts.has('-')).toBe(false);
    expect(firsts.size).toBe(63); // 40,000 draws of 63: missing any has odds below 1 in 10^276
    // '-' may stand later in an id, as base64url has it: the id keeps its 96 bits.
    expect(ids.some((id) => id.includes('-'))).toBe(true);
  });

  test("a partitioned queue's job ids (newJobId) are never led by '-' either", () => {
    for (let i = 0; i < 5_000; i++) expect(newJobId(`user:${i}`, 8)[0]).not.toBe('-');
  });
});
