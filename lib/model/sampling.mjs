// The next token from a row of logits: greedy (the first maximal logit) or sampled after
// temperature, top-k and top-p (transformers' generate order: temperature, then top-k, then top-p),
// from a seeded generator so a seed reproduces the same tokens on any engine. Plain JavaScript, in
// time linear in the vocabulary (ranking.mjs orders the candidates without a comparison sort).
//
// NaN logits count as -Infinity (never picked unless nothing else is there). A row with no finite
// logit, or temperature 0, is greedy.
import { mulberry32 } from '../random.mjs';
import { describe, typedArrayName } from '../values.mjs';
import { atLeast, candidates, kthLargest, ranked } from './ranking.mjs';

const FN = 'sampling';

function logitRow(logits) {
  const typed = typedArrayName(logits);
  if (!(typed === 'Float32Array' || typed === 'Float16Array' || typed === 'Float64Array' || Array.isArray(logits))) {
    throw new TypeError(
      `${FN}: logits must be a Float32Array, a Float16Array, a Float64Array or an array of numbers, got ${describe(logits)}`,
    );
  }
  if (logits.length === 0) throw new RangeError(`${FN}: logits is empty`);
  return logits;
}

/** The index of the first maximal logit (NaN skipped; index 0 when every entry is NaN). */
export function greedy(logits) {
  const row = logitRow(logits);
  let best = 0;
  let max = -Infinity;
  for (let i = 0; i < row.length; i++) {
    if (row[i] > max) {
      max = row[i];
      best = i;
    }
  }
  return best;
}

function check(value, name, ok, expected) {
  if (typeof value !== 'number') throw new TypeError(`${FN}: ${name} must be a number, got ${describe(value)}`);
  if (!ok(value)) throw new RangeError(`${FN}: ${name} must be ${expected}, got ${value}`);
  return value;
}

/**
 * A sampler: `next(logits)` → a token id. Options as the contract's generate: temperature (0 =
 * greedy), topK (0 = all), topP (1 = all), seed (an integer; without one, a random seed).
 */
export function createSampler({ temperature = 0, topK = 0, topP = 1, seed } = {}) {
  check(temperature, 'temperature', (t) => t >= 0 && Number.isFinite(t), 'a finite number ≥ 0');
  check(topK, 'topK', (k) => Number.isSafeInteger(k) && k >= 0, 'an integer ≥ 0');
  check(topP, 'topP', (p) => p > 0 && p <= 1, 'in (0, 1]');
  if (seed !== undefined) check(seed, 'seed', Number.isSafeInteger, 'an integer');
  const random = mulberry32(seed ?? Math.floor(Math.random() * 2 ** 32));

  return function next(logits) {
    const row = logitRow(logits);
    if (temperature === 0) return greedy(row);
    let ids = candidates(row);
    if (ids.length === 0) return greedy(row);
    // top-k keeps every id tied with the k-th logit, as transformers' TopKLogitsWarper does: found by
    // selection, so only the kept ids are ordered.
    if (topK > 0 && topK < ids.length) {
      const kth = kthLargest(row, ids, topK);
      ids = atLeast(row, ids, kth);
    }
    // By descending logit, ties by ascending id: one order on every engine. The sums and the walk
    // below go in this order (their rounding, hence the token a seed gives, depends on it).
    const order = ranked(row, ids);
    const n = order.length;
    // Softmax of logits / temperature in float64, less the largest (so exp never overflows); +Infinity
    // logits share all the probability.
    const max = row[order[0]] / temperature;
    const weights = new Float64Array(n);
    for (let i = 0; i < n; i++) {
      const x = row[order[i]];
      weights[i] = max === Infinity ? Number(x === Infinity) : Math.exp(x / temperature - max);
    }
    // top-p: the shortest prefix whose probability reaches topP (at least one token).
    let keep = n;
    if (topP < 1) {
      let total = 0;
      for (let i = 0; i < n; i++) total += weights[i];
      let cumulative = 0;
      for (let i = 0; i < n; i++) {
        cumulative += weights[i] / total;
        if (cumulative >= topP) {
          keep = i + 1;
          break;
        }
      }
    }
    let kept = 0;
    for (let i = 0; i < keep; i++) kept += weights[i];
    let u = random() * kept;
    for (let i = 0; i < keep; i++) {
      u -= weights[i];
      if (u < 0) return order[i];
    }
    return order[keep - 1]; // u landed on the rounding of the sum
  };
}
