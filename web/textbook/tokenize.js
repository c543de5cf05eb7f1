// Turns a sentence into tokens, whitespace dropped.
//
//   'char' — one token per character (a user-perceived character: 我, 愛, A, I; an emoji
//            with modifiers stays one token)
//   'word' — words and punctuation marks, split by the browser's word segmenter
//            (Intl.Segmenter, which also splits CJK text into dictionary words);
//            a plain regular expression where it is missing.

export const MODES = ['char', 'word'];

const hasSegmenter = typeof Intl !== 'undefined' && typeof Intl.Segmenter === 'function';
const isSpace = (s) => /^\s*$/u.test(s);

function segments(text, granularity) {
  if (hasSegmenter) {
    return Array.from(new Intl.Segmenter(undefined, { granularity }).segment(text), (s) => s.segment);
  }
  if (granularity === 'grapheme') return Array.from(text);
  return text.match(/[\p{L}\p{N}_'’-]+|[^\s\p{L}\p{N}]/gu) ?? [];
}

/**
 * @param {string} text
 * @param {'char' | 'word'} [mode]
 * @returns {string[]}
 */
export function tokenize(text, mode = 'char') {
  if (!MODES.includes(mode)) throw new RangeError(`tokenize: mode must be 'char' or 'word', got ${mode}`);
  const parts = segments(String(text), mode === 'char' ? 'grapheme' : 'word');
  return parts.map((s) => s.trim()).filter((s) => !isSpace(s));
}
