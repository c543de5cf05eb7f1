// Choosing the next token from logits: the most likely tokens with their probabilities, and one
// draw (greedy, with a temperature, from the top k). Probabilities are computed in float64.

function checkLogits(fn, logits) {
  if (!(logits instanceof Float32Array || logits instanceof Float64Array || Array.isArray(logits))) {
    throw new TypeError(
      `${fn}: logits must be a Float32Array (session.feed(…).logits), got ${logits === null ? 'null' : typeof logits}`,
    );
  }
  if (logits.length === 0) throw new RangeError(`${fn}: logits is empty`);
}

function checkTemperature(fn, temperature, allowZero) {
  const ok =
    typeof temperature === 'number' && Number.isFinite(temperature) && (allowZero ? temperature >= 0 : temperature > 0);
  if (!ok)
    throw new RangeError(
      `${fn}: temperature must be a finite number ${allowZero ? '≥ 0 (0 = greedy)' : '> 0'}, got ${temperature}`,
    );
}

/** RangeError unless temperature ≥ 0 (0 = greedy) and topK an integer ≥ 0 (0 = every token). */
export function checkSampling(fn, { temperature, topK }) {
  checkTemperature(fn, temperature, true);
  if (!Number.isInteger(topK) || topK < 0)
    throw new RangeError(`${fn}: topK must be an integer ≥ 0 (0 = every token), got ${topK}`);
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

/** exp(logits[id] / temperature − max) for each id, and their sum (the softmax before dividing). */
function expShifted(logits, ids, temperature) {
  let max = -Infinity;
  for (const id of ids) max = Math.max(max, logits[id] / temperature);
  const e = new Float64Array(ids.length);
  let sum = 0;
  for (let i = 0; i < ids.length; i++) {
    e[i] = Math.exp(logits[ids[i]] / temperature - max);
    sum += e[i];
  }
  return { e, sum, max };
}

const allIds = (logits) => Array.from(logits.keys());

/**
 * The k most likely tokens: [{ id, text, prob }] by falling probability, prob from
 * softmax(logits / temperature) over the whole vocabulary. text is vocab[id] when a vocabulary is
 * given (model.topTokens passes its own), else null.
 */
export function topTokens(logits, k, temperature = 1, vocab = null) {
  checkLogits('topTokens', logits);
  if (!Number.isInteger(k) || k < 1) throw new RangeError(`topTokens: k must be a positive integer, got ${k}`);
  checkTemperature('topTokens', temperature, false);
  const { sum, max } = expShifted(logits, allIds(logits), temperature);
  return topIds(logits, Math.min(k, logits.length)).map((id) => ({
    id,
    text: vocab ? vocab[id] : null,
    prob: Math.exp(logits[id] / temperature - max) / sum,
  }));
}

/**
 * One token id: the argmax when temperature is 0 (lowest id on a tie), otherwise a draw from
 * softmax(logits / temperature) restricted to the topK most likely tokens (all when topK is 0),
 * using random() ∈ [0, 1) (ids in falling logit order with topK, in id order without).
 */
export function sampleToken(logits, { temperature = 0, topK = 0, random = Math.random } = {}) {
  checkLogits('sampleToken', logits);
  checkSampling('sampleToken', { temperature, topK });
  if (temperature === 0) {
    let best = 0;
    for (let i = 1; i < logits.length; i++) if (logits[i] > logits[best]) best = i;
    return best;
  }
  if (typeof random !== 'function')
    throw new TypeError(`sampleToken: random must be a function returning a number in [0, 1), got ${typeof random}`);
  const ids = topK > 0 && topK < logits.length ? topIds(logits, topK) : allIds(logits);
  const { e, sum } = expShifted(logits, ids, temperature);
  const r = random();
  if (!(typeof r === 'number' && r >= 0 && r < 1))
    throw new RangeError(`sampleToken: random() must return a number in [0, 1), got ${r}`);
  const target = r * sum;
  let cumulative = 0;
  for (let i = 0; i < ids.length; i++) {
    cumulative += e[i];
    if (target < cumulative) return ids[i];
  }
  return ids[ids.length - 1]; // r just below 1 and a sum rounded below it
}
