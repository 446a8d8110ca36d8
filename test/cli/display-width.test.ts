// The CLI's column widths (src/cli/display-width.ts) against the string-width package as an
// oracle, over a broad sample: every assigned code point of the blocks a table cell is likely to
// hold (ASCII, Latin-1, Greek, Cyrillic, combining marks, arrows, box drawing, shapes, symbols,
// dingbats, CJK, Hangul, fullwidth forms, emoji), then graphemes of several code points (ZWJ
// sequences, flags, keycaps, skin tones, marks on a base, decomposed Hangul) and mixed text.
// ©, ™, ↔, ★ and ▶ take one column, as terminals draw them, two only with U+FE0F.
import stringWidth from 'string-width';
import { describe, expect, test } from 'vitest';
import { displayWidth, sliceToWidth } from '../../src/cli/display-width';
import { table } from '../../src/cli/table';

/** Code points from..to, each a one-character string; unassigned ones left out. */
function block(from: number, to: number): string[] {
  const chars: string[] = [];
  for (let cp = from; cp <= to; cp++) {
    const char = String.fromCodePoint(cp);
    if (!/\p{Cn}/u.test(char)) chars.push(char);
  }
  return chars;
}

const BLOCKS: Record<string, [number, number]> = {
  'C0 controls and ASCII': [0x00, 0x7f],
  'C1 controls and Latin-1': [0x80, 0xff],
  'Latin Extended-A': [0x100, 0x17f],
  'combining diacritical marks': [0x300, 0x36f],
  'Greek and Cyrillic': [0x370, 0x4ff],
  Devanagari: [0x900, 0x97f],
  'Hangul Jamo': [0x1100, 0x11ff],
  'general punctuation (ZWJ, ZWSP, word joiner)': [0x2000, 0x206f],
  'letterlike symbols (™)': [0x2100, 0x214f],
  'arrows (↔)': [0x2190, 0x21ff],
  'miscellaneous technical': [0x2300, 0x23ff],
  'box drawing, block elements, geometric shapes (▶)': [0x2500, 0x25ff],
  'miscellaneous symbols (★)': [0x2600, 0x26ff],
  dingbats: [0x2700, 0x27bf],
  'CJK symbols, Hiragana, Katakana': [0x3000, 0x30ff],
  'CJK unified ideographs (a start)': [0x4e00, 0x4fff],
  'Hangul syllables (a start)': [0xac00, 0xadff],
  'variation selectors, CJK compatibility forms': [0xfe00, 0xfe6f],
  'halfwidth and fullwidth forms': [0xff00, 0xffef],
  'regional indicators, enclosed ideographic supplement': [0x1f1e6, 0x1f2ff],
  'emoji: pictographs, emoticons, transport': [0x1f300, 0x1f6ff],
  'emoji: supplemental symbols and pictographs': [0x1f900, 0x1faff],
  'CJK extension B (a start)': [0x20000, 0x200ff],
};

const SEQUENCES = [
  // The five the CLI used to count as two, as text, then asking for the emoji or the text.
  '©', '™', '↔', '★', '▶', '©\ufe0f', '™\ufe0f', '↔\ufe0f', '▶\ufe0f', '★\ufe0f', '▶\ufe0e', '⌚\ufe0e', '❤', '❤\ufe0f',
  // ZWJ sequences, skin tones, flags, tags, keycaps.
  '👨\u200d👩\u200d👧\u200d👦', '👩🏽\u200d💻', '🏳\ufe0f\u200d🌈', '❤\ufe0f\u200d🔥', '🧑\u200d🤝\u200d🧑', '🐕\u200d🦺', '👁\u200d🗨',
  '👍🏽', '🏽', '🇩🇪', '🇯🇵', '🇩', '🏴\u{e0067}\u{e0062}\u{e0073}\u{e0063}\u{e0074}\u{e007f}', '1\ufe0f\u20e3', '#\u20e3', '1\ufe0f',
  // Marks on a base, decomposed Hangul, halfwidth voicing marks, zero-width characters.
  'e\u0301', 'a\u0308\u0323', 'कि', 'क्षि', 'กำ', '\u1112\u1161\u11ab', '\u1100\u1161', 'ｶﾞ', 'ﾊﾟ', '\u200b', '\u200d', '\ufeff', '\u2060', '\u00ad',
  // Mixed text, as cells hold it.
  'user:42 ★ 名前 👍🏽', '┌──┬──┐ ▶ play', 'café ↔ 東京 © 2026 ™', 'Ｆｕｌｌ width', '한국어 텍스트', '👨\u200d👩\u200d👧 family: 3', 'naïve — “quoted” …',
];

describe('displayWidth agrees with string-width', () => {
  test.each(Object.entries(BLOCKS))('every code point of %s', (_name, [from, to]) => {
    const mismatches = block(from, to)
      .filter((char) => displayWidth(char) !== stringWidth(char))
      .map((char) => `U+${char.codePointAt(0)!.toString(16).toUpperCase()} ${JSON.stringify(char)}: ${displayWidth(char)}, string-width ${stringWidth(char)}`);
    expect(mismatches).toEqual([]);
  });

  test('sequences of several code points, and mixed text', () => {
    const widths = SEQUENCES.map((text) => [text, displayWidth(text)]);
    expect(widths).toEqual(SEQUENCES.map((text) => [text, stringWidth(text)]));
  });

  test('©, ™, ↔, ★ and ▶ take one column each; asked for as emoji (U+FE0F), two', () => {
    expect(['©', '™', '↔', '★', '▶'].map(displayWidth)).toEqual([1, 1, 1, 1, 1]);
    expect(['©\ufe0f', '™\ufe0f', '↔\ufe0f', '▶\ufe0f'].map(displayWidth)).toEqual([2, 2, 2, 2]);
  });
});

describe('what the CLI builds on it', () => {
  test('sliceToWidth cuts between graphemes and never past the columns', () => {
    for (const text of SEQUENCES) {
      for (let columns = 0; columns <= stringWidth(text) + 1; columns++) {
        const head = sliceToWidth(text, columns);
        expect(text.startsWith(head)).toBe(true);
        expect(stringWidth(head)).toBeLessThanOrEqual(columns);
      }
    }
    expect(sliceToWidth('★▶名', 3)).toBe('★▶');
    expect(sliceToWidth('👨\u200d👩\u200d👧x', 1)).toBe('');
  });

  test("a table's columns start at the same terminal column on every row", () => {
    const cells = ['user:42 plain', '★ starred', '▶ play', '© 2026', 'a™', '↔', '名前', '👍🏽', 'e\u0301', '┌─┐'];
    const lines = table([{ header: 'GROUP' }, { header: 'N' }], cells.map((cell, i) => [cell, String(i)]));
    const starts = lines.map((line) => stringWidth(line.slice(0, line.lastIndexOf('  ') + 2)));
    expect(new Set(starts).size).toBe(1);
  });
});
