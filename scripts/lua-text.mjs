// Lua source text, read as Lua's lexer reads it (code, strings, comments), for scripts/build-lua.mjs:
// what its checks read (code only) and what the bundle holds (comments and unneeded spaces out,
// line for line).

const fail = (file, message) => {
  throw new Error(`${file}: ${message}`);
};


const LONG_BRACKET = /\[(=*)\[/y;

/** `text` cut into code, strings (short and long, as written) and comments. */
function piecesOf(text, file) {
  const pieces = [];
  let start = 0;
  const cut = (kind, end) => {
    if (end > start) pieces.push({ kind, text: text.slice(start, end) });
    start = end;
  };
  const longEnd = (at) => {
    LONG_BRACKET.lastIndex = at;
    const open = LONG_BRACKET.exec(text);
    if (!open) return -1;
    const close = text.indexOf(`]${open[1]}]`, at + open[0].length);
    if (close < 0) fail(file, 'unfinished long bracket');
    return close + open[1].length + 2;
  };
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    if (c === '-' && text[i + 1] === '-') {
      cut('code', i);
      let end = text[i + 2] === '[' ? longEnd(i + 2) : -1;
      if (end < 0) end = text.indexOf('\n', i) < 0 ? text.length : text.indexOf('\n', i);
      cut('comment', end);
      i = end;
    } else if (c === '[' && longEnd(i) > 0) {
      cut('code', i);
      i = longEnd(i);
      cut('string', i);
    } else if (c === '"' || c === "'") {
      cut('code', i);
      let j = i + 1;
      while (text[j] !== c) {
        if (j >= text.length || text[j] === '\n') fail(file, 'unfinished string');
        j += text[j] === '\\' ? 2 : 1;
      }
      i = j + 1;
      cut('string', i);
    } else {
      i++;
    }
  }
  cut('code', text.length);
  return pieces;
}

const WORD = /[A-Za-z0-9_]/;
// Two characters that would read as one token (or start a comment or a long string) once joined.
const JOINED = new Set(['--', '..', '[[', '[=', '==', '~=', '<=', '>=']);
function needsSpace(before, after) {
  if (before === undefined || before === '\n') return false;
  if (WORD.test(before) && WORD.test(after)) return true;
  return JOINED.has(before + after) || (before === '.' && /\d/.test(after)) || (/\d/.test(before) && after === '.');
}

/** `text` without comments and with only the spaces Lua needs, line for line. */
export function minify(text, file) {
  let out = '';
  let space = false;
  const put = (piece) => {
    if (space && needsSpace(out.at(-1), piece[0])) out += ' ';
    space = false;
    out += piece;
  };
  for (const { kind, text: piece } of piecesOf(text, file)) {
    if (kind === 'string') {
      put(piece);
    } else if (kind === 'comment') {
      const newlines = piece.split('\n').length - 1;
      out += '\n'.repeat(newlines);
      space = newlines === 0;
    } else {
      for (const c of piece) {
        if (c === '\n') {
          out += '\n';
          space = false;
        } else if (c === ' ' || c === '\t' || c === '\r') {
          space = true;
        } else {
          put(c);
        }
      }
    }
  }
  return out;
}

/** Lua's tokens in `text`, strings as written, comments left out: minify must keep every one. */
export const tokensOf = (text, file) =>
  piecesOf(text, file).flatMap(({ kind, text: piece }) =>
    kind === 'string' ? [piece] : kind === 'comment' ? [] : piece.match(/[A-Za-z_]\w*|\d[\w.]*|\.\.\.|\.\.|[=~<>]=|\S/g) ?? [],
  );

/** `text` with comments and strings blanked (newlines kept): what checks read. */
export const codeOf = (text, file) =>
  piecesOf(text, file)
    .map(({ kind, text: piece }) => (kind === 'code' ? piece : kind === 'string' ? "''" : piece.replace(/[^\n]/g, '')))
    .join('');
