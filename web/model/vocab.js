// Text ↔ token ids for a character-level vocabulary: one id per Unicode code point (so a
// character outside the BMP is one token, as Python's str iterates it), id 0 the poem start,
// id 1 the line break.
import { LINE_BREAK, POEM_START } from './checkpoint.js';

function describeChar(ch) {
  const cp = ch.codePointAt(0).toString(16).toUpperCase().padStart(4, '0');
  return `${JSON.stringify(ch)} (U+${cp})`;
}

export function createVocabulary(vocab) {
  const index = new Map(vocab.map((t, i) => [t, i]));
  index.delete(POEM_START); // a marker, not text: '<s>' typed by a user is three unknown characters

  /** Int32Array of ids (no poem start); RangeError naming every character not in the vocabulary. */
  function encode(text) {
    if (typeof text !== 'string') throw new TypeError(`encode: text must be a string, got ${typeof text}`);
    const chars = Array.from(text);
    const ids = new Int32Array(chars.length);
    const unknown = new Set();
    chars.forEach((ch, i) => {
      const id = index.get(ch);
      if (id === undefined) unknown.add(ch);
      else ids[i] = id;
    });
    if (unknown.size) {
      throw new RangeError(
        `encode: ${unknown.size === 1 ? 'a character is' : `${unknown.size} characters are`} not in the model's vocabulary: ${[...unknown].map(describeChar).join(', ')}`,
      );
    }
    return ids;
  }

  function checkId(fn, id) {
    if (!Number.isInteger(id) || id < 0 || id >= vocab.length) {
      throw new RangeError(`${fn}: token ids are integers 0 … ${vocab.length - 1}, got ${id}`);
    }
  }

  /** The text of ids; the poem start is rendered as `poemStart` ('' by default: it only marks where a poem begins). */
  function decode(ids, { poemStart = '' } = {}) {
    if (ids === null || typeof ids !== 'object' || typeof ids.length !== 'number') {
      throw new TypeError(
        `decode: ids must be an array or typed array of token ids, got ${ids === null ? 'null' : typeof ids}`,
      );
    }
    let s = '';
    for (const id of Array.from(ids)) {
      checkId('decode', id);
      s += id === 0 ? poemStart : vocab[id];
    }
    return s;
  }

  /** A token's own string: '<s>', '\n' or its character (labels for charts and lists). */
  function tokenText(id) {
    checkId('tokenText', id);
    return vocab[id];
  }

  return { encode, decode, tokenText };
}
