// The next token from a row of logits: the package's sampler (the one model.generate uses), given
// only the top-k candidates when there is a top-k. The sampler sorts every candidate before it keeps
// the k best, which at this vocabulary (2,501) costs more than the model's forward; given the k best
// alone (every logit tied with the k-th included, in id order), it keeps the same set, sums their
// weights in the same order and walks them with the same draw, so it picks the same token, bit for
// bit, as it would from the whole row.
import { createSampler } from '../../dist/sampling.mjs';

/** The k-th largest logit above −∞ (NaN skipped, as the sampler skips it); the smallest one when
 * there are fewer than k; null when there is none. */
function kthLargest(logits, k) {
  const top = []; // falling
  for (let i = 0; i < logits.length; i++) {
    const x = logits[i];
    if (!(x > -Infinity)) continue;
    if (top.length === k) {
      if (x <= top[k - 1]) continue;
      top.pop();
    }
    let at = top.length;
    while (at > 0 && x > top[at - 1]) at--;
    top.splice(at, 0, x);
  }
  return top.length ? top[top.length - 1] : null;
}

/**
 * createChooser({ temperature, topK, seed }) → choose(logits) → a token id, exactly as
 * createSampler({ temperature, topK, seed }) would choose it from the same row (its checks too).
 */
export function createChooser({ temperature = 0, topK = 0, seed } = {}) {
  const next = createSampler({ temperature, topK, seed });
  if (temperature === 0 || topK === 0) return next;
  return function choose(logits) {
    // anything but a row of numbers goes to the sampler whole, which says what is wrong with it
    if (!(logits instanceof Float32Array || logits instanceof Float64Array || Array.isArray(logits)))
      return next(logits);
    const kth = kthLargest(logits, topK);
    if (kth === null) return next(logits); // nothing to draw from: the sampler's own answer (greedy)
    const ids = [];
    for (let i = 0; i < logits.length; i++) if (logits[i] > -Infinity && logits[i] >= kth) ids.push(i);
    // the candidates' logits exactly as they are (float32 stays float32, a number stays a number)
    const row = logits instanceof Float32Array ? new Float32Array(ids.length) : new Float64Array(ids.length);
    ids.forEach((id, i) => (row[i] = logits[id]));
    return ids[next(row)];
  };
}
