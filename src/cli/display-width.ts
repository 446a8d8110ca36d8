// How many terminal columns a string takes, so that tables line up whatever their cells hold:
// a CJK character or an emoji takes two, a combining mark, a zero-width joiner or a control
// character none. Measured per grapheme (Intl.Segmenter), as terminals draw them. Hand-written:
// the wide ranges are Unicode's East Asian Width W and F (UAX #11), which no JS regex property
// names, and the CLI ships without dependencies beyond zod. test/cli/display-width.test.ts
// checks it against the string-width package over a broad sample.

/**
 * Code points of East Asian Width W or F that are not emoji (those are \p{Emoji_Presentation}),
 * Unicode 17. A range may span unassigned code points, emoji and marks: none of them is ever
 * measured by it (see graphemeWidth).
 */
const WIDE: readonly (readonly [number, number])[] = [
  [0x1100, 0x115f], // Hangul Jamo initials
  [0x2329, 0x232a], // angle brackets
  [0x2630, 0x2637], // trigrams
  [0x268a, 0x268f], // monograms and digrams
  [0x2e80, 0x303e], // CJK radicals, Kangxi, ideographic description, CJK symbols and punctuation
  [0x3041, 0x3247], // Hiragana, Katakana, Bopomofo, Hangul compatibility jamo, Kanbun, CJK strokes, enclosed CJK
  [0x3250, 0xa4c6], // enclosed CJK, CJK compatibility, CJK extension A, CJK unified ideographs, Yi
  [0xa960, 0xa97c], // Hangul Jamo extended A
  [0xac00, 0xd7a3], // Hangul syllables
  [0xf900, 0xfad9], // CJK compatibility ideographs
  [0xfe10, 0xfe6b], // vertical forms, CJK compatibility forms, small form variants
  [0xff01, 0xff60], // fullwidth forms
  [0xffe0, 0xffe6], // fullwidth signs
  [0x16fe0, 0x1b2fb], // ideographic symbols, Tangut, Khitan, Kana supplement and extensions, Nushu
  [0x1d300, 0x1d376], // Tai Xuan Jing, counting rods
  [0x1f200, 0x1f265], // enclosed ideographic supplement
  [0x20000, 0x3fffd], // CJK extensions B and later
];

/** Not drawn: default-ignorable, control, format, nonspacing and enclosing marks, lone surrogates. */
const VISIBLE = /[^\p{Default_Ignorable_Code_Point}\p{Cc}\p{Cf}\p{Mn}\p{Me}\p{Cs}]/u;
/**
 * Drawn as emoji, two columns, by default. Not a lone regional indicator (half a flag, one
 * column); not \p{Extended_Pictographic}, which also holds ©, ™, ↔, ★ and ▶: text, one column,
 * unless U+FE0F asks for the emoji (EMOJI_BY_REQUEST).
 */
const EMOJI_PRESENTATION = /^(?![\u{1f1e6}-\u{1f1ff}])\p{Emoji_Presentation}/u;
const EMOJI_BY_REQUEST = /^(?=\p{Emoji})\p{Extended_Pictographic}\ufe0f/u;
const FLAG = /^[\u{1f1e6}-\u{1f1ff}]{2}/u;
const KEYCAP = /^[\d#*]\ufe0f?\u20e3/u;
const PICTOGRAPHS = /\p{Extended_Pictographic}/gu;
/** Drawn after the base in a column of their own (a vowel sign of Devanagari, a halfwidth voicing mark). */
const SPACING = /[\p{Mc}\uff00-\uffef]/u;
const segmenter = new Intl.Segmenter(undefined, { granularity: 'grapheme' });

function isWide(codePoint: number): boolean {
  return WIDE.some(([from, to]) => codePoint >= from && codePoint <= to);
}

/** An emoji, drawn in two columns: by default, by U+FE0F, a flag, a keycap or a ZWJ sequence. */
function isEmoji(grapheme: string): boolean {
  if (EMOJI_PRESENTATION.test(grapheme) || EMOJI_BY_REQUEST.test(grapheme) || FLAG.test(grapheme) || KEYCAP.test(grapheme)) return true;
  return grapheme.includes('\u200d') && (grapheme.match(PICTOGRAPHS)?.length ?? 0) >= 2;
}

/** Columns one grapheme takes. */
function graphemeWidth(grapheme: string): number {
  const start = grapheme.search(VISIBLE);
  if (start === -1) return 0;
  const drawn = grapheme.slice(start);
  if (isEmoji(drawn)) return 2;
  let width = 0;
  let first = true;
  for (const char of drawn) {
    // The base, then any spacing mark after it (a Hangul syllable's jamo after its initial are
    // neither: the initial's two columns hold the syllable).
    if (first || SPACING.test(char)) width += isWide(char.codePointAt(0)!) ? 2 : 1;
    first = false;
  }
  return width;
}

/** The string's width in terminal columns. Printable ASCII, the common case, is its length. */
export function displayWidth(text: string): number {
  if (/^[\x20-\x7e]*$/.test(text)) return text.length;
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
