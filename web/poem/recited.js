// "Recited from the anthology": which stretches of the model's output are verse of the Three
// Hundred Tang Poems. models/tang-poems/recited.json holds a hash of every verse segment of the
// anthology (a run of characters between punctuation marks, at least minLength long; the corpus
// itself stays out of the package, see recited.py); a generated segment with a hash in that set is
// a line the model recites.
import { hashString } from '../shared/random.js';

// A segment is a run of letters (CJK ideographs are letters): punctuation, line breaks and the
// poem start end it, as recited.py's str.isalpha() does.
const LETTER = /^\p{L}$/u;

/** The set of hashes of recited.json; a TypeError names what is wrong. */
export function readRecited(doc) {
  if (!doc || doc.hash !== 'fnv1a32-utf16' || typeof doc.hashes !== 'string' || !Number.isInteger(doc.minLength))
    throw new TypeError('recited.json: expected { hash: "fnv1a32-utf16", minLength, hashes: base64 }');
  const bytes = Uint8Array.from(atob(doc.hashes), (c) => c.charCodeAt(0));
  const view = new DataView(bytes.buffer);
  const hashes = new Set();
  for (let k = 0; k + 4 <= bytes.length; k += 4) hashes.add(view.getUint32(k, true));
  return { hashes, minLength: doc.minLength };
}

/**
 * The recited segments of a run: [{ start, end, text }] (token indices, end exclusive), each holding
 * at least one generated token (promptLength and on).
 */
export function recitedSegments(texts, promptLength, { hashes, minLength }) {
  const out = [];
  let start = -1;
  const close = (end) => {
    if (start < 0) return;
    const text = texts.slice(start, end).join('');
    if (end - start >= minLength && end > promptLength && hashes.has(hashString(text))) out.push({ start, end, text });
    start = -1;
  };
  texts.forEach((t, i) => {
    if (LETTER.test(t)) {
      if (start < 0) start = i;
    } else {
      close(i);
    }
  });
  close(texts.length);
  return out;
}
