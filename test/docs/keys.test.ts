// The "Redis keys" table of docs/internals.md must list exactly the keys src/core/store/keys.ts
// builds (bee-queue's and GroupMQ's key docs drifted from their code; this test stops that here).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { KEY_CATALOGUE, DUE_KEY, METRICS_KEY, MOVES_KEY, PLACEMENT_KEY, REGISTRY_KEY, groupKey, queueKeys, rateKey, tokenRateKey } from '../../src/core/store/keys';

function docsKeyTable(): { key: string; type: string; holds: string }[] {
  const page = readFileSync('docs/internals.md', 'utf8');
  const section = page.split('\n## Redis keys\n')[1]?.split('\n## ')[0] ?? '';
  return section
    .split('\n')
    .filter((line) => line.startsWith('| `'))
    .map((line) => {
      const [key, type, holds] = line.split(' | ').map((cell) => cell.replace(/^\|\s*|\s*\|$/g, '').trim());
      return { key: key!.replace(/`/g, ''), type: type!, holds: holds! };
    });
}

describe('the key catalogue of docs/internals.md', () => {
  it('lists every key of src/core/store/keys.ts, and nothing else', () => {
    expect(docsKeyTable()).toEqual(KEY_CATALOGUE.map(({ key, type, holds }) => ({ key, type, holds })));
  });

  it('describes the names the key module builds', () => {
    const built = [
      REGISTRY_KEY,
      DUE_KEY,
      PLACEMENT_KEY,
      MOVES_KEY,
      METRICS_KEY,
      ...Object.values(queueKeys('q')).filter((k) => k !== 'gq:{q}:'),
      groupKey('q', '<group>'),
      rateKey('q', '<client>'),
      tokenRateKey('q', '<token>'),
    ];
    const catalogued = KEY_CATALOGUE.map((entry) => entry.key);
    expect(built.sort()).toEqual(catalogued.sort());
  });
});
