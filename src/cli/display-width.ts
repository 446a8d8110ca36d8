// How many terminal columns a string takes, so that tables line up whatever their cells hold:
// a CJK character or an emoji takes two, a combining mark or a zero-width joiner none. Measured
// per grapheme (Intl.Segmenter), as terminals draw them. Hand-written: the wide ranges are
// Unicode's East Asian Width W and F (UAX #11), which no JS regex property names, and the CLI
// ships without dependencies beyond zod.

/** Code points of East Asian Width W or F: the blocks that hold them. */
const WIDE: readonly (readonly [number, number])[] = [
  [0x1100, 0x115f], // Hangul Jamo initials
  [0x2e80, 0x303e], // CJK radicals, Kangxi, CJK symbols and punctuation
  [0x3041, 0x33ff], // Hiragana, Katakana, Bopomofo, Hangul compatibility, CJK compatibility
  [0x3400, 0x4dbf], // CJK extension A
  [0x4e00, 0x9fff], // CJK unified ideographs
  [0xa000, 0xa4cf], // Yi
  [0xac00, 0xd7a3], // Hangul syllables
  [0xf900, 0xfaff], // CJK compatibility ideographs
  [0xfe30, 0xfe4f], // CJK compatibility forms
  [0xff00, 0xff60], // fullwidth forms
  [0xffe0, 0xffe6], // fullwidth signs
  [0x20000, 0x3fffd], // CJK extensions B and later
];

const EMOJI = /\p{Extended_Pictographic}/u;
const ZERO_WIDTH = /^[\p{Mn}\p{Me}\p{Cf}]+$/u;
const segmenter = new Intl.Segmenter(undefined, { granularity: 'grapheme' });

function isWide(codePoint: number): boolean {
  return WIDE.some(([from, to]) => codePoint >= from && codePoint <= to);
}

/** Columns one grapheme takes: 0, 1 or 2. */
function graphemeWidth(grapheme: string): number {
  if (ZERO_WIDTH.test(grapheme)) return 0;
  const first = grapheme.codePointAt(0)!;
  if (isWide(first) || EMOJI.test(grapheme)) return 2;
  return 1;
}

/** The string's width in terminal columns. ASCII, the common case, is its length. */
export function displayWidth(text: string): number {
  // eslint-disable-next-line no-control-regex
  if (/^[\x00-\x7f]*$/.test(text)) return text.length;
  let width = 0;
  for (const { segment } of segmenter.segment(text)) width += graphemeWidth(segment);
  return width;
}

/** The longest start of `text` that fits in `columns`, cut between graphemes. */
export function sliceToWidth(text: string, columns: number): string {
  let width = 0;
  let end = 0;
  for (const { segment, index } of segmenter.segment(text)) {
    width += graphemeWidth(segment);
    if (width > columns) return text.slice(0, index);
    end = index + segment.length;
  }
  return text.slice(0, end);
}
