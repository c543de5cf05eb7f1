// The most likely next tokens with their probabilities, as the page lists them (the draw itself is
// the package's sampler, see generate.js). Probabilities are computed in float64.

function checkLogits(fn, logits) {
  if (!(logits instanceof Float32Array || logits instanceof Float64Array || Array.isArray(logits))) {
    throw new TypeError(
      `${fn}: logits must be a Float32Array (session.feed(…).logits), got ${logits === null ? 'null' : typeof logits}`,
    );
  }
  if (logits.length === 0) throw new RangeError(`${fn}: logits is empty`);
}

function checkTemperature(fn, temperature) {
  if (!(typeof temperature === 'number' && Number.isFinite(temperature) && temperature > 0))
    throw new RangeError(`${fn}: temperature must be a finite number > 0, got ${temperature}`);
}

/** The ids of the k largest logits, by falling logit (ties: lower id first). */
function topIds(logits, k) {
  const before = (a, b) => logits[a] > logits[b] || (logits[a] === logits[b] && a < b);
  if (k > 32)
    return Array.from(logits.keys())
      .sort((a, b) => (before(a, b) ? -1 : 1))
      .slice(0, k);
  // A few from thousands (every generated token): insertion into a short sorted list, no full sort.
  const top = [];
  for (let id = 0; id < logits.length; id++) {
    if (top.length === k) {
      if (!before(id, top[k - 1])) continue;
      top.pop();
    }
    let at = top.length;
    while (at > 0 && before(id, top[at - 1])) at--;
    top.splice(at, 0, id);
  }
  return top;
}

/** The largest logits[i] / temperature and Σ exp(logits[i] / temperature − that): the softmax's scale. */
function softmaxScale(logits, temperature) {
  let max = -Infinity;
  for (let i = 0; i < logits.length; i++) max = Math.max(max, logits[i] / temperature);
  let sum = 0;
  for (let i = 0; i < logits.length; i++) sum += Math.exp(logits[i] / temperature - max);
  return { sum, max };
}

/**
 * The k most likely tokens: [{ id, text, prob }] by falling probability, prob from
 * softmax(logits / temperature) over the whole vocabulary. text is vocab[id] when a vocabulary is
 * given (model.topTokens passes its own), else null.
 */
export function topTokens(logits, k, temperature = 1, vocab = null) {
  checkLogits('topTokens', logits);
  if (!Number.isInteger(k) || k < 1) throw new RangeError(`topTokens: k must be a positive integer, got ${k}`);
  checkTemperature('topTokens', temperature);
  const { sum, max } = softmaxScale(logits, temperature);
  return topIds(logits, Math.min(k, logits.length)).map((id) => ({
    id,
    text: vocab ? vocab[id] : null,
    prob: Math.exp(logits[id] / temperature - max) / sum,
  }));
}
